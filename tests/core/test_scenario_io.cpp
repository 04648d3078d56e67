// SPDX-License-Identifier: GPL-3.0-or-later
// Scenario JSON: the documented defaults, derived dp/gpus, named errors for malformed JSON,
// wrong types, unknown keys and absurd sizes, exact round trips, and no crash on any input.
#include "core/error.h"
#include "core/scenario_io.h"
#include "core/spec_io.h"
#include "core/validate.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFile>
#include <QTest>

#include <algorithm>
#include <random>

using namespace paralens;

namespace {

QString errorOf(const std::string& text, std::string* field = nullptr)
{
    try {
        parseScenario(text, "s.json");
    } catch (const InputError& e) {
        if (field)
            *field = e.field();
        return QString::fromStdString(e.what());
    }
    return QString();
}

// A training enum that round-trips under `key`: each name reads back as its value and is written
// only when not the default; `bad` is refused with the field and the list of names.
template <typename E, std::size_t N>
void trainingEnumRoundTrips(const char* key, E TrainingSettings::*member,
                            const std::pair<const char*, E> (&values)[N], const char* bad,
                            const char* names)
{
    const Scenario s = parseScenario(R"({"training": {"framework": "fsdp"}})", "s.json");
    QVERIFY(s.training.*member == E::Default);
    QVERIFY(!scenarioToJson(s)["training"].contains(key));
    for (const auto& [name, kind] : values) {
        const Scenario r = parseScenario(
            std::string(R"({"training": {")") + key + "\": \"" + name + "\"}}", "s.json");
        QVERIFY(r.training.*member == kind);
        const Scenario back = parseScenario(scenarioToText(r), "back.json");
        QVERIFY(back == r);
        if (kind != E::Default)
            QCOMPARE(scenarioToJson(back)["training"][key].template get<std::string>(),
                     std::string(name));
    }
    Scenario t = s;
    t.training.*member = values[N - 1].second;
    QVERIFY(!(t == s));
    std::string field;
    const QString err =
        errorOf(std::string(R"({"training": {")") + key + "\": \"" + bad + "\"}}", &field);
    QVERIFY2(err.contains(QStringLiteral("'%1'").arg(bad)) && err.contains(names), qPrintable(err));
    QCOMPARE(field, std::string("training.") + key);
    QVERIFY(errorOf(std::string(R"({"training": {")") + key + "\": 1}}")
                .contains(QStringLiteral("training.%1").arg(key)));
}

const char* kFull = R"({
  "model": "llama3-8b",
  "hardware": "h100-sxm",
  "gpus": 16,
  "parallel": {"tp": 2, "pp": 2, "dp": 4, "ep": 1, "cp": 1, "sequence_parallel": true,
               "virtual_stages": 2, "schedule": "interleaved-1f1b", "zero": 1,
               "shard_group": 2, "offload_optimizer": true, "first_stage_layers": 15,
               "last_stage_layers": 17, "cp_comm": "all-gather"},
  "training": {"seq_len": 2048, "micro_batch": 2, "global_batch": 64, "precision": "fp8",
               "recompute": "full", "flash_attention": false, "optimizer": "sgd",
               "framework": "deepspeed"},
  "calibration": "profiles/h100.json"
})";

} // namespace

class TestScenarioIo : public QObject
{
    Q_OBJECT
private slots:
    // The defaults table in docs/scenario-format.md, checked key by key.
    void omittedKeysTakeDocumentedDefaults()
    {
        const Scenario s = parseScenario("{}", "empty.json");
        QCOMPARE(s.model_id, std::string("llama3-70b"));
        QCOMPARE(s.hardware_id, std::string("h100-sxm"));
        QCOMPARE(s.gpus, 1); // = tp·pp·cp·dp with every degree 1
        const ParallelPlan& p = s.parallel;
        QCOMPARE(p.tp, 1);
        QCOMPARE(p.pp, 1);
        QCOMPARE(p.dp, 1);
        QCOMPARE(p.ep, 1);
        QCOMPARE(p.cp, 1);
        QCOMPARE(p.sequence_parallel, false);
        QCOMPARE(p.virtual_stages, 1);
        QVERIFY(p.schedule == Schedule::OneF1B);
        QCOMPARE(p.zero, 0);
        QCOMPARE(p.shard_group, 0);
        QCOMPARE(p.offload_optimizer, false);
        QCOMPARE(p.first_stage_layers, 0);
        QCOMPARE(p.last_stage_layers, 0);
        QVERIFY(p.cp_comm == CpComm::Default);
        const TrainingSettings& t = s.training;
        QCOMPARE(t.seq_len, 4096);
        QCOMPARE(t.micro_batch, 1);
        QCOMPARE(t.global_batch, 512);
        QVERIFY(t.precision == Precision::BF16);
        QVERIFY(t.recompute == Recompute::Selective);
        QCOMPARE(t.flash_attention, true);
        QVERIFY(t.attention_kernel == AttentionKernel::Default);
        QVERIFY(t.optimizer == Optimizer::Adam);
        QVERIFY(t.framework == Framework::Megatron);
        QVERIFY(s.calibration.empty());
    }

