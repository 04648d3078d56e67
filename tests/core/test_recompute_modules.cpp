// SPDX-License-Identifier: GPL-3.0-or-later
// training.recompute_modules, Megatron-Core's selective recompute modules (--recompute-modules):
// what each drops from a layer's stored activations and repeats in the backward, checked by
// hand on Korthikanti-style byte counts and on the layer's own forward parts; the scenario
// file, validation and launch-config round trips; bad lists named.
#include "core/dims.h"
#include "core/error.h"
#include "core/evaluate.h"
#include "core/flops.h"
#include "core/framework.h"
#include "core/kernel_time.h"
#include "core/launch_config.h"
#include "core/launch_import.h"
#include "core/memory.h"
#include "core/scenario_io.h"
#include "core/validate.h"
#include "launch_test_support.h"
#include "rule_checks.h"
#include "test_scenarios.h"

#include <QTest>

#include <nlohmann/json.hpp>

#include <cmath>

using namespace paralens;
using namespace paralens::testmodels;
using paralens::testrules::breaks;

namespace {

// One micro-batch of `seq` tokens on one GPU, Megatron's selective recompute in BF16 with flash
// attention and no dropout: the plainest byte counts.
ActivationShape shape(double seq, std::uint8_t modules)
{
    ActivationShape a;
    a.seq = seq;
    a.micro_batch = 1;
    a.recompute = Recompute::Selective;
    a.recompute_modules = modules;
    a.flash_attention = true;
    a.dropout = false;
    return a;
}

// A small MLA model (DeepSeek-V2/V3 layout, its own widths): 16 heads of 64 + 32 query/key
// dims and 64 value dims, latents 512 (queries) and 256 (keys and values).
ModelSpec mlaModel()
{
    ModelSpec m = llama3(4, 2048, 16, 5632);
    m.mla.q_lora_rank = 512;
    m.mla.kv_lora_rank = 256;
    m.mla.qk_nope_head_dim = 64;
    m.mla.qk_rope_head_dim = 32;
    m.mla.v_head_dim = 64;
    return m;
}

QString errorOf(const std::string& text)
{
    try {
        parseScenario(text, "s.json");
    } catch (const InputError& e) {
        return QString::fromStdString(e.what());
    }
    return QString();
}

LayerTimes times(const Scenario& s, bool moe)
{
    const ModelConstants kc;
    const FrameworkConventions fw = conventions(s.training, s.parallel);
    const ActivationShape a = ActivationShape::of(s, fw);
    const Dims d = dimsOf(s.model, a, s.parallel.ep, s.parallel.expert_tp);
    const KernelModel k = kernelModel(s, kc, nullptr);
    return layerTimes(s.model, d, k, s.parallel, s.training, kc, attentionSetup(s, fw), moe);
}

} // namespace

class TestRecomputeModules : public QObject
{
    Q_OBJECT

private slots:
    void defaultIsTheAttentionCore()
    {
        // Megatron-Core's default list is ["core_attn"]: the same bytes and seconds as before.
        const TrainingSettings t;
        QCOMPARE(t.recompute_modules, std::uint8_t{kRecomputeCoreAttn});
        QVERIFY(t.recomputes(kRecomputeCoreAttn));
        QVERIFY(!t.recomputes(kRecomputeMlp));
        TrainingSettings full = t;
        full.recompute = Recompute::Full; // modules are read under selective only
        QVERIFY(!full.recomputes(kRecomputeCoreAttn));
        // Without flash attention core_attn is what drops the score matrices (Korthikanti
        // Table 2: 2·a·s²·b without dropout); an empty list keeps them.
        ActivationShape a = shape(2048, kRecomputeCoreAttn), none = shape(2048, 0);
        a.flash_attention = none.flash_attention = false;
        const ModelSpec m = gpt(24, 2048, 16);
        const double scores = 2.0 * 16 * 2048 * 2048;
        QCOMPARE(denseLayerActivationBytes(m, none) - denseLayerActivationBytes(m, a), scores);
    }

