// SPDX-License-Identifier: GPL-3.0-or-later
// The built-in accuracy report (resources/reference) and every preset model on every preset
// cluster.
#include "core/evaluate.h"
#include "core/presets.h"
#include "core/reference.h"
#include "core/validate.h"

#include <QTest>

#include <cmath>
#include <map>

using namespace paralens;

class TestReference : public QObject
{
    Q_OBJECT
private slots:
    void runsLoadAndPredict()
    {
        const auto runs = referenceRuns();
        QVERIFY(runs.size() >= 25);
        double sumAbs = 0;
        Estimate e;
        for (const auto& r : runs) {
            QVERIFY2(isRunnable(r.scenario), r.name.c_str());
            evaluate(r.scenario, e);
            const double p = predictedMetric(r, e);
            QVERIFY(std::isfinite(p) && p > 0);
            const double err = (p - r.published) / r.published;
            sumAbs += std::abs(err);
            // Megatron-style runs (Narayanan Tables 1-2 PTD-P, Llama 3) within ±25 %; the
            // DeepSpeed ZeRO-3 rows of Table 2 are bounded only by the trend below. The MoE
            // rows (moe-published.json, FP8 on H100/H800) come out up to twice too fast, as
            // small models on H100 do in general (a kernel-model gap, not an MoE term);
            // guarded at a factor 2.5.
            if (r.scenario.model.isMoe())
                QVERIFY2(p < 2.5 * r.published && p > r.published / 2.5, r.name.c_str());
            else if (r.name.rfind("ZeRO-3", 0) != 0)
                QVERIFY2(std::abs(err) < 0.25,
                         qPrintable(
                             QString("%1: %2 vs %3").arg(r.name.c_str()).arg(p).arg(r.published)));
        }
        // Regression guard on the reported figure (11.7 % when written).
        QVERIFY(sumAbs / double(runs.size()) < 0.20);
    }

    // The model's estimate of two published plans, in the publication's own metric, within
    // ±15 % of the published TFLOP/s per GPU (docs/validation.md): Narayanan et al. 2021 §5.1,
    // GPT-3 175B on 1,024 A100 at 140 TFLOP/s (Eq. 3 FLOPs, t8 p16); Llama 3 Table 4, 405B on
    // 8,192 H100 at 430 TFLOP/s (t8 cp1 p16 dp64); Megatron-Core's MoE README, Mixtral 8x7B
    // at 468 TFLOP/s (BF16, the README's 64-GPU mapping t1 ep8 p4 v8).
    void publishedPlansWithinFifteenPercent()
    {
        const std::map<std::string, double> published = {
            {"GPT-3 175B, 1024 A100, t8 p16 (§5.1)", 140.0},
            {"Llama 3 405B, 8192 H100, t8 cp1 p16, s 8192", 430.0},
            {"Mixtral 8x7B, 64 H100, BF16, t1 ep8 p4 v8, alltoall", 468.0},
        };
        int found = 0;
        Estimate e;
        for (const auto& r : referenceRuns()) {
            const auto it = published.find(r.name);
            if (it == published.end())
                continue;
            ++found;
            QCOMPARE(r.published, it->second); // the figure is the publication's
            evaluate(r.scenario, e);
            const double p = predictedMetric(r, e);
            QVERIFY2(
                std::abs(p - it->second) <= 0.15 * it->second,
                qPrintable(QString("%1: %2 vs %3").arg(r.name.c_str()).arg(p).arg(it->second)));
        }
        QCOMPARE(found, 3);
    }

    void zero3LosesThroughputWithScaleAsPublished()
    {
        // Narayanan Table 2: at a fixed global batch, ZeRO-3 TFLOP/s per GPU falls as GPUs grow
        // (144 → 88 → 44 for 175B). The model must reproduce the direction.
        std::map<int, double> tf;
        Estimate e;
        for (const auto& r : referenceRuns())
            if (r.name.rfind("ZeRO-3 174.6B", 0) == 0) {
                evaluate(r.scenario, e);
                tf[r.scenario.gpus] = predictedMetric(r, e);
            }
        QCOMPARE(int(tf.size()), 3);
        QVERIFY(tf[384] > tf[768] && tf[768] > tf[1536]);
        QVERIFY(tf[1536] < 0.5 * tf[384]);
    }

    void everyPresetModelOnEveryPresetCluster()
    {
        const PresetLibrary& lib = PresetLibrary::builtin();
        Estimate e;
        int answered = 0;
        for (const auto& mid : lib.modelIds())
            for (const auto& hid : lib.hardwareIds()) {
                Scenario s;
                s.model_id = mid;
                s.model = *lib.model(mid);
                s.hardware_id = hid;
                s.cluster = *lib.hardware(hid);
                s.gpus = 256;
                s.training.seq_len = 4096;
                s.training.micro_batch = 1;
                s.training.global_batch = 1024;
                bool found = false;
                for (int tp : {8, 4, 2, 1}) {
                    for (int pp : {8, 4, 2, 1}) {
                        s.parallel = ParallelPlan{};
                        s.parallel.tp = tp;
                        s.parallel.pp = pp;
                        s.parallel.dp = 256 / (tp * pp);
                        s.parallel.sequence_parallel = tp > 1;
                        s.parallel.zero = 1;
                        if (s.model.isMoe())
                            s.parallel.ep = std::min(8, s.parallel.dp);
                        if (isRunnable(s)) {
                            found = true;
                            break;
                        }
                    }
                    if (found)
                        break;
                }
                QVERIFY2(found, (mid + " on " + hid).c_str());
                evaluate(s, e);
                QVERIFY2(e.throughput.tokens_per_second > 0 && std::isfinite(e.peak_bytes) &&
                             std::isfinite(e.time.step_seconds) && e.throughput.mfu < 1,
                         (mid + " on " + hid).c_str());
                ++answered;
            }
        QVERIFY(answered >= 10 * 9);
    }
};

QTEST_APPLESS_MAIN(TestReference)
#include "test_reference.moc"