    void everyKeyIsRead()
    {
        const Scenario s = parseScenario(kFull, "full.json");
        QCOMPARE(s.model.hidden, std::int64_t{4096});
        QCOMPARE(s.gpus, 16);
        QCOMPARE(s.parallel.tp, 2);
        QCOMPARE(s.parallel.pp, 2);
        QCOMPARE(s.parallel.dp, 4);
        QCOMPARE(s.parallel.virtual_stages, 2);
        QVERIFY(s.parallel.schedule == Schedule::Interleaved1F1B);
        QCOMPARE(s.parallel.zero, 1);
        QCOMPARE(s.parallel.shard_group, 2);
        QCOMPARE(s.parallel.offload_optimizer, true);
        QCOMPARE(s.parallel.first_stage_layers, 15);
        QCOMPARE(s.parallel.last_stage_layers, 17);
        QVERIFY(s.parallel.cp_comm == CpComm::AllGather);
        QCOMPARE(s.training.seq_len, 2048);
        QCOMPARE(s.training.micro_batch, 2);
        QCOMPARE(s.training.global_batch, 64);
        QVERIFY(s.training.precision == Precision::FP8);
        QVERIFY(s.training.recompute == Recompute::Full);
        QCOMPARE(s.training.flash_attention, false);
        QVERIFY(s.training.optimizer == Optimizer::SGD);
        QVERIFY(s.training.framework == Framework::DeepSpeed);
        QCOMPARE(s.calibration, std::string("profiles/h100.json"));
        const auto errors = validate(s);
        QVERIFY2(errors.empty(), errors.empty() ? "" : errors.front().message.c_str());
    }

    void dpIsDerivedFromGpus()
    {
        const Scenario s =
            parseScenario(R"({"gpus": 64, "parallel": {"tp": 8, "pp": 2, "cp": 2}})", "s.json");
        QCOMPARE(s.parallel.dp, 2); // 64 / (8·2·2)
        std::string field;
        const QString msg = errorOf(R"({"gpus": 64, "parallel": {"tp": 3}})", &field);
        QVERIFY2(msg.contains("parallel.dp") && msg.contains("tp·pp·cp = 3"), qPrintable(msg));
        QCOMPARE(field, std::string("parallel.dp"));
    }

