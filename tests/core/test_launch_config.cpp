// SPDX-License-Identifier: GPL-3.0-or-later
// Launch configurations: every argument and key name written is in the list taken from that
// framework's own definitions (tests/data/launch/*.txt), the figures of the Llama 3 70B
// example are the hand-computed ones, settings a framework lacks carry a named warning, and
// scenario -> launch config -> scenario is the identity for a sweep of plans each framework
// can express.
#include "core/error.h"
#include "core/launch_config.h"
#include "core/launch_import.h"
#include "core/scenario_io.h"
#include "core/validate.h"
#include "launch_test_support.h"

#include <nlohmann/json.hpp>

#include <tuple>

#include <QFile>
#include <QRegularExpression>
#include <QSet>
#include <QTest>

using namespace paralens;
using namespace paralens::testlaunch;

namespace {

Scenario example(const char* file)
{
    return loadScenarioFile(std::string(PARALENS_SOURCE_DIR "/resources/examples/") + file);
}

// The sweep: plans each framework can express (no warning), with the settings that map.
std::vector<std::pair<const char*, Scenario>> megatronPlans()
{
    std::vector<std::pair<const char*, Scenario>> out;
    out.push_back({"llama3-70b example", example("llama3-70b-64xh100.paralens.json")});
    out.push_back({"gpt3-175b example", example("gpt3-175b-1024xa100.paralens.json")});
    out.push_back({"mixtral example", example("mixtral-8x7b-32xh100.paralens.json")});
    {
        Scenario s = base("llama3-8b", 32, Framework::Megatron); // CP, FP8, full recompute
        s.parallel = {.tp = 2, .dp = 4, .cp = 4, .sequence_parallel = true, .zero = 1};
        s.parallel.cp_comm = CpComm::AllToAll;
        s.parallel.tp_comm_overlap = true;
        s.training.seq_len = 16384;
        s.training.precision = Precision::FP8;
        s.training.recompute = Recompute::Full;
        out.push_back({"llama3-8b cp4 fp8", s});
    }
    for (int zero : {0, 2, 3}) { // Megatron-FSDP and plain DDP
        Scenario s = base("llama3-8b", 16, Framework::Megatron);
        s.parallel.zero = zero;
        s.parallel.shard_group = zero == 2 ? 8 : 0;
        s.training.recompute = Recompute::None;
        s.training.overlap_grad_reduce = zero != 0;
        s.training.dropout = zero == 3;
        out.push_back({zero == 0   ? "llama3-8b ddp"
                       : zero == 2 ? "llama3-8b zero2 hsdp"
                                   : "llama3-8b zero3",
                       s});
    }
    {
        Scenario s = base("deepseek-v3", 256, Framework::Megatron); // MoE, EP, ETP, uneven PP
        s.parallel = {.tp = 2, .pp = 8, .dp = 16, .ep = 16, .sequence_parallel = true, .zero = 1};
        s.parallel.first_stage_layers = 7;
        s.parallel.last_stage_layers = 6;
        s.parallel.expert_tp = 1;
        s.parallel.moe_dispatcher = MoeDispatcher::DeepEP;
        s.parallel.moe_overlap = true;
        s.training.moe_load_imbalance = 1.0;
        s.training.global_batch = 1024;
        s.training.precision = Precision::FP8;
        out.push_back({"deepseek-v3 ep16 etp1 uneven", s});
    }
    {
        Scenario s = base("llama3-8b", 8, Framework::Megatron); // offload, SGD, no flash
        s.parallel.zero = 1;
        s.parallel.offload_optimizer = true;
        s.training.optimizer = Optimizer::SGD;
        s.training.flash_attention = false;
        s.training.dropout = false;
        s.parallel.moe_dispatcher = MoeDispatcher::Default;
        out.push_back({"llama3-8b offload sgd", s});
    }
    // The flash kernels Megatron-Core's AttnBackend names: flash and fused.
    for (AttentionKernel k : {AttentionKernel::Flash2, AttentionKernel::Fused}) {
        Scenario s = base("llama3-8b", 8, Framework::Megatron);
        s.parallel.zero = 1;
        s.training.attention_kernel = k;
        out.push_back({k == AttentionKernel::Flash2 ? "llama3-8b flash2" : "llama3-8b fused", s});
    }
    return out;
}

std::vector<std::pair<const char*, Scenario>> torchtitanPlans()
{
    std::vector<std::pair<const char*, Scenario>> out;
    {
        Scenario s = base("llama3-70b", 64, Framework::FSDP); // 3D: FSDP + TP + interleaved PP
        s.parallel = {.tp = 8,
                      .pp = 4,
                      .dp = 2,
                      .sequence_parallel = true,
                      .virtual_stages = 2,
                      .schedule = Schedule::Interleaved1F1B,
                      .zero = 3,
                      .tp_comm_overlap = true};
        s.training.compile = true;
        s.training.precision = Precision::FP8;
        out.push_back({"llama3-70b tp8 pp4 v2 fsdp fp8", s});
    }
    {
        Scenario s = base("llama3-8b", 64, Framework::FSDP); // Float8 rowwise + AsyncTP
        s.parallel = {
            .tp = 8, .dp = 8, .sequence_parallel = true, .zero = 3, .tp_comm_overlap = true};
        s.training.compile = true;
        s.training.precision = Precision::FP8;
        s.training.fp8_recipe = Fp8Recipe::Rowwise;
        out.push_back({"llama3-8b tp8 fp8 rowwise asynctp", s});
    }
    {
        Scenario s = base("llama3-8b", 16, Framework::FSDP); // ZeRO-2 with CP
        s.parallel = {.dp = 8, .cp = 2, .zero = 2};
        s.parallel.cp_comm = CpComm::AllToAll;
        s.training.recompute = Recompute::Full;
        out.push_back({"llama3-8b zero2 cp2", s});
    }
    {
        Scenario s = base("llama3-8b", 16, Framework::FSDP); // HSDP, reshard always, offload
        s.parallel = {.dp = 16, .zero = 3, .shard_group = 8, .offload_optimizer = false};
        s.training.fsdp_reshard_after_forward = ReshardAfterForward::Always;
        s.training.recompute = Recompute::None;
        out.push_back({"llama3-8b hsdp", s});
    }
    {
        Scenario s = base("llama3-405b", 128, Framework::FSDP); // uneven explicit stages, ZB-V
        s.parallel = {.tp = 8,
                      .pp = 8,
                      .dp = 2,
                      .sequence_parallel = true,
                      .virtual_stages = 2,
                      .schedule = Schedule::ZBV,
                      .zero = 3};
        s.parallel.first_stage_layers = 14;
        s.parallel.last_stage_layers = 14;
        s.training.global_batch = 64;
        out.push_back({"llama3-405b zbv explicit stages", s});
    }
    {
        Scenario s = base("deepseek-v3", 128, Framework::FSDP); // MoE: EP, etp 1, DualPipeV
        s.parallel = {.tp = 2,
                      .pp = 4,
                      .dp = 16,
                      .ep = 8,
                      .sequence_parallel = true,
                      .virtual_stages = 2,
                      .schedule = Schedule::DualPipeV,
                      .zero = 3};
        s.parallel.expert_tp = 1;
        s.parallel.moe_dispatcher = MoeDispatcher::DeepEP;
        s.training.moe_load_imbalance = 1.0;
        s.training.global_batch = 512;
        out.push_back({"deepseek-v3 ep8 dualpipev", s});
    }
    return out;
}

std::vector<std::pair<const char*, Scenario>> deepspeedPlans()
{
    std::vector<std::pair<const char*, Scenario>> out;
    {
        Scenario s = base("llama3-8b", 16, Framework::DeepSpeed); // ZeRO-1 + TP + 1F1B PP
        s.parallel = {.tp = 2, .pp = 4, .dp = 2, .sequence_parallel = true, .zero = 1};
        out.push_back({"llama3-8b zero1 tp2 pp4", s});
    }
    {
        Scenario s = base("llama3-8b", 16, Framework::DeepSpeed); // ZeRO-3, MiCS, offload
        s.parallel = {.dp = 16, .zero = 3, .shard_group = 8, .offload_optimizer = true};
        s.training.recompute = Recompute::Full;
        s.training.dropout = true;
        out.push_back({"llama3-8b zero3 mics offload", s});
    }
    {
        Scenario s = base("llama3-8b", 16, Framework::DeepSpeed); // ZeRO-2 with Ulysses CP
        s.parallel = {.dp = 4, .cp = 4, .zero = 2}; // cp_comm default: Ulysses all-to-all
        s.training.overlap_grad_reduce = false;
        s.training.seq_len = 32768;
        out.push_back({"llama3-8b zero2 ulysses", s});
    }
    {
        Scenario s = base("mixtral-8x7b", 32, Framework::DeepSpeed); // DeepSpeed-MoE
        s.parallel = {.tp = 2, .dp = 16, .ep = 8, .sequence_parallel = true, .zero = 1};
        out.push_back({"mixtral ep8 zero1", s});
    }
    return out;
}

std::vector<std::pair<const char*, Scenario>> bridgePlans()
{
    auto out = megatronPlans();
    Scenario s = base("mixtral-8x7b", 32, Framework::Megatron); // HybridEP, Bridge only
    s.parallel = {.tp = 2, .dp = 16, .ep = 8, .sequence_parallel = true, .zero = 1};
    s.parallel.moe_dispatcher = MoeDispatcher::HybridEP;
    out.push_back({"mixtral hybridep", s});
    return out;
}

std::vector<std::pair<const char*, Scenario>> plansFor(LaunchFramework f)
{
    switch (f) {
    case LaunchFramework::Megatron:
        return megatronPlans();
    case LaunchFramework::MegatronBridge:
        return bridgePlans();
    case LaunchFramework::Torchtitan:
        return torchtitanPlans();
    case LaunchFramework::DeepSpeed:
        return deepspeedPlans();
    }
    return {};
}

// Option words of a script, split at the entry script: those before it (the launcher's) and
// after it (the framework's). Comment lines are skipped.
void scriptOptions(const std::string& text, const QString& entry, QStringList& launcher,
                   QStringList& framework)
{
    bool started = false, after = false; // from the launcher's word on
    static const QRegularExpression word(QStringLiteral("\\S+"));
    for (const QString& line : QString::fromStdString(text).split('\n')) {
        if (line.trimmed().startsWith('#'))
            continue;
        auto it = word.globalMatch(line);
        while (it.hasNext()) {
            const QString w = it.next().captured();
            started = started || w == "torchrun" || w == "deepspeed";
            if (!started)
                continue;
            if (w.endsWith(entry))
                after = true;
            else if (w.startsWith('-') && w.size() > 1 && !w[1].isDigit())
                (after ? framework : launcher) << w;
            else if (after && w.contains('=') && !w.startsWith('-') && !w.startsWith('$'))
                framework << w; // a Hydra override, key=value
        }
    }
}

// TOML keys as section.key, read line by line (independently of core/toml.cpp).
QStringList tomlKeys(const std::string& text)
{
    QStringList keys;
    QString section;
    static const QRegularExpression header(QStringLiteral("^\\[([A-Za-z0-9_.]+)\\]\\s*$"));
    static const QRegularExpression key(QStringLiteral("^([A-Za-z0-9_]+)\\s*="));
    for (const QString& line : QString::fromStdString(text).split('\n')) {
        if (const auto m = header.match(line); m.hasMatch())
            section = m.captured(1);
        else if (const auto k = key.match(line); k.hasMatch())
            keys << section + "." + k.captured(1);
    }
    return keys;
}

void jsonLeaves(const nlohmann::json& j, const QString& path, QStringList& out)
{
    if (!j.is_object()) {
        out << path;
        return;
    }
    for (const auto& [k, v] : j.items())
        jsonLeaves(
            v, path.isEmpty() ? QString::fromStdString(k) : path + "." + QString::fromStdString(k),
            out);
}

} // namespace

