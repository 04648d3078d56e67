// SPDX-License-Identifier: GPL-3.0-or-later
// training.recompute_num_layers, full recompute of some layers only (Megatron-LM
// --recompute-method block --recompute-num-layers N): which layers each stage leaves stored,
// their activations (Korthikanti et al. 2022 Table 2), the hardware FLOPs (Narayanan et al.
// 2021 Eq. 3 with a layer's forward counted once more per recomputed layer), the step time
// between none and full; the scenario file, validation, and the launch configs' round trips.
#include "core/error.h"
#include "core/evaluate.h"
#include "core/launch_config.h"
#include "core/launch_import.h"
#include "core/params.h"
#include "core/scenario_io.h"
#include "core/validate.h"
#include "launch_test_support.h"
#include "rule_checks.h"
#include "test_scenarios.h"

#include <QTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <vector>

using namespace paralens;
using namespace paralens::testmodels;
using paralens::testrules::breaks;

namespace {

// GPT-3 175B on 64 A100 as in Korthikanti et al. 2022 (t 8, SP, p 8, no flash attention, so
// Table 2's per-layer bytes hold), 12 layers a stage.
Scenario gpt3(Recompute r, int layers = 0)
{
    Scenario s = scenario(gpt3_175b(), a100_80gb(), 8, 8, 1, 64, 2048);
    s.training.flash_attention = false;
    s.training.recompute = r;
    s.training.recompute_num_layers = layers;
    return s;
}

std::vector<StageLayers> split(const ModelSpec& m, const ParallelPlan& p, int n)
{
    std::vector<StageLayers> out(std::size_t(p.pp));
    if (!splitLayers(m, p, LayerSplit::ExtraFirst, out, n))
        qFatal("split failed");
    return out;
}

double relative(double a, double b)
{
    return std::abs(a / b - 1);
}

} // namespace

class TestRecomputeLayers : public QObject
{
    Q_OBJECT
private slots:
    void eachChunkRecomputesItsFirstLayers()
    {
        // 32 layers over p 4 × v 2: chunks of 4. Two per chunk: each stage (two chunks) keeps 4.
        ParallelPlan p;
        p.pp = 4;
        p.virtual_stages = 2;
        p.schedule = Schedule::Interleaved1F1B;
        const ModelSpec m = gpt(32, 4096, 32);
        for (const StageLayers& st : split(m, p, 2)) {
            QCOMPARE(st.layers, 8);
            QCOMPARE(st.stored, 4);
        }
        // A count at or above a chunk's layers recomputes them all; 0 counts nothing stored.
        for (int n : {0, 4, 9})
            for (const StageLayers& st : split(m, p, n))
                QCOMPARE(st.stored, 0);
        // MoE with three leading dense layers (DeepSeek-V3's layout), 12 layers, p 2: stage 0
        // holds layers 0-5 and recomputes 0-1, so stores 2-5, of which 3-5 are MoE; stage 1
        // stores 8-11, all MoE.
        ModelSpec moe = mixtral8x7b();
        moe.layers = 12;
        moe.moe.first_dense_layers = 3;
        ParallelPlan q;
        q.pp = 2;
        const std::vector<StageLayers> st = split(moe, q, 2);
        QCOMPARE(st[0].stored, 4);
        QCOMPARE(st[0].stored_moe, 3);
        QCOMPARE(st[1].stored, 4);
        QCOMPARE(st[1].stored_moe, 4);
    }

    void storedLayersKeepKorthikantisActivations()
    {
        // Korthikanti Table 2 with t 8 and SP: a layer keeps sbh(34/t + 5as/(ht)) bytes without
        // recompute, 2sbh/t (its input) with full. Recomputing 4 of 12 layers a stage stores
        // the other 8 whole, for every micro-batch the stage holds; the one layer the backward
        // rebuilds at a time is the same as with full recompute.
        const double s = 2048, h = 12288, a = 96, t = 8;
        const double sbh = s * h;
        const double none = sbh * (34 / t + 5 * a * s / (h * t)), full = 2 * sbh / t;
        const Estimate all = evaluate(gpt3(Recompute::Full));
        const Estimate part = evaluate(gpt3(Recompute::Full, 4));
        QCOMPARE(part.stages.size(), std::size_t(8));
        for (std::size_t r = 0; r < 8; ++r) {
            const StageMemory &x = part.stages[r], &y = all.stages[r];
            QCOMPARE(x.stored_layers, 8);
            QCOMPARE(x.inflight_microbatches, y.inflight_microbatches);
            const double expected = x.inflight_microbatches * 8 * (none - full);
            QVERIFY2(relative(x.activations - y.activations, expected) < 1e-9,
                     qPrintable(QString::number(x.activations - y.activations)));
        }
        // Between full and none; a count of 12 (the stage's layers) is full recompute itself.
        const Estimate plain = evaluate(gpt3(Recompute::None));
        QVERIFY(part.peak_bytes > all.peak_bytes && part.peak_bytes < plain.peak_bytes);
        QCOMPARE(evaluate(gpt3(Recompute::Full, 12)).peak_bytes, all.peak_bytes);
    }

