// SPDX-License-Identifier: GPL-3.0-or-later
// training.fp8_param_gather and Transformer Engine's cached FP8 weights: the bytes each keeps
// (hand-counted from Llama 3 70B's shapes, Llama 3 paper Table 3), what the DP parameter
// gather moves, and that the Megatron and Megatron-Bridge launch files say it and read it back.
#include "core/error.h"
#include "core/evaluate.h"
#include "core/framework.h"
#include "core/gpu_family.h"
#include "core/kernel_time.h"
#include "core/launch_config.h"
#include "core/launch_import.h"
#include "core/scenario_io.h"
#include "test_scenarios.h"

#include <nlohmann/json.hpp>

#include <QTest>

#include <algorithm>
#include <cmath>

using namespace paralens;
using namespace paralens::testmodels;

namespace {

// Llama 3 70B on 8 H100: t 4 with SP, dp 2, Megatron's distributed optimizer, FP8.
Scenario fp8Plan(bool params, int zero = 1)
{
    Scenario s = scenario(llama3_70b(), h100_sxm(), 4, 1, 2, 16, 8192);
    s.parallel.zero = zero;
    s.training.framework = Framework::Megatron;
    s.training.precision = Precision::FP8;
    s.training.recompute = Recompute::Full;
    s.training.fp8_param_gather = params;
    return s;
}

FrameworkConventions conv(Framework f, Precision p, bool params)
{
    Scenario s = fp8Plan(params);
    s.training.framework = f;
    s.training.precision = p;
    return conventions(s.training, s.parallel);
}

double dpSeconds(const Estimate& e)
{
    return e.time.exposed.dp + e.time.overlapped.dp;
}

bool warns(const LaunchConfig& c, const std::string& id)
{
    return std::any_of(c.warnings.begin(), c.warnings.end(),
                       [&](const LaunchWarning& w) { return w.id == id; });
}

} // namespace

class TestFp8Params : public QObject
{
    Q_OBJECT
private slots:
    void conventionsPerFramework()
    {
        const bool h100 = isBlackwell("H100 SXM5"), b200 = isBlackwell("B200");
        // Hopper, bf16 weights: TE's rowwise copy and its transpose, 1 + 1 bytes beside them.
        const FrameworkConventions cache = conv(Framework::Megatron, Precision::FP8, false);
        QCOMPARE(fp8WeightExtraBytes(cache, Fp8Recipe::Default, h100), 2.0);
        QCOMPARE(cache.linear_gather_bytes, 2.0);
        // FP8 parameters are those two copies instead of the bf16 weight; gathered at 1 byte.
        const FrameworkConventions params = conv(Framework::Megatron, Precision::FP8, true);
        QCOMPARE(fp8WeightExtraBytes(params, Fp8Recipe::Default, h100), 0.0);
        QCOMPARE(params.linear_gather_bytes, 1.0);
        // Blackwell runs per-tensor FP8 GEMMs on either layout: one copy serves both usages;
        // MXFP8 scales rows and columns apart: two copies there too.
        QCOMPARE(fp8WeightExtraBytes(cache, Fp8Recipe::Tensorwise, b200), 1.0);
        QCOMPARE(fp8WeightExtraBytes(params, Fp8Recipe::Tensorwise, isBlackwell("GB200")), -1.0);
        QCOMPARE(fp8WeightExtraBytes(cache, Fp8Recipe::Mxfp8, b200), 2.0);
        QCOMPARE(fp8WeightExtraBytes(params, Fp8Recipe::Mxfp8, b200), 0.0);
        // Neither in BF16, nor in DeepSpeed.
        for (const FrameworkConventions& c : {conv(Framework::Megatron, Precision::BF16, true),
                                              conv(Framework::DeepSpeed, Precision::FP8, true)}) {
            QCOMPARE(fp8WeightExtraBytes(c, Fp8Recipe::Default, h100), 0.0);
            QCOMPARE(c.linear_gather_bytes, c.weight_bytes);
        }
        // PyTorch FSDP with torchao's float8 all-gather (tensorwise, the FSDP default): 1-byte
        // gathers and FSDP2's copy-out of them (read 1, write 1); no Transformer Engine copies.
        Scenario f = fp8Plan(true, 3);
        f.training.framework = Framework::FSDP;
        const FrameworkConventions fsdp = conventions(f.training, f.parallel);
        QCOMPARE(fsdp.linear_gather_bytes, 1.0);
        QCOMPARE(fsdp.zero3_gather_copy_bytes, 2.0);
        QCOMPARE(fp8WeightExtraBytes(fsdp, Fp8Recipe::Default, h100), 0.0);
        // Rowwise recipes gather bf16 (the cast follows the gather); so does the default off.
        f.training.fp8_recipe = Fp8Recipe::Rowwise;
        QCOMPARE(conventions(f.training, f.parallel).linear_gather_bytes, 2.0);
        f.training.fp8_recipe = Fp8Recipe::Default;
        f.training.fp8_param_gather = false;
        QCOMPARE(conventions(f.training, f.parallel).zero3_gather_copy_bytes, 4.0);
    }