    void mlpKeepsOnlyItsInput()
    {
        // Llama 3 8B, s 4096, b 1, t 1: the MLP stores its fc1 input 2h and the gated tensors
        // 6·ffn per token (gate and up outputs, their product); checkpointed whole it keeps only
        // the norm input it starts from, already counted: sb·(2·4096 + 6·14336) bytes go.
        const ModelSpec m = llama3_8b();
        const double sb = 4096;
        const double dropped =
            denseLayerActivationBytes(m, shape(4096, kRecomputeCoreAttn)) -
            denseLayerActivationBytes(m, shape(4096, kRecomputeCoreAttn | kRecomputeMlp));
        QCOMPARE(dropped, sb * (2 * 4096 + 6 * 14336));
        // layernorm changes nothing here: Transformer Engine fuses Llama's norms into the GEMMs.
        QCOMPARE(
            denseLayerActivationBytes(m, shape(4096, kRecomputeCoreAttn | kRecomputeLayernorm)),
            denseLayerActivationBytes(m, shape(4096, kRecomputeCoreAttn)));
    }

    void moeModulesDropTheirTensors()
    {
        // Mixtral 8x7B (h 4096, 8 experts top-2, ffn_e 14336), s 4096, t 1, no SP, BF16.
        const ModelSpec m = mixtral8x7b();
        const double sb = 4096, h = 4096, k = 2, fe = 14336, E = 8;
        const auto bytes = [&](std::uint8_t mods) {
            return moeLayerActivationBytes(m, shape(4096, kRecomputeCoreAttn | mods));
        };
        const double base = bytes(0);
        // moe_act: the routed experts' fc2 input, 2 bytes × k × ffn_e per token.
        QCOMPARE(base - bytes(kRecomputeMoeAct), sb * 2 * k * fe);
        // layernorm: the pre-MLP norm's output (the router's input), 2h per token.
        QCOMPARE(base - bytes(kRecomputeLayernorm), sb * 2 * h);
        // moe: all but the layer's input: the k permuted copies 2kh, the combine buffer 2kh,
        // the fp32 logits 4E and the experts' 6·ffn_e per copy.
        QCOMPARE(base - bytes(kRecomputeMoe), sb * (2 * k * h + 2 * k * h + 4 * E + k * 6 * fe));
        // No shared experts: that module has nothing to drop.
        QCOMPARE(bytes(kRecomputeSharedExperts), base);
    }

    void sharedExpertsDropTheirTensors()
    {
        ModelSpec m = mixtral8x7b();
        m.moe.shared_experts = 1;
        const double sb = 4096, fe = 14336;
        const double dropped =
            moeLayerActivationBytes(m, shape(4096, kRecomputeCoreAttn)) -
            moeLayerActivationBytes(m, shape(4096, kRecomputeCoreAttn | kRecomputeSharedExperts));
        QCOMPARE(dropped, sb * 6 * fe);
    }

    void mlaModulesDropTheirTensors()
    {
        // MLA stores Q and K of n_h·(d_nope + d_rope) = 16·96 and V of 16·64 per token; the
        // up-projection module rebuilds them: 2 bytes × (2·1536 + 1024) per token. Its input
        // norm is a module of its own (TENorm before the down-projections): layernorm drops
        // that output, 2h per token.
        const ModelSpec m = mlaModel();
        const double sb = 4096;
        const double base = denseLayerActivationBytes(m, shape(4096, kRecomputeCoreAttn));
        QCOMPARE(base - denseLayerActivationBytes(
                            m, shape(4096, kRecomputeCoreAttn | kRecomputeMlaUpProj)),
                 sb * 2 * (2 * 1536 + 1024));
        QCOMPARE(base - denseLayerActivationBytes(
                            m, shape(4096, kRecomputeCoreAttn | kRecomputeLayernorm)),
                 sb * 2 * 2048);
        // On a model without MLA the module drops nothing.
        QCOMPARE(denseLayerActivationBytes(llama3_8b(),
                                           shape(4096, kRecomputeCoreAttn | kRecomputeMlaUpProj)),
                 denseLayerActivationBytes(llama3_8b(), shape(4096, kRecomputeCoreAttn)));
    }