    void hardwareFlopsCountOnlyTheRecomputedLayers()
    {
        // Narayanan et al. 2021 Eq. 3 counts full recompute: 96·B·s·l·h²(1 + s/(6h) + V/(16lh)).
        // Without recompute a layer costs 72·B·s·h²(1 + s/(6h)); each recomputed layer adds its
        // forward, 24·B·s·h²(1 + s/(6h)). 4 of 12 layers per stage: 32 of 96.
        const Scenario sc = gpt3(Recompute::Full, 4);
        const double B = 64, s = 2048, l = 96, h = 12288, V = double(sc.model.vocab);
        const double layer = B * s * h * h * (1 + s / (6 * h));
        const double expected = 72 * l * layer + 24 * 32 * layer + 6 * B * s * h * V;
        const Estimate e = evaluate(sc);
        QVERIFY2(relative(e.throughput.hardware_flops_per_step, expected) < 1e-9,
                 qPrintable(QString::number(e.throughput.hardware_flops_per_step / expected)));
        // The model FLOPs do not depend on recompute.
        QCOMPARE(e.throughput.model_flops_per_step,
                 evaluate(gpt3(Recompute::None)).throughput.model_flops_per_step);
    }

    void stepTimeRepeatsOnlyTheRecomputedLayers()
    {
        // One stage (no pipeline, no DP): the step is its layers' times, the head and the
        // optimizer. The layers a count leaves stored cost what they cost without recompute,
        // the others what they cost with full: the step is linear in the count, and the TP
        // collectives the recomputed forwards repeat follow it.
        Scenario base = scenario(llama3_8b(), h100_sxm(), 8, 1, 1, 8, 8192);
        auto at = [&](Recompute r, int n) {
            Scenario s = base;
            s.training.recompute = r;
            s.training.recompute_num_layers = n;
            return evaluate(s).time;
        };
        const TimeBreakdown none = at(Recompute::None, 0), full = at(Recompute::Full, 0);
        QVERIFY(full.step_seconds > none.step_seconds);
        for (int n : {1, 8, 20}) {
            const TimeBreakdown t = at(Recompute::Full, n);
            const double share = n / 32.0;
            const double step = none.step_seconds + share * (full.step_seconds - none.step_seconds);
            QVERIFY2(relative(t.step_seconds, step) < 1e-9, qPrintable(QString::number(n)));
            const double tp = none.exposed.tp + share * (full.exposed.tp - none.exposed.tp);
            QVERIFY(relative(t.exposed.tp, tp) < 1e-9);
            QVERIFY(relative(t.compute_seconds,
                             none.compute_seconds +
                                 share * (full.compute_seconds - none.compute_seconds)) < 1e-9);
        }
    }

    void scenarioFileAndValidation()
    {
        const Scenario s = parseScenario(
            R"({"training": {"recompute": "full", "recompute_num_layers": 12}})", "s.json");
        QCOMPARE(s.training.recompute_num_layers, 12);
        QCOMPARE(scenarioToJson(s)["training"]["recompute_num_layers"].get<int>(), 12);
        QVERIFY(parseScenario(scenarioToText(s), "back.json") == s);
        QVERIFY(!scenarioToJson(parseScenario("{}", "d.json"))["training"].contains(
            "recompute_num_layers"));
        // Out of range and wrong types are named.
        for (const char* bad : {R"({"training": {"recompute_num_layers": -1}})",
                                R"({"training": {"recompute_num_layers": "all"}})"}) {
            try {
                parseScenario(bad, "b.json");
                QFAIL("accepted");
            } catch (const InputError& e) {
                QVERIFY(std::string(e.what()).find("training.recompute_num_layers") !=
                        std::string::npos);
            }
        }
        // A count is full recompute's: under none or selective it is an impossible plan.
        Scenario v = gpt3(Recompute::Full, 4);
        QVERIFY(!breaks(v, "recompute_num_layers_full"));
        for (Recompute r : {Recompute::None, Recompute::Selective}) {
            v.training.recompute = r;
            QVERIFY(breaks(v, "recompute_num_layers_full"));
        }
    }