class TestLaunchConfig : public QObject
{
    Q_OBJECT
private slots:
    void sweepScenariosAreRunnable()
    {
        for (LaunchFramework f : kAllLaunchFrameworks)
            for (const auto& [name, s] : plansFor(f)) {
                const auto errors = validate(s);
                QVERIFY2(errors.empty(), qPrintable(QString(name) + ": " +
                                                    QString::fromStdString(
                                                        errors.empty() ? "" : errors[0].message)));
            }
    }

    // Every option and key written is one the framework defines (the lists of tests/data/launch).
    void megatronNamesAreMegatronLmArguments()
    {
        const QSet<QString> megatron = nameList("megatron-lm.txt");
        const QSet<QString> torchrun = nameList("torchrun.txt");
        for (const auto& [name, s] : megatronPlans()) {
            QStringList launcher, args;
            scriptOptions(megatronLaunch(s).files[0].text, "pretrain_gpt.py", launcher, args);
            QVERIFY(args.size() > 20);
            for (const QString& a : args)
                QVERIFY2(megatron.contains(a), qPrintable(QString(name) + ": " + a));
            for (const QString& a : launcher)
                QVERIFY2(torchrun.contains(a), qPrintable(QString(name) + ": " + a));
        }
    }

    void bridgeNamesAreBridgeFields()
    {
        const QSet<QString> bridge = nameList("megatron-bridge.txt");
        const QSet<QString> torchrun = nameList("torchrun.txt");
        for (const auto& [name, s] : bridgePlans()) {
            const std::string text = bridgeLaunch(s).files[0].text;
            QStringList launcher, args;
            scriptOptions(text, "run_recipe.py", launcher, args);
            QVERIFY(args.size() > 30);
            for (const QString& a : launcher)
                QVERIFY2(torchrun.contains(a), qPrintable(QString(name) + ": " + a));
            for (int i = 0; i < args.size(); ++i) {
                const QString& a = args[i];
                if (a == "--recipe") {
                    QVERIFY(bridge.contains(a));
                    continue;
                }
                const QString key = a.section('=', 0, 0), value = a.section('=', 1);
                QVERIFY2(bridge.contains(key), qPrintable(QString(name) + ": " + key));
                if (key == "mixed_precision")
                    QVERIFY2(bridge.contains("recipe:" + value), qPrintable(value));
            }
            static const QRegularExpression recipe(QStringLiteral("--recipe (\\S+)"));
            const QString r = recipe.match(QString::fromStdString(text)).captured(1);
            QVERIFY2(bridge.contains("pretrain-recipe:" + r), qPrintable(r));
        }
    }

