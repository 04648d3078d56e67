// SPDX-License-Identifier: GPL-3.0-or-later
// CalibrationView draws core's series: measured points, the datasheet model, the fitted curve
// and the residuals; hover text, curve selection and palette colours.
#include "../plot_data.h"
#include "widgets/calibrationview.h"
#include "widgets/units.h"

#include <QApplication>
#include <QComboBox>
#include <QTest>
#include <qcustomplot.h>

#include <cmath>

using namespace paralens;

namespace {

ClusterSpec hgx()
{
    ClusterSpec c;
    c.name = "test-hgx";
    c.scale_up_gbps = 450;
    c.scale_out_gbps = 50;
    c.latencies.scale_up_us = 3;
    return c;
}

/// all-reduce on 8 ranks with points on t = 10 µs + S·1.75 / 100 GB/s, one point 5 % slow.
CollectiveCurve curve(Collective coll, int ranks)
{
    CollectiveCurve c;
    c.collective = coll;
    c.ranks = ranks;
    c.dtype = "bf16";
    c.source = "/some/dir/hand.log table 1 (line 3, all_reduce)";
    const double f = busFactor(coll, ranks) > 0 ? busFactor(coll, ranks) : 1.0;
    for (int e = 20; e <= 30; e += 2) {
        SizePoint p;
        p.size_bytes = std::ldexp(1.0, e);
        p.time_median_seconds = (10e-6 + p.size_bytes * f / 100e9) * (e == 24 ? 1.05 : 1.0);
        p.algbw_gbps = p.size_bytes / p.time_median_seconds / 1e9;
        p.busbw_gbps = p.algbw_gbps * f;
        c.points.push_back(p);
    }
    c.fit = fitAlphaBeta(c.collective, c.ranks, c.points);
    return c;
}

CalibrationProfile profile()
{
    CalibrationProfile p;
    p.collectives = {curve(Collective::AllReduce, 8), curve(Collective::AllGather, 4)};
    return p;
}

using paralens::testplot::keys;
using paralens::testplot::values;

QVector<double> q(const std::vector<double>& v)
{
    return {v.begin(), v.end()};
}

/// The message the chart shows in place of data ("" when none is visible).
QString shownMessage(const QCustomPlot* plot)
{
    for (int i = 0; i < plot->itemCount(); ++i)
        if (auto* t = qobject_cast<QCPItemText*>(plot->item(i)); t && t->visible())
            return t->text();
    return {};
}

} // namespace

class TestCalibrationView : public QObject
{
    Q_OBJECT
private slots:
    void empty()
    {
        CalibrationView v;
        QCOMPARE(v.curveCount(), 0);
        QCOMPARE(v.currentCurve(), -1);
        QVERIFY(v.measuredGraph()->data()->isEmpty());
        QVERIFY(v.pointToolTip(0).isEmpty());
        // The common chart frame: its message in place of data, an id for export.
        QVERIFY2(shownMessage(v.plot()).contains("No calibration profile"),
                 qPrintable(shownMessage(v.plot())));
        QVERIFY(!v.isInvalid()); // nothing to draw is not an error
        QCOMPARE(static_cast<ChartView&>(v).chartId(), QStringLiteral("calibration"));
        v.setProfile(profile());
        QCOMPARE(shownMessage(v.plot()), QString());
        v.setProfile(CalibrationProfile{});
        QVERIFY(shownMessage(v.plot()).contains("No calibration profile"));
    }
    // Size tick labels stay apart at any width, empty or not (a narrow dock ran
    // "16 MiB64 MiB" together), and the legend names the three curves.
    void sizeLabelsDoNotCollide_data()
    {
        QTest::addColumn<int>("width");
        QTest::addColumn<bool>("withProfile");
        for (int w : {360, 520, 800, 1400}) {
            QTest::addRow("empty %d", w) << w << false;
            QTest::addRow("profile %d", w) << w << true;
        }
    }
    void sizeLabelsDoNotCollide()
    {
        QFETCH(int, width);
        QFETCH(bool, withProfile);
        CalibrationView v;
        if (withProfile) {
            v.setCluster(hgx());
            v.setProfile(profile());
        }
        v.resize(width, 420);
        v.show();
        QVERIFY(QTest::qWaitForWindowExposed(&v));
        v.plot()->replot(QCustomPlot::rpImmediateRefresh);
        for (QCPAxisRect* rect : {v.plot()->axisRect(), v.residualAxisRect()}) {
            QCPAxis* x = rect->axis(QCPAxis::atBottom);
            const QFontMetrics fm(x->tickLabelFont());
            const QVector<double> ticks = x->tickVector();
            const QVector<QString> labels = x->tickVectorLabels();
            QVERIFY(ticks.size() >= 2);
            double lastRight = -1e9;
            for (int i = 0; i < ticks.size(); ++i) {
                const double px = x->coordToPixel(ticks[i]);
                if (px < rect->left() - 1 || px > rect->right() + 1)
                    continue;
                const double half = fm.horizontalAdvance(labels[i]) / 2.0;
                QVERIFY2(px - half > lastRight + 4,
                         qPrintable(QStringLiteral("'%1' touches the label before it at %2 px")
                                        .arg(labels[i])
                                        .arg(width)));
                lastRight = px + half;
            }
        }
        if (withProfile) {
            QStringList names;
            for (QCPAbstractLegendItem* item : ChartView::legendItems(v.plot()->legend))
                if (auto* p = qobject_cast<QCPPlottableLegendItem*>(item))
                    names << p->plottable()->name();
            QVERIFY(v.plot()->legend->visible());
            QCOMPARE(names.size(), 3);
            QVERIFY(names.join(' ').contains("measured"));
            QVERIFY(names.join(' ').contains("datasheet"));
            QVERIFY(names.join(' ').contains("fitted"));
        }
    }

