// SPDX-License-Identifier: GPL-3.0-or-later
// A calibration profile changes the Estimate's communication times the way its measured
// bandwidths say, and leaves everything it does not measure alone.
#include "nccl_checks.h"

#include <QTest>

#include <cmath>

using namespace paralens;

namespace {

// A curve measured at exactly `busbw_gbps` with no latency: t = busFactor · S / busbw.
CollectiveCurve flatCurve(Collective c, int ranks, Span span, double busbw_gbps)
{
    CollectiveCurve curve;
    curve.collective = c;
    curve.ranks = ranks;
    curve.span = span;
    curve.dtype = "bf16";
    for (double s = 1 << 20; s <= 32.0 * (1ll << 30); s *= 2) {
        SizePoint p;
        p.size_bytes = s;
        p.time_median_seconds = p.time_min_seconds = p.time_max_seconds =
            busFactor(c, ranks) * s / (busbw_gbps * 1e9);
        p.algbw_gbps = s / p.time_median_seconds / 1e9;
        p.busbw_gbps = busbw_gbps;
        curve.points.push_back(p);
    }
    curve.fit = fitAlphaBeta(c, ranks, curve.points);
    return curve;
}

using testnccl::defaultNoLatency;

} // namespace

class TestCalibratedEval : public QObject
{
    Q_OBJECT
private slots:
    void halfTheBandwidthDoublesTpTime()
    {
        const Scenario s = defaultNoLatency();
        QCOMPARE(s.parallel.tp, 8);
        const Estimate datasheet = evaluate(s);

        // Datasheet TP busbw is scale_up_gbps × the NVLink efficiency constant; measure half.
        const double datasheet_busbw =
            s.cluster.scale_up_gbps * ModelConstants{}.scale_up_efficiency;
        CalibrationProfile prof;
        for (Collective c :
             {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter})
            prof.collectives.push_back(flatCurve(c, 8, Span::ScaleUp, datasheet_busbw / 2));
        const CalibratedPerformance measured(prof, s.cluster.gpu.bf16_tflops,
                                             s.cluster.gpu.fp8_tflops);
        Estimate cal;
        evaluate(s, cal, &measured);

        QVERIFY(cal.calibrated);
        QVERIFY(!datasheet.calibrated);
        const double tp0 = datasheet.time.exposed.tp + datasheet.time.overlapped.tp;
        const double tp1 = cal.time.exposed.tp + cal.time.overlapped.tp;
        QVERIFY(tp0 > 0);
        QVERIFY2(std::abs(tp1 / tp0 - 2.0) < 0.01, qPrintable(QString::number(tp1 / tp0)));
        // Nothing else was measured: compute and the other dimensions keep datasheet figures.
        QCOMPARE(cal.time.compute_seconds, datasheet.time.compute_seconds);
        QCOMPARE(cal.time.exposed.dp + cal.time.overlapped.dp,
                 datasheet.time.exposed.dp + datasheet.time.overlapped.dp);
        QCOMPARE(cal.time.exposed.pp + cal.time.overlapped.pp,
                 datasheet.time.exposed.pp + datasheet.time.overlapped.pp);
        QVERIFY(cal.time.step_seconds > datasheet.time.step_seconds);
        QVERIFY(cal.throughput.mfu < datasheet.throughput.mfu);
    }

    void aFixtureLogMovesTpTimeByTheMeasuredBandwidth()
    {
        const std::string log =
            PARALENS_SOURCE_DIR "/tests/data/nccl/h100_1node_8gpu_five_collectives.txt";
        // At 128 MiB the log has all-gather and reduce-scatter at 329.65 and 323.41 GB/s,
        // below the datasheet 450 × 0.8 = 360 GB/s (docs/formulas.md §5): TP time must grow by
        // roughly 360/326, and certainly stay within the 360/349 .. 360/273 range of the
        // log's busbw between 32 MiB and 2 GiB.
        testnccl::checkLogMovesTpTime(log, {360.0 / 349.0, 360.0 / 273.0, 360.0 / 326.0});
    }
};

QTEST_APPLESS_MAIN(TestCalibratedEval)
#include "test_calibrated_eval.moc"
