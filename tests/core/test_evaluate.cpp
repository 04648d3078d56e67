// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/evaluate.h"
#include "test_scenarios.h"

#include <QTest>

#include <cmath>
#include <optional>

using namespace paralens;
using namespace paralens::testmodels;

namespace {
bool finite(double x)
{
    return std::isfinite(x) && x >= 0;
}

bool allFinite(const Estimate& e)
{
    bool ok = finite(e.peak_bytes) && finite(e.capacity_bytes);
    for (const auto& s : e.stages)
        ok = ok && finite(s.parameters) && finite(s.gradients) && finite(s.optimizer_states) &&
             finite(s.activations) && finite(s.comm_buffers) && finite(s.runtime_overhead) &&
             finite(s.inflight_microbatches);
    const auto& t = e.time;
    ok = ok && finite(t.step_seconds) && finite(t.compute_seconds) && finite(t.bubble_seconds) &&
         finite(t.bubble_fraction) && finite(t.bubble_overhead) && finite(t.exposed.total()) &&
         finite(t.overlapped.total()) && finite(t.optimizer_seconds) && finite(t.offload_seconds);
    const auto& th = e.throughput;
    return ok && finite(th.tokens_per_second) && finite(th.model_flops_per_step) &&
           finite(th.hardware_flops_per_step) && finite(th.tflops_per_gpu) && finite(th.mfu) &&
           finite(th.hfu);
}

double narayananEq3(const Scenario& s)
{
    const double B = s.training.global_batch, sq = s.training.seq_len, l = s.model.layers,
                 h = double(s.model.hidden), V = double(s.model.vocab);
    return 96 * B * sq * l * h * h * (1 + sq / (6 * h) + V / (16 * l * h));
}
} // namespace

class TestEvaluate : public QObject
{
    Q_OBJECT
private slots:
    // Narayanan et al. 2021 Table 1: TFLOP/s per GPU counted with Eq. 3. Tolerance ±25 %.
    void narayananTable1_data()
    {
        QTest::addColumn<int>("layers");
        QTest::addColumn<int>("hidden");
        QTest::addColumn<int>("heads");
        QTest::addColumn<int>("tp");
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("gpus");
        QTest::addColumn<int>("batch");
        QTest::addColumn<double>("tflops");
        QTest::newRow("1.7B") << 24 << 2304 << 24 << 1 << 1 << 32 << 512 << 137.0;
        QTest::newRow("18.4B") << 40 << 6144 << 48 << 8 << 1 << 256 << 1024 << 135.0;
        QTest::newRow("145.6B") << 80 << 12288 << 96 << 8 << 8 << 1536 << 2304 << 148.0;
        QTest::newRow("529.6B") << 105 << 20480 << 128 << 8 << 35 << 2520 << 2520 << 163.0;
        QTest::newRow("1T") << 128 << 25600 << 160 << 8 << 64 << 3072 << 3072 << 163.0;
    }
    void narayananTable1()
    {
        QFETCH(int, layers);
        QFETCH(int, hidden);
        QFETCH(int, heads);
        QFETCH(int, tp);
        QFETCH(int, pp);
        QFETCH(int, gpus);
        QFETCH(int, batch);
        QFETCH(double, tflops);
        const Scenario s = narayananRow(layers, hidden, heads, tp, pp, gpus, batch);
        const Estimate e = evaluate(s);
        QCOMPARE(e.gpus, gpus);
        QVERIFY(e.fits);
        const double predicted = narayananEq3(s) / (e.time.step_seconds * gpus) / 1e12;
        QVERIFY2(std::abs(predicted / tflops - 1) < 0.25,
                 qPrintable(QString("predicted %1 vs %2").arg(predicted).arg(tflops)));
        // The Eq. 3 figure is HFU-like: it matches our hardware FLOPs (full recompute).
        QVERIFY(std::abs(e.throughput.hardware_flops_per_step / narayananEq3(s) - 1) < 1e-9);
    }

    void llama405bOnPp16()
    {
        Scenario s = scenario(llama3_405b(), h100_sxm(), 8, 16, 8, 512, 8192);
        s.parallel.zero = 1;
        s.parallel.schedule = Schedule::Interleaved1F1B;
        s.parallel.virtual_stages = 2;
        const Estimate e = evaluate(s);
        QCOMPARE(int(e.stages.size()), 16);
        int layers = 0;
        for (const auto& st : e.stages)
            layers += st.layers;
        QCOMPARE(layers, 126);
        QCOMPARE(e.stages.front().layers, 7); // 3 + 4 with the short first chunk
        QVERIFY(allFinite(e));
        QVERIFY(e.throughput.tokens_per_second > 0);
        QVERIFY(e.throughput.mfu > 0.1 && e.throughput.mfu < 0.8);
    }

