// SPDX-License-Identifier: GPL-3.0-or-later
// Launch files read back: hand-written scripts and configs in each framework's own layout
// (tests/data/launch/files) give the plans they state; the TOML subset reader reads what it
// claims and names what it refuses; hostile files (truncated, binary, huge, wrong types, absurd
// sizes) get named errors with their line, never a crash or a hang.
#include "core/error.h"
#include "core/launch_args.h"
#include "core/launch_config.h"
#include "core/launch_import.h"
#include "core/scenario_io.h"
#include "core/toml.h"

#include <QTemporaryDir>
#include <QTest>

#include <cstring>
#include <fstream>
#include <iterator>

using namespace paralens;

namespace {

const std::string kFiles = PARALENS_SOURCE_DIR "/tests/data/launch/files/";

// A Megatron-LM launch of a Llama-3-8B-shaped model on one node of 8 GPUs.
constexpr const char* kLlamaTorchrun =
    "torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
    "--num-attention-heads 32 --ffn-hidden-size 14336 --seq-length 4096 --micro-batch-size 1 "
    "--global-batch-size 8 --bf16";

QString errorOf(const std::string& text, const LaunchImportOptions& o = {},
                const SiblingReader& sibling = {})
{
    try {
        importLaunch(text, "f", o, PresetLibrary::builtin(), sibling);
    } catch (const InputError& e) {
        return QString::fromStdString(e.what());
    }
    return QString();
}

QString tomlError(const std::string& text)
{
    try {
        toml::parse(text, "t.toml");
    } catch (const InputError& e) {
        return QString::fromStdString(e.what());
    }
    return QString();
}

#define QVERIFY_CONTAINS(haystack, needle)                                                         \
    QVERIFY2((haystack).contains(needle),                                                          \
             qPrintable("'" + (haystack) + "' lacks '" + (needle) + "'"))

} // namespace

class TestLaunchImport : public QObject
{
    Q_OBJECT
private slots:
    // Megatron-LM's example layout: variables, arrays, comments, continuations. The plan is
    // the Llama 3 70B example's: 80 layers / pp 4 / 4 layers per virtual stage = 5 chunks,
    // 64 GPUs / (tp 8 · pp 4) = dp 2.
    void megatronExampleScript()
    {
        // No --vocab-size and Llama 2 70B has the same layers: the preset is asked for.
        try {
            importLaunchFile(kFiles + "megatron-llama3-70b.sh");
            QFAIL("an ambiguous shape was named");
        } catch (const InputError& e) {
            QVERIFY_CONTAINS(QString(e.what()), QString("llama2-70b, llama3-70b"));
        }
        const LaunchImport in =
            importLaunchFile(kFiles + "megatron-llama3-70b.sh", {"llama3-70b", ""});
        QVERIFY(in.framework == LaunchFramework::Megatron);
        const Scenario want = loadScenarioFile(
            PARALENS_SOURCE_DIR "/resources/examples/llama3-70b-64xh100.paralens.json");
        QVERIFY2(in.scenario == want, scenarioToText(in.scenario).c_str());
        bool ignored = false;
        for (const auto& n : in.notes)
            ignored |= n.find("--lr-decay-style") != std::string::npos;
        QVERIFY(ignored); // flags paralens does not model are listed, not silently dropped
    }

    // Megatron-DeepSpeed with the JSON beside it: 2 nodes × 8 = 16 GPUs / tp 2 = dp 8, and the
    // JSON agrees: 256 = 2 per GPU × 16 accumulation steps × 8 replicas.
    void megatronDeepSpeedScript()
    {
        const LaunchImport in = importLaunchFile(kFiles + "megatron-deepspeed-llama2-7b.sh");
        QVERIFY(in.framework == LaunchFramework::DeepSpeed);
        const Scenario& s = in.scenario;
        QCOMPARE(s.model_id, std::string("llama2-7b"));
        QCOMPARE(s.gpus, 16);
        QCOMPARE(s.parallel.tp, 2);
        QCOMPARE(s.parallel.pp, 1);
        QCOMPARE(s.parallel.dp, 8);
        QCOMPARE(s.parallel.zero, 1);
        QCOMPARE(s.training.micro_batch, 2);
        QCOMPARE(s.training.global_batch, 256);
        QVERIFY(s.training.framework == Framework::DeepSpeed);
        QVERIFY(s.training.overlap_grad_reduce);
        QVERIFY(s.training.recompute == Recompute::Selective);
    }