    void modulesNeverAddMemory()
    {
        // Invariant: every list stores at most what the empty list stores, and the full list
        // at most what any of its parts does.
        ModelSpec moe = mixtral8x7b();
        moe.moe.shared_experts = 1;
        const ModelSpec mla = mlaModel();
        const std::uint8_t all = (1 << kRecomputeModuleCount) - 1;
        for (int mods = 0; mods <= all; ++mods) {
            const ActivationShape a = shape(4096, std::uint8_t(mods));
            for (const ModelSpec* m : {static_cast<const ModelSpec*>(&moe), &mla}) {
                const double dense = denseLayerActivationBytes(*m, a);
                const double layer = moeLayerActivationBytes(*m, a);
                QVERIFY(dense > 0 && layer > 0);
                QVERIFY(dense <= denseLayerActivationBytes(*m, shape(4096, 0)));
                QVERIFY(layer <= moeLayerActivationBytes(*m, shape(4096, 0)));
                QVERIFY(dense >= denseLayerActivationBytes(*m, shape(4096, all)));
                QVERIFY(layer >= moeLayerActivationBytes(*m, shape(4096, all)));
            }
        }
    }

    void mlpRecomputeRepeatsItsForward()
    {
        // Llama 3 8B on one H100, s 4096: the mlp module repeats the MLP's two GEMMs (gate and
        // up fused, then down) and its SwiGLU traffic, 3·ffn two-byte elements per token.
        Scenario s = scenario(llama3_8b(), h100_sxm(), 1, 1, 1, 1, 4096);
        const LayerTimes base = times(s, false);
        s.training.recompute_modules = kRecomputeCoreAttn | kRecomputeMlp;
        const LayerTimes mlp = times(s, false);
        const KernelModel k = kernelModel(s, ModelConstants{}, nullptr);
        double f = 0, b = 0, w = 0;
        k.linear(4096, 4096, 2 * 14336, 1, f, b, w);
        k.linear(4096, 14336, 4096, 1, f, b, w);
        const double expected = f + k.stream(2.0 * 4096 * 3 * 14336);
        QVERIFY(std::abs(mlp.recompute - base.recompute - expected) < 1e-12);
        // The backward gains that and the three kernels' launches (two GEMMs, the activation).
        const double launches = 3 * ModelConstants{}.kernel_launch_seconds;
        QVERIFY(std::abs((mlp.b - base.b) - (mlp.recompute - base.recompute) - launches) < 1e-12);
        QVERIFY(std::abs(mlp.launch - base.launch - launches) < 1e-12);
        QCOMPARE(mlp.f, base.f); // the forward itself is unchanged
        // Every module of a dense layer together repeats less than the whole forward.
        s.training.recompute_modules = (1 << kRecomputeModuleCount) - 1;
        const LayerTimes all = times(s, false);
        s.training.recompute = Recompute::Full;
        QVERIFY(all.recompute < times(s, false).recompute);
    }