    void totalsAreSumOfParts()
    {
        Scenario s = scenario(llama3_70b(), h100_sxm(), 8, 4, 4, 256);
        const Estimate e = evaluate(s);
        double peak = 0;
        for (const auto& st : e.stages) {
            QCOMPARE(st.total(), st.parameters + st.gradients + st.optimizer_states +
                                     st.activations + st.comm_buffers + st.runtime_overhead);
            peak = std::max(peak, st.total());
        }
        QCOMPARE(e.peak_bytes, peak);
        QCOMPARE(e.stages[std::size_t(e.peak_stage)].total(), peak);
        QVERIFY(e.time.step_seconds >= e.time.compute_seconds + e.time.exposed.total() - 1e-9);
    }

    void memoryFallsWithEachZeroStage()
    {
        for (Framework f : {Framework::Megatron, Framework::DeepSpeed, Framework::FSDP}) {
            double lastStates = 1e300, lastTotal = 1e300;
            for (int z = 0; z <= 3; ++z) {
                Scenario s = scenario(llama3_8b(), h100_sxm(), 1, 1, 64, 512);
                s.training.framework = f;
                s.parallel.zero = z;
                const Estimate e = evaluate(s);
                const auto& st = e.stages[0];
                const double states = st.parameters + st.gradients + st.optimizer_states;
                QVERIFY(states < lastStates);
                QVERIFY(e.peak_bytes < lastTotal);
                lastStates = states;
                lastTotal = e.peak_bytes;
            }
        }
    }

    void moreTpNeverRaisesParameterBytes()
    {
        double last = 1e300;
        for (int t : {1, 2, 4, 8}) {
            Scenario s = scenario(llama3_70b(), h100_sxm(), t, 2, 64 / (2 * t), 256);
            const Estimate e = evaluate(s);
            double peak = 0;
            for (const auto& st : e.stages)
                peak = std::max(peak, st.parameters);
            QVERIFY(peak <= last);
            last = peak;
        }
    }

    void doesNotFitNamesTheStage()
    {
        // Llama-3 70B with plain DP on 8 H100: 18 B/param × 70.6 B ≫ 80 GB.
        Scenario s = scenario(llama3_70b(), h100_sxm(), 1, 1, 8, 64);
        Estimate e = evaluate(s);
        QVERIFY(!e.fits);
        QVERIFY(e.has(Warning::DoesNotFit));
        QCOMPARE(e.peak_stage, 0);
        const auto texts = warningTexts(e);
        bool named = false;
        for (const auto& t : texts)
            named = named || t.find("stage 0") != std::string::npos;
        QVERIFY(named);
        // GPipe with many micro-batches on PP 4: every stage holds m; the last stage adds the
        // LM head and logits, so it is the one over capacity.
        s = scenario(llama3_8b(), h100_sxm(), 1, 4, 2, 512, 8192);
        s.parallel.schedule = Schedule::GPipe;
        s.training.recompute = Recompute::None;
        e = evaluate(s);
        QVERIFY(!e.fits);
        QCOMPARE(e.peak_stage, 3);
        named = false;
        for (const auto& t : warningTexts(e))
            named = named || t.find("stage 3") != std::string::npos;
        QVERIFY(named);
    }

    void noNanOverAGrid()
    {
        int checked = 0;
        Estimate e; // reused, as a search does
        for (const ModelSpec& m : {llama3_8b(), llama3_70b(), mixtral8x7b(), gpt3_175b()})
            for (int t : {1, 2, 4, 8})
                for (int p : {1, 2, 4})
                    for (int z = 0; z <= 3; ++z)
                        for (int r = 0; r < 3; ++r)
                            for (auto sch :
                                 {Schedule::OneF1B, Schedule::GPipe, Schedule::Interleaved1F1B,
                                  Schedule::ZBH1, Schedule::ZBV, Schedule::DualPipeV}) {
                                const int dp = 64 / (t * p);
                                Scenario s = scenario(m, h100_sxm(), t, p, dp, 4 * dp);
                                s.parallel.zero = z;
                                s.parallel.schedule = sch;
                                s.parallel.virtual_stages =
                                    (sch == Schedule::OneF1B || sch == Schedule::GPipe ||
                                     sch == Schedule::ZBH1)
                                        ? 1
                                        : 2;
                                s.parallel.ep = m.isMoe() ? std::min(dp, 8) : 1;
                                s.parallel.offload_optimizer = (z == 2);
                                s.training.recompute = static_cast<Recompute>(r);
                                s.training.flash_attention = (r != 1);
                                evaluate(s, e);
                                QVERIFY(allFinite(e));
                                QVERIFY(e.throughput.tokens_per_second > 0);
                                QVERIFY(e.time.bubble_fraction < 1);
                                QCOMPARE(int(e.stages.size()), p);
                                ++checked;
                            }
        QVERIFY(checked > 1000);
    }