    void torchtitanNamesAreJobConfigFields()
    {
        const QSet<QString> titan = nameList("torchtitan.txt");
        for (const auto& [name, s] : torchtitanPlans()) {
            const QStringList keys = tomlKeys(torchtitanLaunch(s).files[0].text);
            QVERIFY(keys.size() > 20);
            for (const QString& k : keys)
                QVERIFY2(titan.contains(k), qPrintable(QString(name) + ": " + k));
        }
    }

    void deepspeedNamesAreConfigKeysAndArguments()
    {
        const QSet<QString> ds = nameList("deepspeed.txt");
        for (const auto& [name, s] : deepspeedPlans()) {
            const LaunchConfig c = deepspeedLaunch(s);
            QStringList leaves;
            jsonLeaves(nlohmann::json::parse(fileText(c, "ds_config.json")), {}, leaves);
            QVERIFY(leaves.size() > 8);
            for (const QString& k : leaves)
                QVERIFY2(ds.contains(k), qPrintable(QString(name) + ": " + k));
            QStringList launcher, args;
            scriptOptions(fileText(c, "launch.sh"), "pretrain_gpt.py", launcher, args);
            QVERIFY(args.size() > 15 && launcher.size() >= 3);
            for (const QString& a : launcher + args)
                QVERIFY2(ds.contains(a), qPrintable(QString(name) + ": " + a));
        }
    }