    void moeRecomputeRepeatsTheLayer()
    {
        // Mixtral 8x7B, EP 8 on 8 H100: moe_act repeats the activation alone, moe the experts,
        // router and permutes too; either less than the layer's forward.
        Scenario s = scenario(mixtral8x7b(), h100_sxm(), 1, 1, 8, 64, 4096);
        s.parallel.ep = 8;
        const LayerTimes base = times(s, true);
        s.training.recompute_modules = kRecomputeCoreAttn | kRecomputeMoeAct;
        const LayerTimes act = times(s, true);
        s.training.recompute_modules = kRecomputeCoreAttn | kRecomputeMoe;
        const LayerTimes whole = times(s, true);
        QVERIFY(act.recompute > base.recompute);
        QVERIFY(whole.recompute > act.recompute);
        QVERIFY(whole.recompute - base.recompute < base.f - base.core.f);
        // In the step: the moe module repeats the dispatch and combine as well.
        s.training.recompute_modules = kRecomputeCoreAttn;
        const Estimate e0 = evaluate(s);
        s.training.recompute_modules = kRecomputeCoreAttn | kRecomputeMoe;
        const Estimate e1 = evaluate(s);
        QVERIFY(e1.time.exposed.ep + e1.time.overlapped.ep >
                e0.time.exposed.ep + e0.time.overlapped.ep);
        QVERIFY(e1.time.step_seconds > e0.time.step_seconds);
        QVERIFY(e1.peak_bytes < e0.peak_bytes);
    }

    void hardwareFlopsCountTheRepeatedGemms()
    {
        // The mlp module adds one forward of every layer's MLP: 2 · 3 · T·h·ffn per layer (a
        // gated MLP's three matrices), T = 16 × 4096 tokens.
        const ModelSpec m = llama3_8b();
        const double T = 16.0 * 4096;
        const double base =
            hardwareFlopsPerStep(m, 16, 4096, Recompute::Selective, 128256, kRecomputeCoreAttn);
        const double mlp = hardwareFlopsPerStep(m, 16, 4096, Recompute::Selective, 128256,
                                                kRecomputeCoreAttn | kRecomputeMlp);
        QVERIFY(std::abs(mlp - base - 32 * 2 * 3 * T * 4096 * 14336) < 1e-6 * base);
        // The default argument is Megatron's default list.
        QCOMPARE(hardwareFlopsPerStep(m, 16, 4096, Recompute::Selective, 128256), base);
    }

    void scenarioFileRoundTrips()
    {
        const Scenario s = parseScenario(
            R"({"training": {"recompute": "selective", "recompute_modules": ["mlp", "mla_up_proj"]}})",
            "s.json");
        QCOMPARE(s.training.recompute_modules, std::uint8_t(kRecomputeMlp | kRecomputeMlaUpProj));
        const auto names = scenarioToJson(s)["training"]["recompute_modules"];
        QCOMPARE(names.size(), std::size_t(2));
        QCOMPARE(names[0].get<std::string>(), std::string("mla_up_proj")); // bit order
        QVERIFY(parseScenario(scenarioToText(s), "back.json") == s);
        // An empty list is not the default: nothing is recomputed.
        const Scenario empty =
            parseScenario(R"({"training": {"recompute_modules": []}})", "s.json");
        QCOMPARE(empty.training.recompute_modules, std::uint8_t{0});
        QVERIFY(scenarioToJson(empty)["training"]["recompute_modules"].empty());
        QVERIFY(parseScenario(scenarioToText(empty), "back.json") == empty);
        QVERIFY(!scenarioToJson(parseScenario("{}", "d.json"))["training"].contains(
            "recompute_modules"));
        // Bad lists are named.
        QVERIFY(errorOf(R"({"training": {"recompute_modules": "mlp"}})")
                    .contains("training.recompute_modules: expected a list"));
        QVERIFY(errorOf(R"({"training": {"recompute_modules": ["mlp", 3]}})")
                    .contains("training.recompute_modules[1]"));
        const QString unknown = errorOf(R"({"training": {"recompute_modules": ["experts"]}})");
        QVERIFY(unknown.contains("'experts'") && unknown.contains("shared_experts"));
    }

