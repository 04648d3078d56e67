// SPDX-License-Identifier: GPL-3.0-or-later
// Every validation rule has a failing case whose message names the field; valid plans pass;
// isRunnable() agrees with validate() and never allocates.
#include "alloc_counter.h"
#include "core/presets.h"
#include "core/scenario_io.h"
#include "core/validate.h"

#include <QFile>
#include <QRegularExpression>
#include <QTest>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <new>
#include <set>

using namespace paralens;

namespace {
std::set<QString> g_testedRules; // filled by everyRuleNamesItsField_data()
} // namespace

namespace {

using Mutation = std::function<void(Scenario&)>;

Scenario dense() // Llama-3 70B on 64 H100, the default scenario
{
    return defaultScenario();
}

Scenario moe() // Mixtral 8x7B on 32 H100: tp 2, pp 2, dp 8, ep 8
{
    Scenario s = defaultScenario();
    s.model_id = "mixtral-8x7b";
    s.model = *PresetLibrary::builtin().model("mixtral-8x7b");
    s.gpus = 32;
    s.parallel = ParallelPlan{};
    s.parallel.tp = 2;
    s.parallel.pp = 2;
    s.parallel.dp = 8;
    s.parallel.ep = 8;
    s.parallel.sequence_parallel = true; // Megatron-LM needs it with EP and TP
    s.training.seq_len = 4096;
    s.training.global_batch = 256;
    return s;
}

bool hasRule(const std::vector<ValidationError>& errors, const std::string& rule,
             const std::string& field, QString* message)
{
    for (const auto& e : errors) {
        if (e.rule != rule)
            continue;
        *message = QString::fromStdString(e.message);
        bool named = false;
        for (const auto& f : e.fields)
            named = named || f == field;
        return named && e.message.find(field) != std::string::npos;
    }
    return false;
}

} // namespace

Q_DECLARE_METATYPE(Mutation)

class TestValidate : public QObject
{
    Q_OBJECT
private slots:
    void validPlansPass_data()
    {
        QTest::addColumn<bool>("isMoe");
        QTest::addColumn<Mutation>("mutate");
        QTest::newRow("default") << false << Mutation([](Scenario&) {});
        QTest::newRow("mixtral") << true << Mutation([](Scenario&) {});
        // Uneven split: 80 layers over 3 stages (27/27/26) is allowed.
        QTest::newRow("uneven pp") << false << Mutation([](Scenario& s) {
            s.gpus = 48;
            s.parallel.pp = 3;
            s.parallel.virtual_stages = 1;
            s.parallel.schedule = Schedule::OneF1B;
        });
        // Megatron turns sequence parallelism off when tp = 1: allowed as a no-op.
        QTest::newRow("sp with tp 1") << false << Mutation([](Scenario& s) {
            s.gpus = 8;
            s.parallel.tp = 1;
            s.parallel.dp = 2;
            s.parallel.pp = 4;
        });
        QTest::newRow("explicit stage sizes") << false << Mutation([](Scenario& s) {
            s.parallel.virtual_stages = 1;
            s.parallel.schedule = Schedule::OneF1B;
            s.parallel.first_stage_layers = 19; // Llama 3: one layer less on the first stage
            s.parallel.last_stage_layers = 19;  // and on the last
        });
        QTest::newRow("cp 2") << false << Mutation([](Scenario& s) {
            s.gpus = 128;
            s.parallel.cp = 2;
        });
        QTest::newRow("zb-v") << false << Mutation([](Scenario& s) {
            s.parallel.schedule = Schedule::ZBV;
            s.parallel.virtual_stages = 2;
        });
        QTest::newRow("dualpipe-v odd pp") << false << Mutation([](Scenario& s) {
            // DualPipeV asserts only m >= 2·ranks, no even rank count (DualPipe repo).
            s.gpus = 80;
            s.parallel.pp = 5;
            s.parallel.schedule = Schedule::DualPipeV;
            s.parallel.virtual_stages = 2;
        });
        QTest::newRow("hybrid shard") << false << Mutation([](Scenario& s) {
            s.gpus = 128;
            s.parallel.dp = 4;
            s.parallel.zero = 3;
            s.parallel.shard_group = 2;
        });
        QTest::newRow("less than a node") << false << Mutation([](Scenario& s) {
            s.gpus = 4;
            s.parallel.tp = 4;
            s.parallel.pp = 1;
            s.parallel.dp = 1;
            s.parallel.virtual_stages = 1;
            s.parallel.schedule = Schedule::OneF1B;
        });
        QTest::newRow("fp8 on h100")
            << false << Mutation([](Scenario& s) { s.training.precision = Precision::FP8; });
        QTest::newRow("ep 4 of dp 8") << true << Mutation([](Scenario& s) { s.parallel.ep = 4; });
        QTest::newRow("ep with tp, no sp, deepspeed") << true << Mutation([](Scenario& s) {
            s.parallel.sequence_parallel = false;
            s.training.framework = Framework::DeepSpeed; // the Megatron-LM rule only
        });
    }
    void validPlansPass()
    {
        QFETCH(bool, isMoe);
        QFETCH(Mutation, mutate);
        Scenario s = isMoe ? moe() : dense();
        mutate(s);
        const auto errors = validate(s);
        QVERIFY2(errors.empty(), errors.empty() ? "" : errors.front().message.c_str());
        QVERIFY(isRunnable(s));
    }