    // Llama 3 70B on 64 H100 (resources/examples): 8 nodes of 8; tp 8, pp 4 with 5 chunks,
    // dp 2; the model card's shape (80 layers, 8192 hidden, 64 heads, 8 KV heads, FFN 28672,
    // vocabulary 128256); m = 128 / (1 · 2) = 64 micro-batches per pipeline.
    void llama70bMegatronFigures()
    {
        const std::string t =
            megatronLaunch(example("llama3-70b-64xh100.paralens.json")).files[0].text;
        for (const char* want : {"--nnodes 8 --nproc-per-node 8",
                                 "--tensor-model-parallel-size 8 ",
                                 "--pipeline-model-parallel-size 4 ",
                                 "--num-virtual-stages-per-pipeline-rank 5 ",
                                 "--sequence-parallel ",
                                 "--use-distributed-optimizer ",
                                 "--num-layers 80 ",
                                 "--hidden-size 8192 ",
                                 "--num-attention-heads 64 ",
                                 "--group-query-attention ",
                                 "--num-query-groups 8 ",
                                 "--ffn-hidden-size 28672 ",
                                 "--swiglu ",
                                 "--untie-embeddings-and-output-weights ",
                                 "--micro-batch-size 1 ",
                                 "--global-batch-size 128 ",
                                 "--seq-length 8192 ",
                                 "--bf16 ",
                                 "--recompute-granularity selective ",
                                 "--vocab-size 128255 ",
                                 "--tokenizer-type NullTokenizer "})
            QVERIFY2(t.find(want) != std::string::npos, want);
        QVERIFY(t.find("--context-parallel-size") == std::string::npos); // cp 1: the default
        QVERIFY(t.find("WARNING") == std::string::npos);
    }