    // torchtitan's layout: flavor 8B is llama3-8b; FSDP over 8 (zero 3) × TP 2 = 16 GPUs.
    void torchtitanExampleToml()
    {
        const LaunchImport in = importLaunchFile(kFiles + "torchtitan-llama3-8b.toml");
        QVERIFY(in.framework == LaunchFramework::Torchtitan);
        const Scenario& s = in.scenario;
        QCOMPARE(s.model_id, std::string("llama3-8b"));
        QCOMPARE(s.gpus, 16);
        QCOMPARE(s.parallel.dp, 8);
        QCOMPARE(s.parallel.tp, 2);
        QVERIFY(s.parallel.sequence_parallel);
        QCOMPARE(s.parallel.zero, 3);
        QCOMPARE(s.training.micro_batch, 1);
        QCOMPARE(s.training.global_batch, 64);
        QCOMPARE(s.training.seq_len, 8192);
        QVERIFY(s.training.framework == Framework::FSDP);
        QVERIFY(s.training.cross_entropy == CrossEntropy::Default); // "loss" is compiled
    }

    // compile.components without "loss" leaves the cross entropy eager on the fp32 logits
    // (torchtitan components/loss.py build_cross_entropy_loss); the writer says so back.
    void torchtitanEagerLossIsComponentsWithoutLoss()
    {
        std::ifstream f(kFiles + "torchtitan-llama3-8b.toml");
        std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
        const std::string from = "enable = false\ncomponents = [\"model\", \"loss\"]";
        const auto at = text.find(from);
        QVERIFY(at != std::string::npos);
        text.replace(at, from.size(), "enable = true\ncomponents = [\"model\"]");
        const Scenario s = importLaunch(text, "t.toml").scenario;
        QVERIFY(s.training.compile);
        QVERIFY(s.training.cross_entropy == CrossEntropy::Eager);
        const std::string back = launchConfig(s, LaunchFramework::Torchtitan).files.front().text;
        QVERIFY2(back.find("components = [\"model\"]\n") != std::string::npos, back.c_str());
    }

    // optimizer.implementation (torchtitan 6e4988550, Feb 2025, default "fused") is
    // training.optimizer_impl; before it optimizer.fused = false meant foreach. The writer writes
    // it back.
    void torchtitanOptimizerImplementation()
    {
        std::ifstream f(kFiles + "torchtitan-llama3-8b.toml");
        const std::string text((std::istreambuf_iterator<char>(f)),
                               std::istreambuf_iterator<char>());
        const std::string from = "eps = 1e-8\n";
        QVERIFY(text.find(from) != std::string::npos);
        auto with = [&](const std::string& line) {
            std::string t = text;
            t.replace(t.find(from), from.size(), from + line + "\n");
            return importLaunch(t, "t.toml").scenario;
        };
        QVERIFY(importLaunch(text, "t.toml").scenario.training.optimizer_impl ==
                OptimizerImpl::Default);
        QVERIFY(with("implementation = \"fused\"").training.optimizer_impl ==
                OptimizerImpl::Default);
        const Scenario fe = with("implementation = \"foreach\"");
        QVERIFY(fe.training.optimizer_impl == OptimizerImpl::Foreach);
        QVERIFY(with("implementation = \"for-loop\"").training.optimizer_impl ==
                OptimizerImpl::ForLoop);
        QVERIFY(with("fused = false").training.optimizer_impl == OptimizerImpl::Foreach);
        QVERIFY(with("fused = true").training.optimizer_impl == OptimizerImpl::Default);
        try {
            (void)with("implementation = \"apex\"");
            QFAIL("an unknown implementation is accepted");
        } catch (const InputError& e) {
            QCOMPARE(e.field(), std::string("optimizer.implementation"));
            QVERIFY2(std::string(e.what()).find("'apex'") != std::string::npos, e.what());
        }
        const std::string back = launchConfig(fe, LaunchFramework::Torchtitan).files.front().text;
        QVERIFY2(back.find("implementation = \"foreach\"\n") != std::string::npos, back.c_str());
        Scenario loop = fe;
        loop.training.optimizer_impl = OptimizerImpl::ForLoop;
        QVERIFY(importLaunch(launchConfig(loop, LaunchFramework::Torchtitan).files.front().text,
                             "t.toml")
                    .scenario.training.optimizer_impl == OptimizerImpl::ForLoop);
        loop.training.optimizer_impl = OptimizerImpl::Default;
        QVERIFY(launchConfig(loop, LaunchFramework::Torchtitan)
                    .files.front()
                    .text.find("implementation = \"fused\"\n") != std::string::npos);
    }