    void drawsCoreSeries()
    {
        CalibrationView v;
        const auto p = profile();
        v.setProfile(p);
        v.setCluster(hgx());
        QCOMPARE(v.curveCount(), 2);
        QCOMPARE(v.currentCurve(), 0);
        const auto& c = p.collectives[0];
        QVector<double> sizes, busbw;
        for (const auto& pt : c.points)
            sizes << pt.size_bytes, busbw << pt.busbw_gbps;
        QCOMPARE(keys(v.measuredGraph()), sizes);
        QCOMPARE(values(v.measuredGraph()), busbw);
        QCOMPARE(keys(v.residualGraph()), sizes);
        QCOMPARE(values(v.residualGraph()), q(c.fit.residual_pct));
        // The slow point shows as a negative residual (the fit is faster than measured).
        QVERIFY(values(v.residualGraph())[2] < -2);
        // The fitted curve is core's α-β fit, climbing towards its plateau B_bus.
        const auto fk = keys(v.fittedGraph());
        const auto fv = values(v.fittedGraph());
        QVERIFY(fk.size() > 10);
        for (int i = 0; i < fk.size(); ++i) {
            const double t = c.fit.alpha_seconds + fk[i] * 1.75 / (c.fit.busbw_gbps * 1e9);
            QVERIFY(std::abs(fv[i] - fk[i] * 1.75 / t / 1e9) < 1e-9 * fv[i]);
            QVERIFY(fv[i] < c.fit.busbw_gbps);
        }
        QVERIFY(fv.back() > 0.99 * c.fit.busbw_gbps);
        // The datasheet curve, by hand: 12 steps of 3 µs and 450 × 0.8 GB/s.
        const auto dk = keys(v.datasheetGraph());
        const auto dv = values(v.datasheetGraph());
        QCOMPARE(dk, fk);
        for (int i = 0; i < dk.size(); ++i) {
            const double t = 36e-6 + 1.75 * dk[i] / 360e9;
            QVERIFY(std::abs(dv[i] - 1.75 * dk[i] / t / 1e9) < 1e-9 * dv[i]);
        }
        QVERIFY(v.datasheetGraph()->visible());
        v.clearCluster();
        QVERIFY(!v.datasheetGraph()->visible());
        QVERIFY(v.datasheetGraph()->data()->isEmpty());
    }
    void selection()
    {
        CalibrationView v;
        v.setProfile(profile());
        auto* combo = v.findChild<QComboBox*>("calibrationCurveCombo");
        QVERIFY(combo);
        QCOMPARE(combo->count(), 2);
        QVERIFY(combo->itemText(1).contains("all_gather"));
        QVERIFY(combo->itemText(1).contains("4 GPUs"));
        QVERIFY(combo->itemText(1).contains("hand.log table 1"));
        combo->setCurrentIndex(1);
        QCOMPARE(v.currentCurve(), 1);
        QCOMPARE(v.chart().residual_pct, profile().collectives[1].fit.residual_pct);
        // A new profile with the same curve keeps it selected.
        auto p = profile();
        std::swap(p.collectives[0], p.collectives[1]);
        v.setProfile(p);
        QCOMPARE(v.currentCurve(), 0);
        QVERIFY(p.collectives[size_t(v.currentCurve())].collective == Collective::AllGather);
    }
    void toolTip()
    {
        CalibrationView v;
        v.setProfile(profile());
        v.setCluster(hgx());
        const QString t = v.pointToolTip(0);
        QVERIFY2(t.contains("1 MiB") && t.contains("1048576 B"), qPrintable(t));
        QVERIFY2(t.contains(QString::number(profile().collectives[0].points[0].busbw_gbps, 'f', 2)),
                 qPrintable(t));
        QVERIFY(t.contains("residual") && t.contains("datasheet") && t.contains("fit"));
        QVERIFY(v.pointToolTip(99).isEmpty());
    }
    void formatting()
    {
        QCOMPARE(units::sizeBytes(8), QString("8 B"));
        QCOMPARE(units::sizeBytes(1024), QString("1 KiB"));
        QCOMPARE(units::sizeBytes(32.0 * 1048576), QString("32 MiB"));
        QCOMPARE(units::sizeBytes(1.5 * 1073741824), QString("1.5 GiB"));
    }
    void paletteRecolours()
    {
        CalibrationView v;
        v.setProfile(profile());
        QPalette light;
        light.setColor(QPalette::Window, Qt::white);
        light.setColor(QPalette::WindowText, Qt::black);
        v.setPalette(light);
        QCOMPARE(v.measuredGraph()->pen().color(), QColor(0x00, 0x72, 0xB2));
        QCOMPARE(v.plot()->xAxis->tickLabelColor(), QColor(Qt::black));
        QPalette dark;
        dark.setColor(QPalette::Window, QColor(30, 30, 30));
        dark.setColor(QPalette::WindowText, QColor(230, 230, 230));
        v.setPalette(dark);
        QCOMPARE(v.measuredGraph()->pen().color(), QColor(0x56, 0xB4, 0xE9));
        QCOMPARE(v.plot()->xAxis->tickLabelColor(), QColor(230, 230, 230));
        QCOMPARE(v.residualAxisRect()->axis(QCPAxis::atLeft)->labelColor(), QColor(230, 230, 230));
        // Measured, fitted and datasheet keep distinct Okabe-Ito colours.
        QVERIFY(v.fittedGraph()->pen().color() != v.measuredGraph()->pen().color());
        QVERIFY(v.fittedGraph()->pen().color() != v.datasheetGraph()->pen().color());
    }
};

QTEST_MAIN(TestCalibrationView)
#include "test_calibrationview.moc"