    void llama70bOtherFrameworkFigures()
    {
        Scenario s = example("llama3-70b-64xh100.paralens.json");
        const std::string toml = torchtitanLaunch(s).files[0].text;
        for (const char* want :
             {"tensor_parallel_degree = 8\n", "pipeline_parallel_degree = 4\n",
              "pipeline_parallel_schedule = \"Interleaved1F1B\"\n",
              "local_batch_size = 64\n", // with PP: the pipeline's 128 / 2 sequences a step
              "global_batch_size = 128\n", "seq_len = 8192\n", "flavor = \"70B\"\n",
              "data_parallel_shard_degree = 2\n", "--nnodes 8 --nproc-per-node 8"})
            QVERIFY2(toml.find(want) != std::string::npos, want);
        // 20 model parts (4 stages × 5 chunks) of 4 layers each, layers.0 to layers.79.
        int parts = 0;
        for (std::size_t at = 0; (at = toml.find("\n    [", at)) != std::string::npos; ++at)
            ++parts;
        QCOMPARE(parts, 20);
        QVERIFY(toml.find("\"layers.79\", \"norm\", \"output\"]") != std::string::npos);
        QVERIFY(toml.find("[\"tok_embeddings\", \"layers.0\", \"layers.1\", \"layers.2\", "
                          "\"layers.3\"]") != std::string::npos);
        // torchtitan has no ZeRO-1: named, and the scenario is modelled as Megatron.
        const LaunchConfig tt = torchtitanLaunch(s);
        QVERIFY(hasWarning(tt, "zero1_unsupported"));
        QVERIFY(hasWarning(tt, "framework_differs"));
        QVERIFY(tt.files[0].text.find("# WARNING zero1_unsupported: ") != std::string::npos);

        const LaunchConfig ds = deepspeedLaunch(s);
        const auto j = nlohmann::json::parse(fileText(ds, "ds_config.json"));
        QCOMPARE(j["train_batch_size"].get<int>(), 128);
        QCOMPARE(j["train_micro_batch_size_per_gpu"].get<int>(), 1);
        QCOMPARE(j["gradient_accumulation_steps"].get<int>(), 64); // 128 / (1 · dp 2)
        QCOMPARE(j["zero_optimization"]["stage"].get<int>(), 1);
        QCOMPARE(j["pipeline"]["stages"].get<int>(), 4);
        QVERIFY(fileText(ds, "launch.sh").find("deepspeed --num_nodes 8 --num_gpus 8") !=
                std::string::npos);
        QVERIFY(hasWarning(ds, "schedule_unsupported")); // interleaving: DeepSpeed has none

        const std::string br = bridgeLaunch(s).files[0].text;
        for (const char* want :
             {"--recipe llama3_70b_pretrain_config",
              "model.virtual_pipeline_model_parallel_size=5 ", "model.num_query_groups=8 ",
              "train.global_batch_size=128 ", "ddp.use_distributed_optimizer=true "})
            QVERIFY2(br.find(want) != std::string::npos, want);
    }