    // DeepSeek-V3 (tp 2, pp 8, ep 16 on 256 GPUs) as each framework that can carry its MLA
    // writes it. The widths read back are DeepSeek-V3's config.json figures (q_lora_rank 1536,
    // kv_lora_rank 512, qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128). Without
    // the paralens header line, the scripts' shape alone (MLA included) names the preset.
    void deepseekV3FilesCarryLatentAttention()
    {
        for (const char* name :
             {"megatron-deepseek-v3.sh", "bridge-deepseek-v3.sh", "torchtitan-deepseek-v3.toml"}) {
            std::ifstream f(kFiles + name);
            std::string text((std::istreambuf_iterator<char>(f)), {});
            for (bool header : {true, false}) {
                if (!header) {
                    const auto at = text.find("# paralens: model=");
                    QVERIFY(at != std::string::npos);
                    text.erase(at, text.find('\n', at) - at + 1);
                }
                const LaunchImport in = importLaunch(text, name);
                const Scenario& s = in.scenario;
                QVERIFY2(s.model_id == "deepseek-v3", name);
                QCOMPARE(s.model.layers, 61);
                QCOMPARE(s.model.mla.q_lora_rank, std::int64_t(1536));
                QCOMPARE(s.model.mla.kv_lora_rank, std::int64_t(512));
                QCOMPARE(s.model.mla.qk_nope_head_dim, std::int64_t(128));
                QCOMPARE(s.model.mla.qk_rope_head_dim, std::int64_t(64));
                QCOMPARE(s.model.mla.v_head_dim, std::int64_t(128));
                QCOMPARE(s.gpus, 256);
                QCOMPARE(s.parallel.ep, 16);
                // Megatron-Bridge's H100 recipe recomputes MLA's up-projections and the dense
                // MLPs (scripts/performance run_script.py at fa0315ae2).
                if (std::strncmp(name, "torchtitan", 10) != 0)
                    QCOMPARE(s.training.recompute_modules,
                             std::uint8_t(kRecomputeMlaUpProj | kRecomputeMlp));
            }
        }
        // A Megatron script of that shape with its MLA flags removed is no longer DeepSeek-V3.
        std::ifstream f(kFiles + std::string("megatron-deepseek-v3.sh"));
        std::string text((std::istreambuf_iterator<char>(f)), {});
        text.erase(text.find("# paralens: model="),
                   text.find('\n', text.find("# paralens: model=")) -
                       text.find("# paralens: model=") + 1);
        const auto mla = text.find("--multi-latent-attention");
        QVERIFY(mla != std::string::npos);
        text.replace(mla, std::strlen("--multi-latent-attention"), "");
        const LaunchImport in = importLaunch(text, "no-mla.sh");
        QVERIFY(!in.scenario.model.isMla());
        QVERIFY(in.scenario.model_id != "deepseek-v3");
    }

    // A DeepSpeed JSON alone: 256 / (2 × 16) = 8 replicas; the model comes from --model.
    void deepspeedJsonAlone()
    {
        QVERIFY_CONTAINS(errorOf("{\"train_batch_size\": 8}"), QString("--model"));
        std::ifstream f(kFiles + "ds_config.json");
        const std::string json((std::istreambuf_iterator<char>(f)), {});
        const LaunchImport in = importLaunch(json, "ds.json", {"llama3-8b", "h200"});
        QCOMPARE(in.scenario.parallel.dp, 8);
        QCOMPARE(in.scenario.gpus, 8);
        QCOMPARE(in.scenario.hardware_id, std::string("h200"));
        QCOMPARE(in.scenario.parallel.zero, 1);
    }