    void gpusIsDerivedFromThePlan()
    {
        const Scenario s = parseScenario(R"({"parallel": {"tp": 8, "pp": 4, "dp": 2}})", "s.json");
        QCOMPARE(s.gpus, 64);
        const QString msg = errorOf(R"({"parallel": {"tp": 1000000, "pp": 1000000, "dp": 1000000,
                                       "cp": 1000000}})");
        QVERIFY2(msg.contains("gpus") && msg.contains("exceeds the bound 1000000"),
                 qPrintable(msg));
    }

    void modelAndHardwareAsObjects()
    {
        const std::string text = R"({"model": {"name": "toy", "layers": 4, "hidden": 256,
            "heads": 4, "ffn_hidden": 1024, "vocab": 1000, "gated_mlp": false,
            "tied_embeddings": true, "moe": {"experts": 4, "top_k": 1, "expert_ffn_hidden": 512}},
            "hardware": {"gpu": {"memory_gib": 16, "hbm_gbps": 900, "bf16_tflops": 65},
            "scale_up_gbps": 50, "scale_out_gbps": 12.5, "gpus_per_node": 4}, "gpus": 4})";
        const Scenario s = parseScenario(text, "s.json");
        QVERIFY(s.model_id.empty());
        QVERIFY(s.hardware_id.empty());
        QCOMPARE(s.model.kv_heads, 4); // defaults to heads
        QCOMPARE(s.model.moe.experts, 4);
        QCOMPARE(s.model.moe.layer_frequency, 1);
        QCOMPARE(s.cluster.scale_up_domain, 4);
        QCOMPARE(s.cluster.latencies.scale_up_us, 3.0);
        const Scenario back = parseScenario(scenarioToText(s), "back.json");
        QVERIFY(back == s);
        QVERIFY(nlohmann::json(scenarioToJson(back))["model"].is_object());
    }

    void moeKeysReadAndRoundTrip()
    {
        const std::string text = R"({"model": "mixtral-8x7b", "gpus": 16,
            "parallel": {"tp": 2, "ep": 8, "expert_tp": 1, "moe_dispatcher": "deepep",
                         "moe_overlap": true, "sequence_parallel": true},
            "training": {"moe_load_imbalance": 1.1}})";
        const Scenario s = parseScenario(text, "moe.json");
        QCOMPARE(s.parallel.expert_tp, 1);
        QVERIFY(s.parallel.moe_dispatcher == MoeDispatcher::DeepEP);
        QCOMPARE(s.parallel.moe_overlap, true);
        QCOMPARE(s.training.moe_load_imbalance, 1.1);
        const Scenario back = parseScenario(scenarioToText(s), "back.json");
        QVERIFY(back == s);
        // Left at their defaults they are not written (files of dense models read as before).
        const auto j = scenarioToJson(parseScenario(R"({"model": "mixtral-8x7b"})", "d.json"));
        QVERIFY(!j["parallel"].contains("expert_tp") && !j["parallel"].contains("moe_dispatcher"));
        QVERIFY(!j["parallel"].contains("moe_overlap"));
        QVERIFY(!j["training"].contains("moe_load_imbalance"));
        // Group-limited routing in a model object.
        const Scenario g = parseScenario(R"({"model": {"layers": 2, "hidden": 64, "heads": 2,
            "ffn_hidden": 128, "vocab": 100, "moe": {"experts": 8, "top_k": 2,
            "expert_ffn_hidden": 64, "groups": 4, "group_top_k": 2}}})",
                                         "g.json");
        QCOMPARE(g.model.moe.groups, 4);
        QCOMPARE(g.model.moe.group_top_k, 2);
        QVERIFY(parseScenario(scenarioToText(g), "g2.json") == g);
        // Bad values name the key.
        QVERIFY(errorOf(R"({"parallel": {"moe_dispatcher": "nccl"}})")
                    .contains("parallel.moe_dispatcher"));
        QVERIFY(errorOf(R"({"training": {"moe_load_imbalance": 0.5}})")
                    .contains("training.moe_load_imbalance"));
        QVERIFY(errorOf(R"({"parallel": {"expert_tp": 0}})").contains("parallel.expert_tp"));
    }

    void roundTripPreservesEverything()
    {
        const Scenario s = parseScenario(kFull, "full.json");
        const std::string text = scenarioToText(s);
        const Scenario back = parseScenario(text, "back.json");
        QVERIFY(back == s);
        QCOMPARE(scenarioToText(back), text); // a fixed point
        const auto j = scenarioToJson(back);
        QCOMPARE(j["model"].get<std::string>(), std::string("llama3-8b"));
        QCOMPARE(j["hardware"].get<std::string>(), std::string("h100-sxm"));
        const Scenario d = defaultScenario();
        QVERIFY(parseScenario(scenarioToText(d), "d.json") == d);
        // The framework's CP exchange is the default and is not written out.
        QVERIFY(!scenarioToJson(d)["parallel"].contains("cp_comm"));
    }

    void dropoutAndReshardPolicy()
    {
        // Unset, dropout follows the framework and is not written back; set, it round-trips.
        Scenario s = parseScenario(R"({"training": {"framework": "fsdp"}})", "s.json");
        QVERIFY(!s.training.dropout.has_value());
        QVERIFY(!s.training.dropoutOn());
        QVERIFY(s.training.fsdp_reshard_after_forward == ReshardAfterForward::Default);
        QVERIFY(!scenarioToJson(s)["training"].contains("dropout"));
        QVERIFY(!scenarioToJson(s)["training"].contains("fsdp_reshard_after_forward"));
        s = parseScenario(R"({"training": {"framework": "fsdp", "dropout": true,
                              "fsdp_reshard_after_forward": "never"}})",
                          "s.json");
        QVERIFY(s.training.dropoutOn());
        QVERIFY(s.training.fsdp_reshard_after_forward == ReshardAfterForward::Never);
        const Scenario back = parseScenario(scenarioToText(s), "back.json");
        QVERIFY(back == s);
        QCOMPARE(scenarioToJson(back)["training"]["fsdp_reshard_after_forward"].get<std::string>(),
                 std::string("never"));
        s.training.dropout = false;
        s.training.framework = Framework::Megatron;
        QVERIFY(parseScenario(scenarioToText(s), "b.json") == s);
        QVERIFY(!parseScenario(scenarioToText(s), "b.json").training.dropoutOn());
        const QString bad = errorOf(R"({"training": {"fsdp_reshard_after_forward": "sometimes"}})");
        QVERIFY2(bad.contains("default, always, never"), qPrintable(bad));
        // The backward prefetch: unset is not written; set, it round-trips; a typo names the
        // values.
        QVERIFY(!scenarioToJson(back)["training"].contains("fsdp_backward_prefetch"));
        s = parseScenario(R"({"training": {"fsdp_backward_prefetch": "backward_post"}})", "p.json");
        QVERIFY(s.training.fsdp_backward_prefetch == FsdpBackwardPrefetch::Post);
        QVERIFY(parseScenario(scenarioToText(s), "p2.json") == s);
        QCOMPARE(scenarioToJson(s)["training"]["fsdp_backward_prefetch"].get<std::string>(),
                 std::string("backward_post"));
        const QString badPrefetch =
            errorOf(R"({"training": {"fsdp_backward_prefetch": "BACKWARD_POST"}})");
        QVERIFY2(badPrefetch.contains("default, backward_pre, backward_post, none"),
                 qPrintable(badPrefetch));
        QVERIFY(errorOf(R"({"training": {"dropout": 0.1}})").contains("training.dropout"));
        // The FSDP version: 2 unless set, written only as 1; anything else names the key.
        QVERIFY(!scenarioToJson(back)["training"].contains("fsdp_version"));
        s = parseScenario(R"({"training": {"fsdp_version": 1}})", "v.json");
        QCOMPARE(s.training.fsdp_version, 1);
        QVERIFY(parseScenario(scenarioToText(s), "v2.json") == s);
        QCOMPARE(scenarioToJson(s)["training"]["fsdp_version"].get<int>(), 1);
        for (const char* wrong :
             {R"({"training": {"fsdp_version": 3}})", R"({"training": {"fsdp_version": "2"}})",
              R"({"training": {"fsdp_version": 1.5}})"}) {
            const QString e = errorOf(wrong);
            QVERIFY2(e.contains("training.fsdp_version"), qPrintable(e));
        }
    }

    void fp8RecipeRoundTrips()
    {
        // Omitted: default (the framework's recipe), and not written back.
        Scenario s = parseScenario(R"({"training": {"precision": "fp8"}})", "s.json");
        QVERIFY(s.training.fp8_recipe == Fp8Recipe::Default);
        QVERIFY(!scenarioToJson(s)["training"].contains("fp8_recipe"));
        // Every documented value survives write → read (docs/scenario-format.md).
        const std::pair<const char*, Fp8Recipe> values[] = {
            {"default", Fp8Recipe::Default},
            {"delayed", Fp8Recipe::Delayed},
            {"tensorwise", Fp8Recipe::Tensorwise},
            {"rowwise", Fp8Recipe::Rowwise},
            {"rowwise_with_gw_hp", Fp8Recipe::RowwiseGwHp},
            {"mxfp8", Fp8Recipe::Mxfp8}};
        for (const auto& [name, recipe] : values) {
            const Scenario r = parseScenario(
                std::string(R"({"training": {"fp8_recipe": ")") + name + "\"}}", "s.json");
            QVERIFY(r.training.fp8_recipe == recipe);
            const Scenario back = parseScenario(scenarioToText(r), "back.json");
            QVERIFY(back == r);
        }
        // An unknown recipe is a named error.
        QVERIFY(errorOf(R"({"training": {"fp8_recipe": "blockwise"}})").contains("fp8_recipe"));
    }

    void crossEntropyRoundTrips()
    {
        const std::pair<const char*, CrossEntropy> values[] = {{"default", CrossEntropy::Default},
                                                               {"megatron", CrossEntropy::Megatron},
                                                               {"eager", CrossEntropy::Eager},
                                                               {"fused", CrossEntropy::Fused}};
        trainingEnumRoundTrips("cross_entropy", &TrainingSettings::cross_entropy, values, "liger",
                               "default, megatron, eager, fused");
    }

    void ropeImplRoundTrips()
    {
        const std::pair<const char*, RopeImpl> values[] = {{"default", RopeImpl::Default},
                                                           {"complex", RopeImpl::Complex},
                                                           {"real", RopeImpl::Real},
                                                           {"fused", RopeImpl::Fused}};
        trainingEnumRoundTrips("rope_impl", &TrainingSettings::rope_impl, values, "yarn",
                               "default, complex, real, fused");
    }

    void qkNormRoundTrips()
    {
        Scenario s = parseScenario(
            R"({"model": {"layers": 2, "hidden": 64, "heads": 4, "ffn_hidden": 128, "vocab": 100,
                          "qk_norm": true}})",
            "s.json");
        QVERIFY(s.model.qk_norm);
        QVERIFY(scenarioToJson(s)["model"]["qk_norm"].get<bool>());
        QVERIFY(parseScenario(scenarioToText(s), "back.json") == s);
        Scenario plain = s;
        plain.model.qk_norm = false;
        QVERIFY(!(plain == s));
        QVERIFY(!scenarioToJson(plain)["model"].contains("qk_norm")); // the default
        std::string field;
        QVERIFY(errorOf(R"({"model": {"layers": 2, "hidden": 64, "heads": 4, "ffn_hidden": 128,
                        "vocab": 100, "qk_norm": "yes"}})",
                        &field)
                    .contains("qk_norm"));
        QCOMPARE(field, std::string("model.qk_norm"));
    }

    void logitMetricsRoundTrip()
    {
        Scenario s = parseScenario(R"({"training": {"logit_metrics": 2}})", "s.json");
        QCOMPARE(s.training.logit_metrics, 2);
        QCOMPARE(scenarioToJson(s)["training"]["logit_metrics"].get<int>(), 2);
        QVERIFY(parseScenario(scenarioToText(s), "back.json") == s);
        Scenario none = s;
        none.training.logit_metrics = 0;
        QVERIFY(!(none == s));
        QVERIFY(!scenarioToJson(none)["training"].contains("logit_metrics")); // the default
        std::string field;
        QVERIFY(
            errorOf(R"({"training": {"logit_metrics": -1}})", &field).contains("logit_metrics"));
        QCOMPARE(field, std::string("training.logit_metrics"));
        QVERIFY(errorOf(R"({"training": {"logit_metrics": 17}})").contains("16"));
        QVERIFY(errorOf(R"({"training": {"logit_metrics": "two"}})").contains("logit_metrics"));
    }

    void fp16RoundTrips()
    {
        const Scenario s = parseScenario(R"({"training": {"precision": "fp16"}})", "s.json");
        QVERIFY(s.training.precision == Precision::FP16);
        QCOMPARE(scenarioToJson(s)["training"]["precision"].get<std::string>(),
                 std::string("fp16"));
        QVERIFY(parseScenario(scenarioToText(s), "back.json") == s);
        Scenario b = s;
        b.training.precision = Precision::BF16;
        QVERIFY(!(b == s));
    }

    void optimizerImplRoundTrips()
    {
        Scenario s = parseScenario(R"({"training": {"framework": "fsdp"}})", "s.json");
        QVERIFY(s.training.optimizer_impl == OptimizerImpl::Default);
        QVERIFY(!scenarioToJson(s)["training"].contains("optimizer_impl"));
        const std::pair<const char*, OptimizerImpl> values[] = {
            {"default", OptimizerImpl::Default},
            {"fused", OptimizerImpl::Fused},
            {"foreach", OptimizerImpl::Foreach},
            {"for_loop", OptimizerImpl::ForLoop}};
        for (const auto& [name, kind] : values) {
            const Scenario r = parseScenario(
                std::string(R"({"training": {"optimizer_impl": ")") + name + "\"}}", "s.json");
            QVERIFY(r.training.optimizer_impl == kind);
            const Scenario back = parseScenario(scenarioToText(r), "back.json");
            QVERIFY(back == r);
            if (kind != OptimizerImpl::Default)
                QCOMPARE(scenarioToJson(back)["training"]["optimizer_impl"].get<std::string>(),
                         std::string(name));
        }
        Scenario t = s;
        t.training.optimizer_impl = OptimizerImpl::Foreach;
        QVERIFY(!(t == s));
        std::string field;
        // torchtitan spells it "for-loop"; the scenario's enumerations use underscores.
        const QString bad = errorOf(R"({"training": {"optimizer_impl": "for-loop"}})", &field);
        QVERIFY2(bad.contains("'for-loop'"), qPrintable(bad));
        QVERIFY2(bad.contains("default, fused, foreach, for_loop"), qPrintable(bad));
        QCOMPARE(field, std::string("training.optimizer_impl"));
        QVERIFY(errorOf(R"({"training": {"optimizer_impl": true}})")
                    .contains("training.optimizer_impl"));
    }

    void attentionKernelRoundTrips()
    {
        // Omitted: default (the framework's kernel), and not written back.
        Scenario s = parseScenario(R"({"training": {"framework": "fsdp"}})", "s.json");
        QVERIFY(s.training.attention_kernel == AttentionKernel::Default);
        QVERIFY(!scenarioToJson(s)["training"].contains("attention_kernel"));
        // Every documented value survives write → read (docs/scenario-format.md).
        const std::pair<const char*, AttentionKernel> values[] = {
            {"default", AttentionKernel::Default},
            {"flash2", AttentionKernel::Flash2},
            {"fused", AttentionKernel::Fused},
            {"triton", AttentionKernel::Triton}};
        for (const auto& [name, kernel] : values) {
            const Scenario r = parseScenario(
                std::string(R"({"training": {"attention_kernel": ")") + name + "\"}}", "s.json");
            QVERIFY(r.training.attention_kernel == kernel);
            const Scenario back = parseScenario(scenarioToText(r), "back.json");
            QVERIFY(back == r);
            QVERIFY(back.training.attention_kernel == kernel);
            if (kernel != AttentionKernel::Default)
                QCOMPARE(scenarioToJson(back)["training"]["attention_kernel"].get<std::string>(),
                         std::string(name));
        }
        // A different kernel is a different scenario.
        Scenario t = s;
        t.training.attention_kernel = AttentionKernel::Triton;
        QVERIFY(!(t == s));
        // Unknown values and wrong types are named errors.
        std::string field;
        const QString bad = errorOf(R"({"training": {"attention_kernel": "flash3"}})", &field);
        QVERIFY2(bad.contains("training.attention_kernel"), qPrintable(bad));
        QVERIFY2(bad.contains("'flash3'"), qPrintable(bad));
        QVERIFY2(bad.contains("default, flash2, fused, triton"), qPrintable(bad));
        QCOMPARE(field, std::string("training.attention_kernel"));
        QVERIFY(errorOf(R"({"training": {"attention_kernel": 2}})")
                    .contains("training.attention_kernel"));
        QVERIFY(errorOf(R"({"training": {"attention_kernel": "Triton"}})")
                    .contains("training.attention_kernel"));
        // A flash kernel without flash attention is a validation error naming both keys.
        const Scenario u = parseScenario(
            R"({"training": {"flash_attention": false, "attention_kernel": "triton"}})", "u.json");
        bool named = false;
        for (const ValidationError& e : validate(u))
            named = named || (e.rule == "attention_kernel_needs_flash" &&
                              std::find(e.fields.begin(), e.fields.end(),
                                        "training.attention_kernel") != e.fields.end());
        QVERIFY(named);
        Scenario v = u;
        v.training.attention_kernel = AttentionKernel::Default;
        for (const ValidationError& e : validate(v))
            QVERIFY(e.rule != "attention_kernel_needs_flash");
    }

    void defaultScenarioIsTheContract()
    {
        const Scenario s = defaultScenario();
        QCOMPARE(s.model_id, std::string("llama3-70b"));
        QCOMPARE(s.hardware_id, std::string("h100-sxm"));
        QCOMPARE(s.gpus, 64);
        QVERIFY(validate(s).empty());
        // The shipped example is the default scenario.
        const Scenario ex = loadScenarioFile(
            PARALENS_SOURCE_DIR "/resources/examples/llama3-70b-64xh100.paralens.json");
        QVERIFY(ex == s);
    }

    void examplesLoadAndValidate()
    {
        const QDir dir(PARALENS_SOURCE_DIR "/resources/examples");
        const auto files = dir.entryList({"*.paralens.json"});
        QVERIFY(files.size() >= 3);
        for (const auto& f : files) {
            const Scenario s = loadScenarioFile(dir.filePath(f).toStdString());
            const auto errors = validate(s);
            QVERIFY2(errors.empty(),
                     qPrintable(f + ": " +
                                QString::fromStdString(errors.empty() ? "" : errors[0].message)));
        }
    }

    void errorsNameTheProblem_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("expected");
        // malformed / truncated JSON: FILE:LINE:COL (hand-counted, 1-based)
        QTest::newRow("empty") << ""
                               << ""
                               << "s.json:1:1: malformed JSON";
        QTest::newRow("truncated") << "{\n  \"gpus\": 64,\n  \"parallel\": {\"tp\": 8"
                                   << ""
                                   << "s.json:3:23: malformed JSON";
        QTest::newRow("trailing comma") << "{\"gpus\": 64,}"
                                        << ""
                                        << "s.json:1:13: malformed JSON";
        QTest::newRow("bad literal") << "{\n\n   \"gpus\": sixty}"
                                     << ""
                                     << "s.json:3:12: malformed JSON";
        QTest::newRow("number overflow") << "{\"gpus\": 1e999}"
                                         << ""
                                         << "s.json:1:10";
        QTest::newRow("not an object") << "[64]"
                                       << ""
                                       << "expected a JSON object at the top level";
        QTest::newRow("duplicate key") << R"({"gpus": 8, "gpus": 16})"
                                       << "gpus"
                                       << "duplicate key 'gpus'";
        // wrong types name the key and the expected type
        QTest::newRow("gpus string") << R"({"gpus": "64"})"
                                     << "gpus"
                                     << "gpus: expected an integer, got a string";
        QTest::newRow("gpus fraction") << R"({"gpus": 6.5})"
                                       << "gpus"
                                       << "gpus: expected an integer, got 6.5";
        QTest::newRow("tp bool") << R"({"parallel": {"tp": true}})"
                                 << "parallel.tp"
                                 << "parallel.tp: expected an integer, got a boolean";
        QTest::newRow("sp int") << R"({"parallel": {"sequence_parallel": 1}})"
                                << "parallel.sequence_parallel"
                                << "expected a boolean";
        QTest::newRow("parallel array") << R"({"parallel": [8, 4]})"
                                        << "parallel"
                                        << "parallel: expected an object, got an array";
        QTest::newRow("model number") << R"({"model": 70})"
                                      << "model"
                                      << "model: expected a preset id (string) or an object";
        QTest::newRow("hidden null") << R"({"model": {"layers": 2, "hidden": null, "heads": 2,
            "ffn_hidden": 8, "vocab": 10}})"
                                     << "model.hidden"
                                     << "model.hidden: expected an integer, got null";
        QTest::newRow("memory string") << R"({"hardware": {"gpu": {"memory_gib": "80",
            "hbm_gbps": 1, "bf16_tflops": 1}, "scale_up_gbps": 1, "scale_out_gbps": 1}})"
                                       << "hardware.gpu.memory_gib"
                                       << "expected a number, got a string";
        QTest::newRow("calibration number") << R"({"calibration": 3})"
                                            << "calibration"
                                            << "calibration: expected a path";
        // enumerations
        QTest::newRow("schedule") << R"({"parallel": {"schedule": "2f2b"}})"
                                  << "parallel.schedule"
                                  << "'2f2b' is not one of gpipe, 1f1b";
        QTest::newRow("cp_comm") << R"({"parallel": {"cp_comm": "ring"}})"
                                 << "parallel.cp_comm"
                                 << "'ring' is not one of default, p2p, all-gather, a2a";
        QTest::newRow("precision") << R"({"training": {"precision": "fp4"}})"
                                   << "training.precision"
                                   << "'fp4' is not one of bf16, fp8, fp16";
        QTest::newRow("recompute") << R"({"training": {"recompute": "some"}})"
                                   << "training.recompute"
                                   << "not one of none, selective, full";
        QTest::newRow("framework") << R"({"training": {"framework": "jax"}})"
                                   << "training.framework"
                                   << "not one of megatron, deepspeed, fsdp";
        // unknown keys at every level
        QTest::newRow("unknown top") << R"({"gpu": 8})"
                                     << "gpu"
                                     << "gpu: unknown key";
        QTest::newRow("unknown parallel") << R"({"parallel": {"tpp": 8}})"
                                          << "parallel.tpp"
                                          << "parallel.tpp: unknown key";
        QTest::newRow("unknown training") << R"({"training": {"seqlen": 8}})"
                                          << "training.seqlen"
                                          << "training.seqlen: unknown key";
        QTest::newRow("unknown model") << R"({"model": {"layers": 2, "hidden": 8, "heads": 2,
            "ffn_hidden": 8, "vocab": 10, "norm_eps": 1e-5}})"
                                       << "model.norm_eps"
                                       << "model.norm_eps: unknown key";
        QTest::newRow("unknown moe") << R"({"model": {"layers": 2, "hidden": 8, "heads": 2,
            "ffn_hidden": 8, "vocab": 10, "moe": {"experts": 2, "topk": 1}}})"
                                     << "model.moe.topk"
                                     << "model.moe.topk: unknown key";
        QTest::newRow("unknown gpu") << R"({"hardware": {"gpu": {"memory_gib": 8, "hbm_gbps": 1,
            "bf16_tflops": 1, "tf32": 1}, "scale_up_gbps": 1, "scale_out_gbps": 1}})"
                                     << "hardware.gpu.tf32"
                                     << "hardware.gpu.tf32: unknown key";
        QTest::newRow("preset keys in scenario") << R"({"model": {"id": "x", "layers": 2,
            "hidden": 8, "heads": 2, "ffn_hidden": 8, "vocab": 10}})"
                                                 << "model.id"
                                                 << "model.id: unknown key";
        // missing required keys and unknown presets
        QTest::newRow("model missing layers") << R"({"model": {"hidden": 8, "heads": 2,
            "ffn_hidden": 8, "vocab": 10}})"
                                              << "model.layers"
                                              << "model.layers: required key missing";
        QTest::newRow("hardware missing gpu") << R"({"hardware": {"scale_up_gbps": 1}})"
                                              << "hardware.gpu"
                                              << "hardware.gpu: required key missing";
        QTest::newRow("unknown model preset") << R"({"model": "llama5"})"
                                              << "model"
                                              << "unknown model preset 'llama5'";
        QTest::newRow("unknown hardware preset") << R"({"hardware": "tpu-v5"})"
                                                 << "hardware"
                                                 << "unknown hardware preset 'tpu-v5'";
        // absurd sizes name the bound
        QTest::newRow("1e7 layers") << R"({"model": {"layers": 10000000, "hidden": 8, "heads": 2,
            "ffn_hidden": 8, "vocab": 10}})"
                                    << "model.layers"
                                    << "model.layers: 10000000 exceeds the bound 100000";
        QTest::newRow("0 gpus") << R"({"gpus": 0})"
                                << "gpus"
                                << "gpus: 0 is below the minimum 1";
        QTest::newRow("2e6 gpus") << R"({"gpus": 2000000})"
                                  << "gpus"
                                  << "exceeds the bound 1000000";
        QTest::newRow("huge gpus") << R"({"gpus": 123456789012345678901234567890})"
                                   << "gpus"
                                   << "exceeds the bound 1000000";
        QTest::newRow("negative tp") << R"({"parallel": {"tp": -8}})"
                                     << "parallel.tp"
                                     << "parallel.tp: -8 is below the minimum 1";
        QTest::newRow("negative seq") << R"({"training": {"seq_len": -1}})"
                                      << "training.seq_len"
                                      << "below the minimum 1";
        QTest::newRow("seq 1e9") << R"({"training": {"seq_len": 1000000000}})"
                                 << "training.seq_len"
                                 << "exceeds the bound 100000000";
        QTest::newRow("hidden 2e6") << R"({"model": {"layers": 2, "hidden": 2000000, "heads": 2,
            "ffn_hidden": 8, "vocab": 10}})"
                                    << "model.hidden"
                                    << "exceeds the bound 1000000";
        QTest::newRow("zero 4") << R"({"parallel": {"zero": 4}})"
                                << "parallel.zero"
                                << "parallel.zero: 4 exceeds the bound 3";
        QTest::newRow("negative memory") << R"({"hardware": {"gpu": {"memory_gib": -80,
            "hbm_gbps": 1, "bf16_tflops": 1}, "scale_up_gbps": 1, "scale_out_gbps": 1}})"
                                         << "hardware.gpu.memory_gib"
                                         << "must be greater than 0";
        QTest::newRow("negative latency") << R"({"hardware": {"gpu": {"memory_gib": 80,
            "hbm_gbps": 1, "bf16_tflops": 1}, "scale_up_gbps": 1, "scale_out_gbps": 1,
            "latencies": {"scale_up_us": -1}}})"
                                          << "hardware.latencies.scale_up_us"
                                          << "below the minimum 0";
        QTest::newRow("negative experts") << R"({"model": {"layers": 2, "hidden": 8, "heads": 2,
            "ffn_hidden": 8, "vocab": 10, "moe": {"experts": -4}}})"
                                          << "model.moe.experts"
                                          << "below the minimum 0";
    }
    void errorsNameTheProblem()
    {
        QFETCH(QString, text);
        QFETCH(QString, field);
        QFETCH(QString, expected);
        std::string got_field = "(none)";
        const QString msg = errorOf(text.toStdString(), &got_field);
        QVERIFY2(!msg.isEmpty(), "accepted");
        QVERIFY2(msg.startsWith("s.json"), qPrintable(msg)); // names the file
        QVERIFY2(msg.contains(expected), qPrintable(msg));
        QCOMPARE(QString::fromStdString(got_field), field);
        QVERIFY(!msg.contains('\n')); // one line
    }

    void unreadableFile()
    {
        try {
            loadScenarioFile("/nonexistent/x.paralens.json");
            QFAIL("no error");
        } catch (const InputError& e) {
            QVERIFY(QString(e.what()).contains("/nonexistent/x.paralens.json"));
        }
    }

    // Every truncation of a valid file and many random corruptions either parse or throw
    // InputError; nothing else escapes and nothing crashes (run under asan in CI).
    void truncationsAndCorruptionsNeverCrash()
    {
        const std::string text = kFull;
        int errors = 0;
        for (std::size_t n = 0; n < text.size(); ++n) {
            try {
                const Scenario s = parseScenario(text.substr(0, n), "t.json");
                validate(s);
            } catch (const InputError&) {
                ++errors;
            }
        }
        QVERIFY(errors >= static_cast<int>(text.size()) - 2); // only the complete text parses
        std::mt19937 rng(12345);
        const std::string alphabet = "{}[]\":,-0123456789.eE truefalsnul\\\n";
        for (int i = 0; i < 3000; ++i) {
            std::string t = text;
            const int edits = 1 + static_cast<int>(rng() % 4);
            for (int k = 0; k < edits; ++k)
                t[rng() % t.size()] = alphabet[rng() % alphabet.size()];
            try {
                const Scenario s = parseScenario(t, "f.json");
                validate(s);
                isRunnable(s);
            } catch (const InputError&) {
            }
        }
    }
};

QTEST_APPLESS_MAIN(TestScenarioIo)
#include "test_scenario_io.moc"