    // What a framework cannot express is named in the result, in the file and never dropped.
    void missingFeaturesAreNamedWarnings()
    {
        Scenario s = base("llama3-8b", 16, Framework::Megatron);
        s.parallel = {
            .pp = 4, .dp = 4, .virtual_stages = 2, .schedule = Schedule::DualPipeV, .zero = 1};
        const LaunchConfig m = megatronLaunch(s);
        QVERIFY2(hasWarning(m, "schedule_unsupported"), qPrintable(warningsOf(m)));
        QVERIFY(m.files[0].text.find("# WARNING schedule_unsupported:") != std::string::npos);

        Scenario d = base("llama3-8b", 16, Framework::DeepSpeed);
        d.parallel = {.pp = 2, .dp = 4, .cp = 2, .zero = 3};
        d.parallel.cp_comm = CpComm::P2P;
        d.training.precision = Precision::FP8;
        const LaunchConfig c = deepspeedLaunch(d);
        for (const char* id : {"zero_with_pipeline", "cp_comm_unsupported", "fp8_unsupported"}) {
            QVERIFY2(hasWarning(c, id), id);
            QVERIFY(fileText(c, "launch.sh").find(std::string("# WARNING ") + id) !=
                    std::string::npos);
        }
        Scenario t = base("gpt3-175b", 16, Framework::FSDP);
        t.parallel = {.pp = 2, .dp = 8, .schedule = Schedule::ZBH1, .zero = 1};
        t.training.optimizer = Optimizer::SGD;
        const LaunchConfig tt = torchtitanLaunch(t);
        for (const char* id : {"schedule_unsupported", "zero1_unsupported", "optimizer_unsupported",
                               "no_torchtitan_flavor"})
            QVERIFY2(hasWarning(tt, id), id);
    }

    // FSDP1's backward_prefetch has no flag in torchtitan (FSDP2 prefetches one block in
    // backward, as backward_pre does) nor in the Megatron family: named, not written.
    // FP16 is written as each framework spells it (Megatron-LM --fp16, DeepSpeed's fp16
    // section with dynamic loss scaling, Megatron-Bridge's fp16_mixed) and read back as fp16;
    // torchtitan's mixed_precision_param has no float16, so it is named.
    void fp16IsWrittenAndReadBack()
    {
        for (Framework f : {Framework::Megatron, Framework::DeepSpeed}) {
            Scenario s = base("llama3-8b", 8, f);
            s.training.precision = Precision::FP16;
            const LaunchConfig c =
                f == Framework::Megatron ? megatronLaunch(s) : deepspeedLaunch(s);
            const LaunchImport back = roundTrip(c);
            QVERIFY2(back.scenario.training.precision == Precision::FP16,
                     qPrintable(describe(s, back.scenario)));
        }
        Scenario s = base("llama3-8b", 8, Framework::DeepSpeed);
        s.training.precision = Precision::FP16;
        const auto ds = nlohmann::json::parse(fileText(deepspeedLaunch(s), "ds_config.json"));
        QVERIFY(ds["fp16"]["enabled"].get<bool>());
        QCOMPARE(ds["fp16"]["loss_scale"].get<int>(), 0);
        QVERIFY(!ds.contains("bf16"));
        s.training.framework = Framework::Megatron;
        QVERIFY(bridgeLaunch(s).files[0].text.find("fp16_mixed") != std::string::npos);
        QVERIFY(megatronLaunch(s).files[0].text.find("--bf16") == std::string::npos);
        Scenario t = base("llama3-8b", 8, Framework::FSDP);
        t.parallel = {.dp = 8, .zero = 3};
        QVERIFY(!hasWarning(torchtitanLaunch(t), "fp16_not_written"));
        t.training.precision = Precision::FP16;
        QVERIFY(hasWarning(torchtitanLaunch(t), "fp16_not_written"));
    }