    void megatronOnly()
    {
        // torchtitan's and DeepSpeed's selective recompute are their own: a list there is an
        // impossible plan, named.
        Scenario s = scenario(llama3_8b(), h100_sxm(), 1, 1, 8, 64);
        s.training.recompute_modules = kRecomputeCoreAttn | kRecomputeMlp;
        QVERIFY(!breaks(s, "recompute_modules_megatron"));
        for (Framework f : {Framework::FSDP, Framework::DeepSpeed}) {
            s.training.framework = f;
            QVERIFY(breaks(s, "recompute_modules_megatron"));
            QVERIFY(!isRunnable(s));
        }
        s.training.recompute_modules = kRecomputeCoreAttn; // the default list is fine anywhere
        QVERIFY(!breaks(s, "recompute_modules_megatron"));
    }

    void launchConfigsCarryTheList()
    {
        using namespace testlaunch;
        Scenario s = base("llama3-8b", 8, Framework::Megatron);
        s.training.recompute = Recompute::Selective;
        s.training.recompute_modules = kRecomputeLayernorm | kRecomputeMlp;
        const LaunchConfig mlm = megatronLaunch(s);
        QVERIFY(fileText(mlm, "launch.sh").find("--recompute-modules layernorm mlp") !=
                std::string::npos);
        QCOMPARE(roundTrip(mlm).scenario.training.recompute_modules, s.training.recompute_modules);
        const LaunchConfig bridge = bridgeLaunch(s);
        std::string text = bridge.files.front().text;
        QVERIFY(text.find("model.recompute_modules=[layernorm,mlp]") != std::string::npos);
        QCOMPARE(roundTrip(bridge).scenario.training.recompute_modules,
                 s.training.recompute_modules);
        // Hydra's quoted form reads the same; null is Megatron's default.
        const auto replaced = [&](const std::string& with) {
            std::string t = text;
            const std::string from = "model.recompute_modules=[layernorm,mlp]";
            t.replace(t.find(from), from.size(), with);
            return importLaunch(t, "run.sh").scenario.training.recompute_modules;
        };
        QCOMPARE(replaced("\"model.recompute_modules=['moe_act', 'layernorm']\""),
                 std::uint8_t(kRecomputeMoeAct | kRecomputeLayernorm));
        QCOMPARE(replaced("model.recompute_modules=null"), std::uint8_t{kRecomputeCoreAttn});
        QCOMPARE(replaced("model.recompute_modules=[]"), std::uint8_t{0});
        // The default list is not written.
        s.training.recompute_modules = kRecomputeCoreAttn;
        QVERIFY(fileText(megatronLaunch(s), "launch.sh").find("--recompute-modules") ==
                std::string::npos);
    }

    void megatronScriptsListModules()
    {
        // argparse's nargs='*': the words up to the next option; a shell redirection or pipe
        // ends the list.
        using namespace testlaunch;
        Scenario s = base("llama3-8b", 8, Framework::Megatron);
        std::string text = fileText(megatronLaunch(s), "launch.sh");
        const auto with = [&](const std::string& extra) {
            std::string t = text;
            const auto at = t.find("--recompute-granularity");
            t.insert(at, extra + " \\\n    ");
            return t;
        };
        QCOMPARE(importLaunch(with("--recompute-modules moe_act core_attn"), "l.sh")
                     .scenario.training.recompute_modules,
                 std::uint8_t(kRecomputeMoeAct | kRecomputeCoreAttn));
        std::string tail = text;
        tail.insert(tail.find_last_not_of("\n") + 1, " --recompute-modules mlp 2>&1 | tee log");
        QCOMPARE(importLaunch(tail, "l.sh").scenario.training.recompute_modules,
                 std::uint8_t{kRecomputeMlp});
        try {
            importLaunch(with("--recompute-modules router"), "l.sh");
            QFAIL("an unknown module was read");
        } catch (const InputError& e) {
            const QString what = QString::fromStdString(e.what());
            QVERIFY(what.contains("--recompute-modules") && what.contains("'router'"));
        }
    }
};

QTEST_APPLESS_MAIN(TestRecomputeModules)
#include "test_recompute_modules.moc"