    void unvalidatedGarbageNeverCrashes()
    {
        // evaluate() expects a runnable plan, but a caller that skips validate() must still get
        // finite numbers, not a crash.
        Estimate e;
        for (int v : {0, -1}) {
            Scenario s = scenario(llama3_8b(), h100_sxm(), 1, 1, 1, 8);
            s.training.micro_batch = v;
            evaluate(s, e);
            QVERIFY(allFinite(e));
            s = scenario(llama3_8b(), h100_sxm(), 1, 1, 1, 8);
            s.parallel.dp = v;
            s.parallel.tp = v;
            s.parallel.pp = v;
            evaluate(s, e);
            QVERIFY(allFinite(e));
            s = scenario(llama3_8b(), h100_sxm(), 1, 1, 1, 8);
            s.training.seq_len = v;
            s.cluster.gpu.bf16_tflops = v;
            s.cluster.gpu.hbm_gbps = v;
            s.cluster.scale_up_gbps = v;
            evaluate(s, e);
            QVERIFY(allFinite(e));
            s = scenario(mixtral8x7b(), h100_sxm(), 1, 1, 1, 8);
            s.model.hidden = v == 0 ? 0 : 1;
            s.model.heads = 0;
            s.parallel.ep = v;
            evaluate(s, e);
            QVERIFY(allFinite(e));
        }
        Scenario s = scenario(llama3_8b(), h100_sxm(), 1, 40, 1, 64); // more stages than layers
        evaluate(s, e);
        QVERIFY(allFinite(e));
    }

    void warningsAsData()
    {
        Scenario s = scenario(llama3_70b(), h100_sxm(), 16, 1, 4, 64);
        Estimate e = evaluate(s);
        QVERIFY(e.has(Warning::TpCrossesNodes));
        s = scenario(llama3_70b(), h100_sxm(), 8, 8, 1, 4);
        e = evaluate(s);
        QVERIFY(e.has(Warning::LowMicrobatches));
        QVERIFY(e.has(Warning::BubbleAbove20));
        QVERIFY(!e.has(Warning::TpCrossesNodes));
        QCOMPARE(int(warningTexts(e).size()) >= 2, true);
    }

    void cpAndEpAreModelled()
    {
        Scenario s = scenario(llama3_70b(), h100_sxm(), 8, 2, 2, 64, 32768);
        s.parallel.cp = 2;
        const Estimate withCp = evaluate(s);
        QVERIFY(withCp.time.exposed.cp + withCp.time.overlapped.cp > 0);
        s.parallel.cp = 1;
        s.parallel.dp = 4;
        const Estimate noCp = evaluate(s);
        // Same GPUs; CP halves the per-GPU activations of a sequence.
        QVERIFY(withCp.stages[0].activations < noCp.stages[0].activations);

        Scenario x = scenario(mixtral8x7b(), h100_sxm(), 2, 1, 16, 256);
        x.parallel.ep = 8;
        const Estimate ep8 = evaluate(x);
        QVERIFY(ep8.time.exposed.ep > 0);
        x.parallel.ep = 1;
        const Estimate ep1 = evaluate(x);
        QVERIFY(ep8.stages[0].parameters < ep1.stages[0].parameters / 4);
    }