    void fsdpBackwardPrefetchIsNamed()
    {
        Scenario t = base("llama3-8b", 8, Framework::FSDP);
        t.parallel = {.dp = 8, .zero = 3};
        for (FsdpBackwardPrefetch p : {FsdpBackwardPrefetch::Default, FsdpBackwardPrefetch::Pre,
                                       FsdpBackwardPrefetch::Post, FsdpBackwardPrefetch::None}) {
            t.training.fsdp_backward_prefetch = p;
            const bool named = p == FsdpBackwardPrefetch::Post || p == FsdpBackwardPrefetch::None;
            const LaunchConfig tt = torchtitanLaunch(t);
            QVERIFY2(hasWarning(tt, "fsdp_backward_prefetch_not_written") == named,
                     qPrintable(warningsOf(tt)));
            Scenario m = base("llama3-8b", 8, Framework::Megatron);
            m.training.fsdp_backward_prefetch = p;
            const bool set = p != FsdpBackwardPrefetch::Default;
            for (const LaunchConfig& c : {megatronLaunch(m), bridgeLaunch(m), deepspeedLaunch(m)})
                QVERIFY2(hasWarning(c, "fsdp_backward_prefetch_not_applicable") == set,
                         qPrintable(warningsOf(c)));
        }
    }

    // FSDP1 has no launch flag anywhere: torchtitan runs FSDP2 only, the others no PyTorch FSDP.
    void fsdpVersionOneIsNamed()
    {
        Scenario t = base("llama3-8b", 8, Framework::FSDP);
        QVERIFY(!hasWarning(torchtitanLaunch(t), "fsdp_version_not_written"));
        t.training.fsdp_version = 1;
        const LaunchConfig tt = torchtitanLaunch(t);
        QVERIFY2(hasWarning(tt, "fsdp_version_not_written"), qPrintable(warningsOf(tt)));
        Scenario m = base("llama3-8b", 8, Framework::Megatron);
        m.training.fsdp_version = 1;
        for (const LaunchConfig& c : {megatronLaunch(m), bridgeLaunch(m), deepspeedLaunch(m)})
            QVERIFY2(hasWarning(c, "fsdp_version_not_written"), qPrintable(warningsOf(c)));
    }

    // Megatron-LM, Megatron-Core (Bridge) and Megatron-DeepSpeed build a FusedAdam and have no
    // flag for foreach or for-loop AdamW: named, not written; fused (their own) says nothing.
    void optimizerImplWithoutAFlagIsNamed()
    {
        for (OptimizerImpl impl :
             {OptimizerImpl::Foreach, OptimizerImpl::ForLoop, OptimizerImpl::Fused}) {
            Scenario m = base("llama3-8b", 8, Framework::Megatron);
            m.parallel.zero = 1;
            m.training.optimizer_impl = impl;
            Scenario d = base("llama3-8b", 8, Framework::DeepSpeed);
            d.parallel.zero = 1;
            d.training.optimizer_impl = impl;
            const bool named = impl != OptimizerImpl::Fused;
            for (const LaunchConfig& c : {megatronLaunch(m), bridgeLaunch(m), deepspeedLaunch(d)})
                QVERIFY2(hasWarning(c, "optimizer_impl_not_written") == named,
                         qPrintable(warningsOf(c)));
        }
    }