    void megatronLaunchesTheBlockMethod()
    {
        using namespace testlaunch;
        Scenario s = base("llama3-70b", 64, Framework::Megatron);
        s.parallel.dp = 8;
        s.parallel.tp = 8;
        s.training.recompute = Recompute::Full;
        s.training.recompute_num_layers = 12;
        const LaunchConfig mlm = megatronLaunch(s);
        const std::string& text = fileText(mlm, "launch.sh");
        QVERIFY(text.find("--recompute-method block") != std::string::npos);
        QVERIFY(text.find("--recompute-num-layers 12") != std::string::npos);
        QCOMPARE(roundTrip(mlm).scenario.training.recompute_num_layers, 12);
        const LaunchConfig bridge = bridgeLaunch(s);
        const std::string& b = bridge.files.front().text;
        QVERIFY(b.find("model.recompute_method=block") != std::string::npos);
        QVERIFY(b.find("model.recompute_num_layers=12") != std::string::npos);
        QCOMPARE(roundTrip(bridge).scenario.training.recompute_num_layers, 12);
        // Every layer is Megatron's uniform method, one layer a checkpoint, as before.
        s.training.recompute_num_layers = 0;
        const std::string all = fileText(megatronLaunch(s), "launch.sh");
        QVERIFY(all.find("--recompute-method uniform") != std::string::npos);
        QCOMPARE(roundTrip(megatronLaunch(s)).scenario.training.recompute_num_layers, 0);
        QVERIFY(roundTrip(megatronLaunch(s)).scenario.training.recompute == Recompute::Full);
    }

    void torchtitanEveryKthBlock()
    {
        using namespace testlaunch;
        // torchtitan's selective_ac_option k checkpoints every k-th block: 2 of Llama 3 8B's
        // 32 layers is 16 recomputed, written and read back as such.
        Scenario s = base("llama3-8b", 8, Framework::FSDP);
        s.parallel.zero = 3;
        s.training.recompute = Recompute::Full;
        s.training.recompute_num_layers = 16;
        const LaunchConfig tt = torchtitanLaunch(s);
        const std::string& text = tt.files.front().text;
        QVERIFY2(text.find("selective_ac_option = \"2\"") != std::string::npos, text.c_str());
        const LaunchImport back = roundTrip(tt);
        QVERIFY(back.scenario.training.recompute == Recompute::Full);
        QCOMPARE(back.scenario.training.recompute_num_layers, 16);
        // 8 of 32 is every fourth block.
        s.training.recompute_num_layers = 8;
        QVERIFY(torchtitanLaunch(s).files.front().text.find("selective_ac_option = \"4\"") !=
                std::string::npos);
        // torchtitan's Llama 3 8B config with the option left out: the TOML-era default "2"
        // (JobConfig selective_ac_option, at 9dec370 through 2c8b5947) is every other block.
        QFile f(QStringLiteral(PARALENS_SOURCE_DIR
                               "/tests/data/launch/files/torchtitan-llama3-8b.toml"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        std::string toml = f.readAll().toStdString();
        const std::string op = "selective_ac_option = \"op\"";
        const auto at = toml.find(op);
        QVERIFY(at != std::string::npos);
        const LaunchImport asOp = importLaunch(toml, "llama3_8b.toml");
        QVERIFY(asOp.scenario.training.recompute == Recompute::Selective);
        toml.erase(at, op.size());
        const LaunchImport dflt = importLaunch(toml, "llama3_8b.toml");
        QVERIFY(dflt.scenario.training.recompute == Recompute::Full);
        QCOMPARE(dflt.scenario.training.recompute_num_layers, 16);
        toml.insert(at, "selective_ac_option = \"every\"");
        try {
            importLaunch(toml, "llama3_8b.toml");
            QFAIL("accepted");
        } catch (const InputError& e) {
            QVERIFY(std::string(e.what()).find("selective_ac_option") != std::string::npos);
        }
    }
};

QTEST_APPLESS_MAIN(TestRecomputeLayers)
#include "test_recompute_layers.moc"