    void everyRuleNamesItsField_data()
    {
        QTest::addColumn<bool>("isMoe");
        QTest::addColumn<Mutation>("mutate");
        QTest::addColumn<QString>("rule");
        QTest::addColumn<QString>("field");
        auto row = [](const char* name, bool isMoe, Mutation m, const char* rule,
                      const char* field) {
            QTest::newRow(name) << isMoe << m << QString(rule) << QString(field);
            g_testedRules.insert(rule);
        };
        row(
            "tp 0", false, [](Scenario& s) { s.parallel.tp = 0; }, "positive", "parallel.tp");
        row(
            "gpus -8", false, [](Scenario& s) { s.gpus = -8; }, "positive", "gpus");
        row(
            "layers 0", false, [](Scenario& s) { s.model.layers = 0; }, "positive", "model.layers");
        row(
            "global batch 0", false, [](Scenario& s) { s.training.global_batch = 0; }, "positive",
            "training.global_batch");
        row(
            "shard_group -1", false, [](Scenario& s) { s.parallel.shard_group = -1; },
            "non_negative", "parallel.shard_group");
        row(
            "memory 0", false, [](Scenario& s) { s.cluster.gpu.memory_gib = 0; }, "positive",
            "hardware.gpu.memory_gib");
        row(
            "bf16 NaN", false, [](Scenario& s) { s.cluster.gpu.bf16_tflops = std::nan(""); },
            "positive", "hardware.gpu.bf16_tflops");
        row(
            "scale-out inf", false, [](Scenario& s) { s.cluster.scale_out_gbps = HUGE_VAL; },
            "positive", "hardware.scale_out_gbps");
        row(
            "hidden / heads", false, [](Scenario& s) { s.model.hidden = 8190; },
            "hidden_divisible_by_heads", "model.hidden");
        row(
            "kv_heads 7", false, [](Scenario& s) { s.model.kv_heads = 7; }, "kv_heads_divide_heads",
            "model.kv_heads");
        // MLA (DeepSeek-V2 §2.1): one key and value per head; query/key and value dims needed.
        row(
            "mla with 8 kv heads", false,
            [](Scenario& s) {
                s.model.mla = MlaSpec{1536, 512, 128, 64, 128};
            },
            "mla_kv_heads", "model.kv_heads");
        row(
            "mla without head dims", false,
            [](Scenario& s) {
                s.model.kv_heads = s.model.heads;
                s.model.mla = MlaSpec{0, 512, 0, 0, 128};
            },
            "mla_head_dims", "model.mla.qk_nope_head_dim");
        row(
            "mla without kv rank", false, [](Scenario& s) { s.model.mla.v_head_dim = 128; },
            "mla_needs_kv_lora_rank", "model.mla.kv_lora_rank");
        row(
            "top_k without experts", false, [](Scenario& s) { s.model.moe.top_k = 2; },
            "moe_needs_experts", "model.moe.experts");
        row(
            "top_k 9 of 8", true, [](Scenario& s) { s.model.moe.top_k = 9; }, "moe_top_k",
            "model.moe.top_k");
        row(
            "expert ffn 0", true, [](Scenario& s) { s.model.moe.expert_ffn_hidden = 0; },
            "moe_expert_ffn", "model.moe.expert_ffn_hidden");
        row(
            "all dense", true, [](Scenario& s) { s.model.moe.first_dense_layers = 32; },
            "moe_first_dense_layers", "model.moe.first_dense_layers");
        row(
            "tp 3 of 64 heads", false, [](Scenario& s) { s.parallel.tp = 3; }, "tp_divides_heads",
            "parallel.tp");
        row(
            "tp 16 of 8 kv heads", false, [](Scenario& s) { s.parallel.tp = 16; },
            "tp_divides_kv_heads", "model.kv_heads");
        row(
            "cp 3", false, [](Scenario& s) { s.parallel.cp = 3; }, "cp_divides_seq_len",
            "parallel.cp");
        row(
            "cp 2, odd chunks", false,
            [](Scenario& s) {
                s.parallel.cp = 2;
                s.training.seq_len = 8194; // divisible by cp, not by 2·cp
            },
            "cp_divides_seq_len", "training.seq_len");
        row(
            "sp, seq 8196", false, [](Scenario& s) { s.training.seq_len = 8196; },
            "sp_divides_seq_len", "parallel.tp");
        row(
            "pp·v > layers", false, [](Scenario& s) { s.parallel.virtual_stages = 21; },
            "pp_virtual_stages_within_layers", "parallel.virtual_stages");
        row(
            "pp > layers", false, [](Scenario& s) { s.model.layers = 3; },
            "pp_virtual_stages_within_layers", "model.layers");
        row(
            "v with 1f1b", false, [](Scenario& s) { s.parallel.schedule = Schedule::OneF1B; },
            "virtual_stages_schedule", "parallel.schedule");
        row(
            "zb-v with v 5", false, [](Scenario& s) { s.parallel.schedule = Schedule::ZBV; },
            "v_schedule_two_chunks", "parallel.virtual_stages");
        row(
            "dualpipe-v with v 1", false,
            [](Scenario& s) {
                s.parallel.schedule = Schedule::DualPipeV;
                s.parallel.virtual_stages = 1;
            },
            "v_schedule_two_chunks", "parallel.virtual_stages");
        row(
            "zb-v without pp", false,
            [](Scenario& s) {
                s.parallel.pp = 1;
                s.parallel.schedule = Schedule::ZBV;
                s.parallel.virtual_stages = 2;
            },
            "schedule_needs_pipeline", "parallel.pp");
        row(
            "stage layers without pp", false,
            [](Scenario& s) {
                s.parallel.pp = 1;
                s.parallel.virtual_stages = 1;
                s.parallel.first_stage_layers = 10;
            },
            "stage_layers_need_pipeline", "parallel.first_stage_layers");
        row(
            "stage layers too many", false,
            [](Scenario& s) {
                s.parallel.first_stage_layers = 70;
                s.parallel.last_stage_layers = 20;
            },
            "stage_layers_consistent", "parallel.first_stage_layers");
        row(
            "stage layers leave middle empty", false,
            [](Scenario& s) {
                s.parallel.first_stage_layers = 40;
                s.parallel.last_stage_layers = 35; // 5 layers for 2 stages x 5 chunks
            },
            "stage_layers_consistent", "parallel.last_stage_layers");
        row(
            "stage layers below v", false, [](Scenario& s) { s.parallel.first_stage_layers = 4; },
            "stage_layers_consistent", "parallel.first_stage_layers");
        row(
            "pp 2 sum", false,
            [](Scenario& s) {
                s.gpus = 32;
                s.parallel.pp = 2;
                s.parallel.first_stage_layers = 30;
                s.parallel.last_stage_layers = 30;
            },
            "stage_layers_consistent", "model.layers");
        row(
            "ep on dense", false, [](Scenario& s) { s.parallel.ep = 2; }, "ep_needs_moe",
            "parallel.ep");
        row(
            "ep 16 of 8 experts", true,
            [](Scenario& s) {
                s.gpus = 64;
                s.parallel.dp = 16;
                s.parallel.ep = 16;
            },
            "ep_divides_experts", "model.moe.experts");
        row(
            "ep 8 of dp 4", true,
            [](Scenario& s) {
                s.gpus = 16;
                s.parallel.dp = 4;
            },
            "ep_divides_dp_cp", "parallel.dp");
        row(
            "ep with tp, no sp", true, [](Scenario& s) { s.parallel.sequence_parallel = false; },
            "ep_tp_needs_sp", "parallel.sequence_parallel");
        row(
            "etp 3 x ep 8 of 16 ranks", true, [](Scenario& s) { s.parallel.expert_tp = 3; },
            "etp_ep_divides_tp_cp_dp", "parallel.expert_tp");
        row(
            "etp 2 of expert ffn 14337", true,
            [](Scenario& s) { s.model.moe.expert_ffn_hidden = 14337; }, "etp_divides_expert_ffn",
            "model.moe.expert_ffn_hidden");
        row(
            "groups without group_top_k", true, [](Scenario& s) { s.model.moe.groups = 4; },
            "moe_groups_pair", "model.moe.group_top_k");
        row(
            "groups 3 of 8 experts", true,
            [](Scenario& s) {
                s.model.moe.groups = 3;
                s.model.moe.group_top_k = 1;
            },
            "moe_groups_fit", "model.moe.groups");
        row(
            "gpus product", false, [](Scenario& s) { s.gpus = 32; }, "gpus_product", "gpus");
        row(
            "gpus product overflow", false,
            [](Scenario& s) {
                s.parallel.tp = s.parallel.pp = s.parallel.dp = s.parallel.cp = 1000000;
            },
            "gpus_product", "parallel.dp");
        row(
            "partial node", false,
            [](Scenario& s) {
                s.gpus = 12;
                s.parallel.tp = 4;
                s.parallel.pp = 3;
                s.parallel.dp = 1;
            },
            "gpus_whole_nodes", "hardware.gpus_per_node");
        row(
            "scale-up domain 3", false, [](Scenario& s) { s.cluster.scale_up_domain = 3; },
            "scale_up_domain_nodes", "hardware.scale_up_domain");
        row(
            "no micro-batch", false, [](Scenario& s) { s.training.global_batch = 1; },
            "microbatches_at_least_one", "training.global_batch");
        row(
            "global batch 129", false, [](Scenario& s) { s.training.global_batch = 129; },
            "global_batch_multiple", "training.global_batch");
        row(
            "micro batch 3", false, [](Scenario& s) { s.training.micro_batch = 3; },
            "global_batch_multiple", "training.micro_batch");
        row(
            "interleaved m < p", false, [](Scenario& s) { s.training.global_batch = 6; },
            "interleaved_microbatches", "parallel.pp");
        row(
            "dualpipe-v m < 2p", false,
            [](Scenario& s) {
                s.parallel.schedule = Schedule::DualPipeV;
                s.parallel.virtual_stages = 2;
                s.training.global_batch = 12; // m = 6 < 8
            },
            "dualpipe_microbatches", "parallel.pp");
        row(
            "zero 5", false, [](Scenario& s) { s.parallel.zero = 5; }, "zero_stage",
            "parallel.zero");
        row(
            "zero -1", false, [](Scenario& s) { s.parallel.zero = -1; }, "zero_stage",
            "parallel.zero");
        row(
            "shard group 3 of dp 2", false, [](Scenario& s) { s.parallel.shard_group = 3; },
            "shard_group_divides_dp", "parallel.shard_group");
        row(
            "fp8 on a100", false,
            [](Scenario& s) {
                s.hardware_id = "a100-80gb";
                s.cluster = *PresetLibrary::builtin().hardware("a100-80gb");
                s.training.precision = Precision::FP8;
            },
            "fp8_hardware", "training.precision");
        row(
            "triton kernel without flash attention", false,
            [](Scenario& s) {
                s.training.flash_attention = false;
                s.training.attention_kernel = AttentionKernel::Triton;
            },
            "attention_kernel_needs_flash", "training.attention_kernel");
        row(
            "foreach optimizer offloaded to the CPU", false,
            [](Scenario& s) {
                s.parallel.offload_optimizer = true;
                s.training.optimizer_impl = OptimizerImpl::Foreach;
            },
            "optimizer_impl_offloaded", "training.optimizer_impl");
        row(
            "Megatron recompute modules under torchtitan", false,
            [](Scenario& s) {
                s.training.framework = Framework::FSDP;
                s.training.recompute_modules = kRecomputeCoreAttn | kRecomputeMlp;
            },
            "recompute_modules_megatron", "training.recompute_modules");
        row(
            "a layer count under selective recompute", false,
            [](Scenario& s) {
                s.training.recompute = Recompute::Selective;
                s.training.recompute_num_layers = 4;
            },
            "recompute_num_layers_full", "training.recompute_num_layers");
        row(
            "bf16 Adam moments under DeepSpeed", false,
            [](Scenario& s) {
                s.training.framework = Framework::DeepSpeed;
                s.training.adam_moments_dtype = AdamMomentsDtype::Bf16;
            },
            "adam_moments_dtype_megatron", "training.adam_moments_dtype");
    }
    void everyRuleNamesItsField()
    {
        QFETCH(bool, isMoe);
        QFETCH(Mutation, mutate);
        QFETCH(QString, rule);
        QFETCH(QString, field);
        Scenario s = isMoe ? moe() : dense();
        mutate(s);
        const auto errors = validate(s);
        QString message;
        QString all;
        for (const auto& e : errors)
            all += QString::fromStdString(e.rule + ": " + e.message) + "\n";
        QVERIFY2(hasRule(errors, rule.toStdString(), field.toStdString(), &message),
                 qPrintable("expected " + rule + " naming " + field + ", got:\n" + all));
        QVERIFY(!isRunnable(s));
        for (const auto& e : errors) {
            QVERIFY(!e.message.empty() && e.message.find('\n') == std::string::npos);
            QVERIFY(!e.fields.empty());
        }
    }