    void cacheIsTwoBytesPerLinearWeight()
    {
        // Per layer q, k, v, o = 8192·(8192 + 2·1024 + 8192) and w1, w3, w2 = 3·8192·28672, over
        // t 4, plus two RMSNorm weights of 8192 (replicated): 213,925,888 on a GPU; 80 layers.
        const double perLayer =
            (8192.0 * (8192 + 2 * 1024 + 8192) + 3 * 8192.0 * 28672) / 4 + 2 * 8192.0;
        const double expected = 2 * 80 * perLayer;
        const Estimate cached = evaluate(fp8Plan(false));
        const Estimate params = evaluate(fp8Plan(true));
        const double diff = cached.stages[0].parameters - params.stages[0].parameters;
        // The final norm (8192) may count with the layers.
        QVERIFY2(std::abs(diff - expected) <= 2 * 8192.0, qPrintable(QString::number(diff)));
        QCOMPARE(cached.stages[0].gradients, params.stages[0].gradients);
        QCOMPARE(cached.stages[0].optimizer_states, params.stages[0].optimizer_states);
        // BF16 training keeps no FP8 copy: its parameters are the FP8-parameter run's (2 bytes).
        Scenario bf16 = fp8Plan(false);
        bf16.training.precision = Precision::BF16;
        QCOMPARE(evaluate(bf16).stages[0].parameters, params.stages[0].parameters);
        // On Blackwell a per-tensor FP8 parameter is one byte: 1 byte per linear weight under
        // the bf16 run's, the cache 1 byte over it.
        Scenario b = fp8Plan(false);
        b.cluster = gb200_nvl72();
        b.training.fp8_recipe = Fp8Recipe::Tensorwise;
        Scenario bp = b, bb = b;
        bp.training.fp8_param_gather = true;
        bb.training.precision = Precision::BF16;
        const double bf16Params = evaluate(bb).stages[0].parameters;
        QVERIFY(std::abs(bf16Params - evaluate(bp).stages[0].parameters - expected / 2) <= 8192.0);
        QVERIFY(std::abs(evaluate(b).stages[0].parameters - bf16Params - expected / 2) <= 8192.0);
    }

    void fsdpFloat8GatherCastsTheShard()
    {
        // torchao's float8 all-gather over 8 shards: W (K×N = 4096×4096) is cast on its shard
        // (read 4, write 1 per shard element) and the backward makes only its transposed copy
        // (read 1, write 1); X and dY keep their casts (6 bytes each per element).
        const double M = 8192, K = 4096, N = 4096, wt = K * N;
        const Fp8CastBytes plain = fp8CastBytes(M, K, N, Fp8Recipe::Tensorwise);
        const Fp8CastBytes gathered = fp8CastBytes(M, K, N, Fp8Recipe::Tensorwise, 1, 1, 8);
        QCOMPARE(plain.forward - gathered.forward, (5 - 5.0 / 8) * wt);
        QCOMPARE(plain.backward - gathered.backward, (3 - 2.0) * wt);
        QCOMPARE(gathered.forward, 6 * M * K + 5.0 / 8 * wt);
    }