    void tomlReadsWhatItClaims()
    {
        const toml::Value v = toml::parse("# comment\n"
                                          "title = \"x \\\"q\\\" \\u00e9\"  # trailing\n"
                                          "lit = 'C:\\path'\n"
                                          "[a.b]\n"
                                          "n = -1_000\n"
                                          "f = 2.5e-3\n"
                                          "t = true\n"
                                          "arr = [ [1, 2], [\"s\"],   # nested, over lines\n"
                                          "        ]\n"
                                          "inline = { k = 1, d.e = false }\n"
                                          "\"quoted key\" = 3\n",
                                          "t.toml");
        QCOMPARE(v.find("title")->str, std::string("x \"q\" \xc3\xa9"));
        QCOMPARE(v.find("lit")->str, std::string("C:\\path"));
        const toml::Value* b = v.find("a")->find("b");
        QCOMPARE(b->find("n")->integer, std::int64_t{-1000});
        QCOMPARE(b->find("f")->number, 2.5e-3);
        QVERIFY(b->find("t")->boolean);
        QCOMPARE(b->find("arr")->items.size(), std::size_t(2));
        QCOMPARE(b->find("arr")->items[0].items[1].integer, std::int64_t{2});
        QVERIFY(b->find("inline")->find("d")->find("e")->kind == toml::Value::Kind::Bool);
        QCOMPARE(b->find("quoted key")->integer, std::int64_t{3});
        QCOMPARE(b->find("n")->line, 5);
    }

    void tomlNamesWhatItRefuses()
    {
        const std::pair<const char*, const char*> cases[] = {
            {"[[steps]]\n", "t.toml:1: arrays of tables"},
            {"a = \"\"\"x\"\"\"\n", "multi-line strings"},
            {"\n\nd = 1979-05-27\n", "t.toml:3: dates and times"},
            {"h = 0xff\n", "hexadecimal"},
            {"x = inf\n", "inf and nan"},
            {"a = 1\na = 2\n", "t.toml:2: key 'a' is defined twice"},
            {"[t]\n[t]\n", "table [t] is defined twice"},
            {"s = \"open\n", "t.toml:1: unterminated string"},
            {"s = \"\\q\"\n", "unknown escape"},
            {"a = [1, 2\n", "unterminated array"},
            {"a = 1 b = 2\n", "one key = value a line"},
            {"n = 99999999999999999999\n", "does not fit in 64 bits"},
            {"n = 007\n", "leading zeros"},
            {"= 1\n", "expected a key"},
            {"a.b = 1\na.b.c = 2\n", "not a table"},
        };
        for (const auto& [text, want] : cases)
            QVERIFY_CONTAINS(tomlError(text), QString(want));
        // Nesting is bounded, not a stack overflow.
        QVERIFY_CONTAINS(tomlError("a = " + std::string(100000, '[')), QString("deeper than 64"));
    }

    void wrongTypesNameKeyAndLine()
    {
        QVERIFY_CONTAINS(errorOf("[model]\nname = \"llama3\"\nflavor = \"8B\"\n[parallelism]\n"
                                 "tensor_parallel_degree = \"8\"\n"),
                         QString("f:5: parallelism.tensor_parallel_degree: expected an integer, "
                                 "got a string"));
        QVERIFY_CONTAINS(errorOf("{\n  \"train_batch_size\": \"8\"\n}", {"llama3-8b", ""}),
                         QString("f:2:"));
        QVERIFY_CONTAINS(errorOf("--num-layers 32 --hidden-size x --num-attention-heads 8"),
                         QString("--hidden-size: 'x' is not an integer"));
        QVERIFY_CONTAINS(errorOf("[model]\nname = \"llama3\"\nflavor = \"1T\"\n"),
                         QString("flavor 1T is not one paralens knows"));
    }