    // training.attention_kernel is Megatron-Core's AttnBackend (megatron/core/transformer/
    // enums.py): flash2 is `flash`, fused `fused`, default not written (`auto`), no flash
    // attention `unfused`; triton has no backend and is a named warning, read back as default.
    void attentionKernelIsMegatronsAttnBackend()
    {
        const std::pair<AttentionKernel, const char*> kernels[] = {
            {AttentionKernel::Flash2, "flash"},
            {AttentionKernel::Fused, "fused"},
            {AttentionKernel::Default, nullptr},
            {AttentionKernel::Triton, nullptr},
        };
        for (const auto& [kernel, backend] : kernels) {
            Scenario s = base("llama3-8b", 8, Framework::Megatron);
            s.parallel.zero = 1;
            s.training.attention_kernel = kernel;
            const LaunchConfig m = megatronLaunch(s);
            const LaunchConfig b = bridgeLaunch(s);
            const std::string& mt = m.files[0].text;
            const std::string& bt = b.files[0].text;
            if (backend) {
                QVERIFY(mt.find(std::string("--attention-backend ") + backend + " ") !=
                            std::string::npos ||
                        mt.find(std::string("--attention-backend ") + backend + "\n") !=
                            std::string::npos);
                QVERIFY(bt.find(std::string("model.attention_backend=") + backend) !=
                        std::string::npos);
            } else {
                QVERIFY(mt.find("--attention-backend") == std::string::npos);
                QVERIFY(bt.find("model.attention_backend") == std::string::npos);
            }
            const bool triton = kernel == AttentionKernel::Triton;
            QCOMPARE(hasWarning(m, "attention_kernel_not_megatron"), triton);
            QCOMPARE(hasWarning(b, "attention_kernel_not_megatron"), triton);
            for (const LaunchConfig* c : {&m, &b}) {
                const TrainingSettings back = roundTrip(*c).scenario.training;
                QVERIFY(back.flash_attention);
                QVERIFY(back.attention_kernel == (triton ? AttentionKernel::Default : kernel));
            }
        }
        Scenario u = base("llama3-8b", 8, Framework::Megatron);
        u.training.flash_attention = false;
        QVERIFY(megatronLaunch(u).files[0].text.find("--attention-backend unfused") !=
                std::string::npos);
        QVERIFY(bridgeLaunch(u).files[0].text.find("model.attention_backend=unfused") !=
                std::string::npos);
    }

    // The identity scenario -> launch config -> scenario, every framework, every plan of the
    // sweep (dense, MoE with EP and expert TP, CP, interleaved and V schedules, ZeRO 0-3, FP8).
    void roundTripIsIdentity()
    {
        for (LaunchFramework f : kAllLaunchFrameworks)
            for (const auto& [name, s] : plansFor(f)) {
                const LaunchConfig c = launchConfig(s, f);
                const QString where =
                    QString::fromStdString(std::string(toString(f))) + " / " + name;
                // torchtitan and DeepSpeed have no MTP setting (deepseek-v3 has one module).
                const bool noMtp =
                    f == LaunchFramework::Torchtitan || f == LaunchFramework::DeepSpeed;
                const bool mtpWarned = s.model.mtp_layers > 0 && noMtp;
                QVERIFY2(c.warnings.size() == (mtpWarned ? 1u : 0u) &&
                             (!mtpWarned || hasWarning(c, "mtp_unsupported")),
                         qPrintable(where + ":" + warningsOf(c)));
                const LaunchImport back = roundTrip(c);
                QVERIFY(back.framework == f);
                QVERIFY2(back.scenario == s, qPrintable(where + describe(s, back.scenario)));
            }
    }
};

QTEST_GUILESS_MAIN(TestLaunchConfig)
#include "test_launch_config.moc"