    void fp8ParamsGatherInFp8()
    {
        // The distributed optimizer's parameter gather moves 1 byte per linear weight instead
        // of 2: less DP time. Without it (zero 0, gradients all-reduced) nothing changes.
        QVERIFY(dpSeconds(evaluate(fp8Plan(true))) < dpSeconds(evaluate(fp8Plan(false))));
        QCOMPARE(dpSeconds(evaluate(fp8Plan(true, 0))), dpSeconds(evaluate(fp8Plan(false, 0))));
    }

    void launchFilesSayItAndReadItBack()
    {
        for (LaunchFramework f : {LaunchFramework::Megatron, LaunchFramework::MegatronBridge}) {
            for (bool on : {true, false}) {
                const Scenario s = fp8Plan(on);
                const LaunchConfig c = launchConfig(s, f);
                const std::string& text = c.files.front().text;
                QVERIFY(!warns(c, "fp8_param_gather_not_written"));
                if (f == LaunchFramework::Megatron)
                    QCOMPARE(text.find("--fp8-param-gather") != std::string::npos, on);
                else
                    QVERIFY(text.find(std::string("mixed_precision.fp8_param_gather") +
                                      (on ? ": true" : ": false")) != std::string::npos ||
                            text.find(std::string("mixed_precision.fp8_param_gather=") +
                                      (on ? "true" : "false")) != std::string::npos);
                QCOMPARE(importLaunch(text, "launch").scenario.training.fp8_param_gather, on);
            }
        }
        // Megatron-LM asserts the distributed optimizer for FP8 parameters.
        QVERIFY(warns(launchConfig(fp8Plan(true, 0), LaunchFramework::Megatron),
                      "fp8_param_gather_needs_distributed_optimizer"));
        QVERIFY(!warns(launchConfig(fp8Plan(true, 1), LaunchFramework::Megatron),
                       "fp8_param_gather_needs_distributed_optimizer"));
        // torchtitan: torchao's float8 all-gather with precomputed scales, tensorwise only.
        Scenario t = fp8Plan(true, 3);
        t.training.framework = Framework::FSDP;
        const std::string toml = launchConfig(t, LaunchFramework::Torchtitan).files.front().text;
        QVERIFY(toml.find("enable_fsdp_float8_all_gather = true") != std::string::npos);
        QVERIFY(importLaunch(toml, "train.toml", {"llama3-70b", "h100-sxm"})
                    .scenario.training.fp8_param_gather);
        t.training.fp8_param_gather = false;
        const std::string off = launchConfig(t, LaunchFramework::Torchtitan).files.front().text;
        QVERIFY(off.find("enable_fsdp_float8_all_gather") == std::string::npos);
        QVERIFY(!importLaunch(off, "train.toml", {"llama3-70b", "h100-sxm"})
                     .scenario.training.fp8_param_gather);
        t.training.fp8_param_gather = true;
        t.training.fp8_recipe = Fp8Recipe::Rowwise;
        QVERIFY(
            warns(launchConfig(t, LaunchFramework::Torchtitan), "fp8_param_gather_not_written"));
        // DeepSpeed has no FP8 parameters; a BF16 plan has nothing to gather in FP8.
        QVERIFY(warns(launchConfig(fp8Plan(true), LaunchFramework::DeepSpeed),
                      "fp8_param_gather_not_written"));
        Scenario bf16 = fp8Plan(true);
        bf16.training.precision = Precision::BF16;
        QVERIFY(
            warns(launchConfig(bf16, LaunchFramework::Megatron), "fp8_param_gather_not_written"));
    }

    void scenarioFileRoundTrip()
    {
        const Scenario s = parseScenario(
            R"({"training": {"precision": "fp8", "fp8_param_gather": true}})", "p.json");
        QVERIFY(s.training.fp8_param_gather);
        QVERIFY(parseScenario(scenarioToText(s), "p2.json") == s);
        QVERIFY(!scenarioToJson(defaultScenario())["training"].contains("fp8_param_gather"));
        try {
            (void)parseScenario(R"({"training": {"fp8_param_gather": "yes"}})", "p3.json");
            QFAIL("a string accepted");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("fp8_param_gather") != std::string::npos, e.what());
        }
    }
};

QTEST_APPLESS_MAIN(TestFp8Params)
#include "test_fp8_params.moc"