    // Every rule id in core/validate.cpp has a failing case in the table above.
    void everyRuleHasACase()
    {
        QFile f(PARALENS_SOURCE_DIR "/core/validate.cpp");
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QString source = QString::fromUtf8(f.readAll());
        // Rule ids are the snake_case string literals given to report() / PL_RULE.
        static const QRegularExpression id(R"re("([a-z0-9]+(?:_[a-z0-9]+)+|positive)")re");
        int found = 0;
        for (auto it = id.globalMatch(source); it.hasNext();) {
            const QString rule = it.next().captured(1);
            ++found;
            QVERIFY2(g_testedRules.count(rule), qPrintable("no failing case for rule " + rule));
        }
        QVERIFY(found >= 25);
    }

    // The same input gives the same rules in the same order, and every broken rule is listed.
    void rulesAreStable()
    {
        Scenario s = dense();
        s.parallel.tp = 3;
        s.gpus = 7;
        const auto a = validate(s);
        const auto b = validate(s);
        QCOMPARE(a.size(), b.size());
        for (std::size_t i = 0; i < a.size(); ++i)
            QCOMPARE(a[i].rule, b[i].rule);
        QVERIFY(a.size() >= 2); // lists every broken rule, not just the first
    }

    void emptyScenarioDoesNotCrash()
    {
        const Scenario s{}; // every size 0
        const auto errors = validate(s);
        QVERIFY(!errors.empty());
        QCOMPARE(errors.front().rule, std::string("positive"));
        QVERIFY(!isRunnable(s));
    }

    void isRunnableDoesNotAllocate()
    {
        Scenario good = dense();
        Scenario bad = dense();
        bad.parallel.tp = 3;
        bad.gpus = 7;
        Scenario empty{};
        const long before = g_allocations.load();
        const bool a = isRunnable(good);
        const bool b = isRunnable(bad);
        const bool c = isRunnable(empty);
        const long during = g_allocations.load() - before;
        QVERIFY(a);
        QVERIFY(!b);
        QVERIFY(!c);
        QCOMPARE(during, 0L);
        // The counter works: validate() allocates its messages.
        const long before2 = g_allocations.load();
        const auto errors = validate(bad);
        QVERIFY(g_allocations.load() > before2);
    }
};

QTEST_APPLESS_MAIN(TestValidate)
#include "test_validate.moc"
