// SPDX-License-Identifier: GPL-3.0-or-later
// The Calibration view's series from core: datasheet alpha-beta on the measured group's link,
// the fitted curve and residuals, against hand-computed values.
#include "core/calibration_chart.h"

#include <QTest>
#include <cmath>

using namespace paralens;

namespace {

ClusterSpec hgx()
{
    ClusterSpec c;
    c.name = "test-hgx";
    c.gpus_per_node = 8;
    c.scale_up_domain = 8;
    c.scale_up_gbps = 450; // per direction, H100 NVLink 4
    c.scale_out_gbps = 50; // one NDR 400G NIC per GPU
    c.latencies.scale_up_us = 3;
    c.latencies.scale_out_us = 8;
    return c;
}

/// Points exactly on t = α + S·f/B (α = 10 µs, B = 100 GB/s) for all-reduce on 8 ranks.
CollectiveCurve exactCurve()
{
    CollectiveCurve c;
    c.collective = Collective::AllReduce;
    c.ranks = 8;
    c.span = Span::ScaleUp;
    for (int e = 20; e <= 28; e += 2) {
        SizePoint p;
        p.size_bytes = std::ldexp(1.0, e);
        p.time_median_seconds = 10e-6 + p.size_bytes * 1.75 / 100e9;
        p.algbw_gbps = p.size_bytes / p.time_median_seconds / 1e9;
        p.busbw_gbps = p.algbw_gbps * 1.75;
        c.points.push_back(p);
    }
    c.fit = fitAlphaBeta(c.collective, c.ranks, c.points);
    return c;
}

bool near(double a, double b, double rel = 1e-9)
{
    return std::abs(a - b) <= rel * std::abs(b);
}

} // namespace

class TestCalibrationChart : public QObject
{
    Q_OBJECT
private slots:
    void busBandwidth()
    {
        // nccl-tests: busbw = S/t · 2(n−1)/n for all-reduce; 1 for sendrecv.
        QVERIFY(near(busBandwidthGbps(Collective::AllReduce, 8, 1e9, 0.01), 100 * 1.75));
        QVERIFY(near(busBandwidthGbps(Collective::SendRecv, 2, 1e9, 0.01), 100));
        QCOMPARE(busBandwidthGbps(Collective::AllReduce, 8, 1e9, 0), 0.0);
    }
    void fittedCurve()
    {
        const auto c = exactCurve();
        QVERIFY(c.fit.valid);
        QVERIFY(near(c.fit.alpha_seconds, 10e-6, 1e-6));
        QVERIFY(near(c.fit.busbw_gbps, 100, 1e-6));
        QVERIFY(near(*fittedSeconds(c, 1e9), 10e-6 + 1e9 * 1.75 / 100e9, 1e-6));
        QVERIFY(!fittedSeconds(c, 0));
        CollectiveCurve bad = c;
        bad.fit = {};
        QVERIFY(!fittedSeconds(bad, 1e9));
    }
    void chartSeries()
    {
        const auto c = exactCurve();
        const ClusterSpec cl = hgx();
        const auto ch = calibrationChart(c, &cl, {}, 10);
        QCOMPARE(ch.size_bytes.size(), size_t(5));
        QCOMPARE(ch.residual_pct, c.fit.residual_pct);
        for (size_t i = 0; i < ch.size_bytes.size(); ++i) {
            QCOMPARE(ch.size_bytes[i], c.points[i].size_bytes);
            QCOMPARE(ch.measured_busbw_gbps[i], c.points[i].busbw_gbps);
            QVERIFY(std::abs(ch.residual_pct[i]) < 1e-6);
        }
        QCOMPARE(ch.model_size_bytes.size(), size_t(10));
        QCOMPARE(ch.model_size_bytes.front(), std::ldexp(1.0, 20));
        QCOMPARE(ch.model_size_bytes.back(), std::ldexp(1.0, 28));
        for (size_t i = 0; i < ch.model_size_bytes.size(); ++i) {
            const double s = ch.model_size_bytes[i];
            // Datasheet, by hand: NVLink 450 GB/s × 0.80 efficiency = 360 GB/s bus bandwidth;
            // all-reduce on 8 ranks: min(2·7, 4·log2 8) = 12 steps of 3 µs.
            const double t = 12 * 3e-6 + 1.75 * s / 360e9;
            QVERIFY(near(ch.datasheet_busbw_gbps[i], 1.75 * s / t / 1e9, 1e-9));
            // Fitted, by hand from the exact α and B the points were made with.
            const double tf = 10e-6 + 1.75 * s / 100e9;
            QVERIFY(near(ch.fitted_busbw_gbps[i], 1.75 * s / tf / 1e9, 1e-6));
        }
        QVERIFY(ch.fitted_busbw_gbps.back() < 100);
        const auto none = calibrationChart(c, nullptr);
        QVERIFY(none.datasheet_busbw_gbps.empty() && none.datasheet_at_points_gbps.empty());
        QCOMPARE(none.fitted_at_points_gbps.size(), size_t(5));
    }
    void interNodeLink()
    {
        // 16 ranks on 2 nodes: 8 per NVLink domain; rings stripe over 8 NICs of 50 GB/s × 0.92
        // = 368 GB/s, more than NVLink's 360, so NVLink bounds the bus bandwidth.
        CollectiveCurve c = exactCurve();
        c.ranks = 16;
        c.nodes = 2;
        c.span = Span::ScaleOut;
        const LinkModel l = measuredGroupLink(c, hgx());
        QCOMPARE(l.ranks, 16);
        QCOMPARE(l.per_domain, 8);
        QVERIFY(l.span == Span::ScaleOut);
        QVERIFY(near(l.busBps(), 360e9));
        QVERIFY(near(l.alpha_seconds, 8e-6));
        // 2 ranks on 2 nodes (one GPU each): a single NIC, 46 GB/s.
        c.ranks = 2;
        QVERIFY(near(measuredGroupLink(c, hgx()).busBps(), 46e9));
    }
    void skipsEmptyPoints()
    {
        CollectiveCurve c = exactCurve();
        SizePoint zero; // size 0: nccl-tests prints such rows; the fit skips them
        c.points.insert(c.points.begin(), zero);
        c.fit = fitAlphaBeta(c.collective, c.ranks, c.points);
        const auto ch = calibrationChart(c, nullptr);
        QCOMPARE(ch.size_bytes.size(), size_t(5));
        QCOMPARE(ch.residual_pct.size(), size_t(5));
        CollectiveCurve empty;
        QVERIFY(calibrationChart(empty, nullptr).model_size_bytes.empty());
    }
};

QTEST_GUILESS_MAIN(TestCalibrationChart)
#include "test_calibration_chart.moc"