    void frameworkOffloadHybridAndCalibration()
    {
        // Framework dtypes: Megatron's fp32 main grads are twice DeepSpeed's bf16 grads.
        Scenario s = scenario(llama3_8b(), h100_sxm(), 1, 1, 64, 512);
        const Estimate meg = evaluate(s);
        s.training.framework = Framework::DeepSpeed;
        const Estimate ds = evaluate(s);
        QCOMPARE(meg.stages[0].gradients, 2 * ds.stages[0].gradients);
        QCOMPARE(meg.stages[0].parameters, ds.stages[0].parameters);

        // Offload: no optimizer bytes on the GPU, PCIe + CPU time instead of the GPU step.
        s = scenario(llama3_8b(), h100_sxm(), 1, 1, 64, 512);
        s.parallel.zero = 2;
        s.parallel.offload_optimizer = true;
        const Estimate off = evaluate(s);
        QCOMPARE(off.stages[0].optimizer_states, 0.0);
        QVERIFY(off.time.offload_seconds > 0);
        QCOMPARE(off.time.optimizer_seconds, 0.0);

        // Hybrid sharding: ZeRO-3 inside groups of 8 holds 8× the parameters of full sharding
        // over 64.
        s = scenario(llama3_8b(), h100_sxm(), 1, 1, 64, 512);
        s.parallel.zero = 3;
        const Estimate full = evaluate(s);
        s.parallel.shard_group = 8;
        const Estimate hybrid = evaluate(s);
        QVERIFY(std::abs(hybrid.stages[0].parameters / full.stages[0].parameters - 8) < 1e-9);
        QVERIFY(hybrid.time.exposed.dp + hybrid.time.overlapped.dp > 0);
    }

    void measuredProfileIsUsed()
    {
        struct Slow : MeasuredPerformance
        {
            std::optional<double> collectiveSeconds(Collective, int, Span, double) const override
            {
                return 0.01;
            }
            std::optional<double> gemmEfficiency(double, double, double, bool) const override
            {
                return 0.35;
            }
            std::optional<double> hbmGbps() const override { return 1000.0; }
        } slow;
        const Scenario s = scenario(llama3_70b(), h100_sxm(), 8, 4, 2, 128);
        Estimate base, cal;
        evaluate(s, base);
        evaluate(s, cal, &slow);
        QVERIFY(!base.calibrated && cal.calibrated);
        // Half the datasheet efficiency: compute takes clearly longer.
        QVERIFY(cal.time.compute_seconds > 1.5 * base.time.compute_seconds);
        // TP collectives now cost 10 ms each: 8 per layer per micro-batch with SP.
        const double perMb = 8 * 0.01 * cal.stages[0].layers;
        QVERIFY(std::abs(cal.time.exposed.tp / (perMb * cal.microbatches) - 1) < 1e-9);
    }

    void exposedPlusOverlappedIsAllTraffic()
    {
        // Every collective costs 1 ms: count them by hand per layer and micro-batch.
        struct Flat : MeasuredPerformance
        {
            std::optional<double> collectiveSeconds(Collective, int, Span, double) const override
            {
                return 1e-3;
            }
            std::optional<double> gemmEfficiency(double, double, double, bool) const override
            {
                return std::nullopt;
            }
            std::optional<double> hbmGbps() const override { return std::nullopt; }
        } flat;
        for (Recompute r : {Recompute::Selective, Recompute::Full}) {
            Scenario s = scenario(llama3_70b(), h100_sxm(), 8, 2, 2, 64, 32768);
            s.parallel.cp = 4;
            s.training.recompute = r;
            Estimate e;
            evaluate(s, e, &flat);
            const double layerMbs =
                e.stages[std::size_t(e.time.critical_stage)].layers * double(e.microbatches);
            const bool full = r == Recompute::Full;
            // CP ring (Transformer Engine): 3 forward messages; 4 backward (K/V, K/V with
            // dK/dV twice, dK/dV); the 3 forward ones again, as the attention forward is
            // recomputed with selective and with full recomputation alike.
            const double cp = (3 + 4 + 3) * 1e-3 * layerMbs;
            QVERIFY(std::abs(e.time.exposed.cp + e.time.overlapped.cp - cp) < 1e-9 * cp);
            // TP with SP: 4 forward, 4 backward (+ 4 recomputed), 2 hidden re-gathers.
            const double tp = (4 + 4 + (full ? 4 : 0) + 2) * 1e-3 * layerMbs;
            QVERIFY(std::abs(e.time.exposed.tp + e.time.overlapped.tp - tp) < 1e-9 * tp);
        }
    }

    void constantsAreOverridable()
    {
        const Scenario s = scenario(llama3_8b(), h100_sxm(), 1, 1, 8, 64);
        ModelConstants k;
        Estimate a, b;
        evaluate(s, a, nullptr, k);
        k.cuda_context_bytes += 1e9;
        evaluate(s, b, nullptr, k);
        QCOMPARE(b.stages[0].runtime_overhead - a.stages[0].runtime_overhead, 1e9);
    }
};

QTEST_APPLESS_MAIN(TestEvaluate)
#include "test_evaluate.moc"