    void absurdSizesAreBounded()
    {
        QVERIFY_CONTAINS(
            errorOf("torchrun --nnodes 1 pretrain_gpt.py\n\n"
                    "--tensor-model-parallel-size 99999999999 --seq-length 8 "
                    "--num-layers 2 --hidden-size 8 --num-attention-heads 2 "
                    "--ffn-hidden-size 8 --vocab-size 9"),
            QString("f:3: --tensor-model-parallel-size: 99999999999 is out of bounds"));
        QVERIFY_CONTAINS(
            errorOf("--nnodes 1000000 --nproc-per-node 1000000 --seq-length 8", {"llama3-8b", ""}),
            QString("exceed the bound"));
        // A layer pattern that would be a billion entries is refused before it is built.
        QVERIFY_CONTAINS(errorOf("--num-layers 4 --hidden-size 8 --num-attention-heads 2 "
                                 "--ffn-hidden-size 8 --vocab-size 9 --seq-length 8 "
                                 "--num-experts 4 --moe-layer-freq '[1]*1000000000'"),
                         QString("longer than the model's layers"));
        QVERIFY_CONTAINS(errorOf("--num-layers 4 --hidden-size 8 --num-attention-heads 2 "
                                 "--ffn-hidden-size 8 --vocab-size 9 --seq-length 8 "
                                 "--num-experts 4 --moe-layer-freq '[1,0,1,1]'"),
                         QString("irregular"));
    }

    void truncatedAndBinaryFilesAreNamed()
    {
        Scenario s = defaultScenario();
        // Every prefix of every framework's main file either reads or gives a named error.
        for (LaunchFramework f : kAllLaunchFrameworks) {
            const LaunchConfig c = launchConfig(s, f);
            const std::string& t = c.files.front().text;
            for (std::size_t n = 0; n < t.size(); n += 7) {
                try {
                    importLaunch(t.substr(0, n), "cut", {"llama3-70b", ""},
                                 PresetLibrary::builtin(),
                                 [](const std::string& name) -> std::string {
                                     throw InputError("", name + ": absent");
                                 });
                } catch (const InputError& e) {
                    QVERIFY(!std::string(e.what()).empty());
                }
            }
        }
        QVERIFY_CONTAINS(errorOf(std::string("--tp 1\n--x \0 y", 14)), QString("f:2: a NUL byte"));
        QVERIFY_CONTAINS(errorOf("\x01\x02\x03\xff"), QString("not a launch file"));
        QVERIFY_CONTAINS(errorOf("--seq-length 8 --lr 'open"), QString("unterminated ' quote"));
        QVERIFY_CONTAINS(errorOf("{\"train_batch_size\": 8,", {"llama3-8b", ""}),
                         QString("malformed JSON"));
    }

    // Megatron-Bridge overrides: a value of the wrong type, an absurd size, an unknown choice,
    // each named by its key and line.
    void bridgeOverridesNameWhatIsWrong()
    {
        const std::string head = "torchrun --nnodes 1 --nproc-per-node 8 "
                                 "scripts/training/run_recipe.py \\\n"
                                 "    --recipe llama3_8b_pretrain_config model.seq_length=4096 \\\n"
                                 "    ";
        const std::pair<const char*, const char*> cases[] = {
            {"model.tensor_model_parallel_size=eight",
             "f:3: model.tensor_model_parallel_size: 'eight' is not an integer"},
            {"model.sequence_parallel=maybe", "f:3: model.sequence_parallel: 'maybe' is not true"},
            {"model.tensor_model_parallel_size=99999999999",
             "model.tensor_model_parallel_size: 99999999999 is out of bounds"},
            {"model.num_layers=100000000 model.hidden_size=8 model.num_attention_heads=2",
             "model.num_layers: 100000000 is out of bounds"},
            {"model.cp_comm_type=ring", "model.cp_comm_type: 'ring' is not p2p, allgather or a2a"},
            {"model.attention_backend=flash3",
             "model.attention_backend: 'flash3' is not flash, fused, unfused, local or auto"},
            {"model.hidden_dropout=0x1p3z", "model.hidden_dropout: '0x1p3z' is not a number"},
            {"train.global_batch_size=-8", "train.global_batch_size: -8 is out of bounds"},
        };
        for (const auto& [tail, want] : cases)
            QVERIFY_CONTAINS(errorOf(head + tail), QString(want));
        QVERIFY(errorOf(head + "model.tensor_model_parallel_size=2").isEmpty());
    }

    // --attention-backend takes Megatron-Core's AttnBackend names only; another is named.
    void megatronAttentionBackendIsAnAttnBackend()
    {
        const std::string head = std::string(kLlamaTorchrun) + " --attention-backend ";
        const LaunchImportOptions o{"llama3-8b", ""};
        QVERIFY_CONTAINS(errorOf(head + "triton", o),
                         QString("--attention-backend: 'triton' is not flash, fused, unfused, "
                                 "local or auto"));
        for (const char* ok : {"flash", "fused", "unfused", "local", "auto"})
            QVERIFY2(errorOf(head + ok, o).isEmpty(), qPrintable(errorOf(head + ok, o)));
    }

    // Under --attention-backend auto, Transformer Engine's environment switches pick the kernel
    // (NeMo-Framework-Launcher 24.01-24.07 set NVTE_FUSED_ATTN=0: flash-attn); an explicit
    // backend wins over them, as Megatron-Core sets the switches from it.
    void megatronAttentionFromTransformerEngineEnvironment()
    {
        const std::string tail = kLlamaTorchrun;
        const LaunchImportOptions o{"llama3-8b", ""};
        const auto read = [&](const std::string& head, const std::string& flags = "") {
            return importLaunch(head + tail + flags, "f", o);
        };
        const LaunchImport flash = read("export NVTE_FUSED_ATTN=0\n");
        QVERIFY(flash.scenario.training.flash_attention);
        QVERIFY(flash.scenario.training.attention_kernel == AttentionKernel::Flash2);
        bool noted = false;
        for (const auto& n : flash.notes)
            noted = noted || n.find("NVTE_FUSED_ATTN=0 (line 1)") != std::string::npos;
        QVERIFY(noted);
        QVERIFY(read("NVTE_FLASH_ATTN=0 ").scenario.training.attention_kernel ==
                AttentionKernel::Fused);
        QVERIFY(!read("export NVTE_FLASH_ATTN=0 NVTE_FUSED_ATTN=0\n")
                     .scenario.training.flash_attention);
        // The last assignment counts; 1 leaves Transformer Engine's own choice.
        QVERIFY(read("export NVTE_FUSED_ATTN=0\nexport NVTE_FUSED_ATTN=1\n")
                    .scenario.training.attention_kernel == AttentionKernel::Default);
        QVERIFY(read("").scenario.training.attention_kernel == AttentionKernel::Default);
        QVERIFY(read("export NVTE_FUSED_ATTN=0\n", " --attention-backend fused")
                    .scenario.training.attention_kernel == AttentionKernel::Fused);
    }

    // JSON launch files (DeepSpeed): a key given twice and nesting a hundred thousand deep are
    // named errors (no silent last-one-wins, no stack overflow).
    void deepspeedJsonDuplicateAndDeepNesting()
    {
        QVERIFY_CONTAINS(
            errorOf("{\"train_batch_size\": 8, \"train_batch_size\": 16}", {"llama3-8b", ""}),
            QString("duplicate key 'train_batch_size'"));
        const std::string deep =
            "{\"zero_optimization\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
        QVERIFY_CONTAINS(errorOf(deep, {"llama3-8b", ""}),
                         QString("zero_optimization: expected an object, got an array"));
        QVERIFY_CONTAINS(errorOf(std::string("{\"train_batch_size\": 8\0}", 24), {"llama3-8b", ""}),
                         QString("f:1:23: malformed JSON"));
    }

    void hugeFileIsRefusedBySize()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("huge.sh").toStdString();
        {
            std::ofstream f(path);
            f << "--seq-length 8 " << std::string(2u << 20, ' ');
        }
        try {
            importLaunchFile(path);
            QFAIL("a 2 MiB file was read");
        } catch (const InputError& e) {
            QVERIFY_CONTAINS(QString(e.what()), QString("huge.sh"));
        }
    }

    void shellWordsAreSplitAsAShellWould()
    {
        const auto words = launch::splitWords(
            "A=1 B=\"two words\"\nrun --x $A --y \"${B}\" --z ${C:-3} \\\n  --w 'a b' # c\n", "s");
        std::vector<std::string> texts;
        for (const auto& w : words)
            texts.push_back(w.text);
        const std::vector<std::string> want{"A=1",       "B=two words", "run", "--x", "1",  "--y",
                                            "two words", "--z",         "3",   "--w", "a b"};
        QCOMPARE(texts, want);
        QCOMPARE(words.back().line, 3);
    }
};

QTEST_GUILESS_MAIN(TestLaunchImport)
#include "test_launch_import.moc"
