// SPDX-License-Identifier: GPL-3.0-or-later
// AccuracyView draws a report: one point per speed row at the step times it implies, the
// y = x line and the ±10 % band, hover text naming the run, double-click emitting its scenario.
#include "../plot_data.h"
#include "widgets/accuracyview.h"

#include <QComboBox>
#include <QSignalSpy>
#include <QTest>
#include <qcustomplot.h>

#include <cmath>

using namespace paralens;

namespace {

Scenario plan(int tp, int dp, int mb)
{
    Scenario s;
    s.model.name = "gpt-test";
    s.model.layers = 24;
    s.model.hidden = 2048;
    s.model.heads = 16;
    s.cluster.gpu.name = "A100-SXM4-80GB";
    s.parallel.tp = tp;
    s.parallel.dp = dp;
    s.gpus = tp * dp;
    s.training.micro_batch = mb;
    return s;
}

RunResult row(const char* name, RunMetric m, double measured, double predicted, double step,
              std::size_t run)
{
    RunResult r;
    r.name = name;
    r.group = "gpt-test on 8 GPUs";
    r.metric = m;
    r.measured = measured;
    r.predicted = predicted;
    r.error = (predicted - measured) / measured;
    r.step_seconds = step;
    r.compute_seconds = 0.8 * step;
    r.bubble_seconds = 0.1 * step;
    r.comm_seconds = 0.1 * step;
    r.run_index = run;
    return r;
}

// Four runs: two measured by step time, one by tokens/s, one by memory, and one that failed.
struct Fixture
{
    AccuracyReport report;
    std::vector<MeasuredRun> runs;
    Fixture()
    {
        for (auto [name, tp] :
             {std::pair{"tp1", 1}, {"tp2", 2}, {"tok", 2}, {"mem", 1}, {"bad", 3}}) {
            MeasuredRun r;
            r.name = name;
            r.scenario = plan(tp, 8 / std::max(1, tp == 3 ? 1 : tp), tp == 1 ? 4 : 2);
            runs.push_back(r);
        }
        report.rows.push_back(row("tp1", RunMetric::StepSeconds, 2.0, 2.2, 2.2, 0));
        report.rows.push_back(row("tp2", RunMetric::StepSeconds, 1.0, 0.95, 0.95, 1));
        // Measured 1000 tokens/s, predicted 1250: the step implied is 0.8 of the predicted one.
        report.rows.push_back(row("tok", RunMetric::TokensPerSecond, 1000, 1250, 4.0, 2));
        report.rows.push_back(row("mem", RunMetric::PeakMemoryGib, 60, 55, 3.0, 3));
        RunResult bad;
        bad.name = "bad";
        bad.failure = "heads (16) are not divisible by TP (3)";
        bad.run_index = 4;
        report.rows.push_back(bad);
        report.summary.runs = 4;
        report.summary.failed = 1;
        report.summary.mape = 0.125;
        report.summary.median_ape = 0.0833;
        report.summary.worst_name = "tok";
        report.summary.worst_error = 0.25;
        GroupSummary g;
        g.key = "gpt-test on 8 GPUs";
        g.runs = 3;
        g.spearman = 0.5;
        g.best_plan_rank = 2;
        g.best_plan_slowdown = 0.1;
        report.groups.push_back(g);
    }
};

int plottedPoints(AccuracyView& v)
{
    int n = 0;
    QCustomPlot* p = v.plot();
    for (int i = 0; i < p->graphCount(); ++i) {
        QCPGraph* g = p->graph(i);
        if (g != v.identityGraph() && g != v.bandLowerGraph() && g != v.bandUpperGraph())
            n += g->dataCount();
    }
    return n;
}

} // namespace

class TestAccuracyView : public QObject
{
    Q_OBJECT
private slots:
    /// A plot too short for the vertical title says less rather than cutting it.
    void shortPlotKeepsItsAxisTitlesWhole()
    {
        AccuracyView v;
        v.resize(500, 600);
        v.show();
        QVERIFY(QTest::qWaitForWindowExposed(&v));
        QCoreApplication::processEvents();
        QCOMPARE(v.plot()->yAxis->label(), QStringLiteral("predicted step time (s)"));
        v.resize(500, 150);
        QCoreApplication::processEvents();
        QCOMPARE(v.plot()->yAxis->label(), QStringLiteral("predicted (s)"));
        QCOMPARE(v.plot()->xAxis->label(), QStringLiteral("measured (s)"));
    }

    void onePointPerSpeedRow()
    {
        Fixture f;
        AccuracyView v;
        v.setReport(f.report, f.runs);
        QCOMPARE(v.pointCount(), 3); // memory and failed rows are not on the chart
        QCOMPARE(plottedPoints(v), 3);
        // Step rows at (measured, predicted); the tokens/s row at the step it implies.
        const auto& pts = v.points().points;
        QCOMPARE(pts[0].measured_seconds, 2.0);
        QCOMPARE(pts[0].predicted_seconds, 2.2);
        QVERIFY(std::abs(pts[2].measured_seconds - 5.0) < 1e-12); // 4 s × 1250 / 1000
        QCOMPARE(pts[2].predicted_seconds, 4.0);
        QVERIFY(v.summaryText().contains("12.5 %"));
        QVERIFY(v.summaryText().contains("tok"));
        QVERIFY(v.summaryText().contains("1 could not be predicted"));
        QVERIFY(v.groupsText().contains("Spearman 0.50"));
        QVERIFY(v.groupsText().contains("#2"));
    }

    void bandAndIdentityAreDrawn()
    {
        Fixture f;
        AccuracyView v;
        v.setReport(f.report, f.runs);
        using paralens::testplot::keys;
        using paralens::testplot::values;
        const auto x = keys(v.identityGraph());
        QCOMPARE(x.size(), 2);
        QCOMPARE(values(v.identityGraph()), x);
        for (int i = 0; i < 2; ++i) {
            QVERIFY(std::abs(values(v.bandUpperGraph())[i] - 1.1 * x[i]) < 1e-12);
            QVERIFY(std::abs(values(v.bandLowerGraph())[i] - 0.9 * x[i]) < 1e-12);
        }
        QCOMPARE(v.bandUpperGraph()->channelFillGraph(), v.bandLowerGraph());
        QVERIFY(v.bandUpperGraph()->brush().style() != Qt::NoBrush);
        // The range holds every point, on log axes.
        QCOMPARE(v.plot()->xAxis->scaleType(), QCPAxis::stLogarithmic);
        QVERIFY(x[0] < 0.95 && x[1] > 5.0);
    }

    void colourByPlanDimension()
    {
        Fixture f;
        AccuracyView v;
        v.setReport(f.report, f.runs);
        QCOMPARE(v.points().categories.size(), size_t(1)); // one group
        v.setColourBy(AccuracyColour::TP);
        QCOMPARE(v.points().categories, (std::vector<std::string>{"TP 1", "TP 2"}));
        QCOMPARE(plottedPoints(v), 3);
        v.setColourBy(AccuracyColour::MicroBatch);
        QCOMPARE(v.points().categories, (std::vector<std::string>{"mb 2", "mb 4"}));
    }

    void hoverTextNamesTheRun()
    {
        Fixture f;
        AccuracyView v;
        v.setReport(f.report, f.runs);
        const QString t = v.pointToolTip(1);
        QVERIFY2(t.startsWith("tp2\n"), qPrintable(t));
        QVERIFY2(t.contains("−5.0 %"), qPrintable(t));
        QVERIFY(t.contains("compute 760 ms"));
        QVERIFY(t.contains("TP 2"));
        QVERIFY(v.pointToolTip(2).contains("1.00 k tokens/s"));
        QVERIFY(v.pointToolTip(7).isEmpty());
    }

    void doubleClickEmitsTheScenario()
    {
        Fixture f;
        AccuracyView v;
        v.resize(600, 500);
        v.show();
        QVERIFY(QTest::qWaitForWindowExposed(&v));
        v.setReport(f.report, f.runs);
        v.plot()->replot(QCustomPlot::rpImmediateRefresh);
        const QPointF px = v.pointPixel(1);
        QCOMPARE(v.pointAt(px), 1);
        QCOMPARE(v.pointAt(px + QPointF(40, 40)), -1);
        QSignalSpy spy(&v, &AccuracyView::runChosen);
        QTest::mouseDClick(v.plot(), Qt::LeftButton, {}, px.toPoint());
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.at(0).at(0).value<Scenario>().parallel.tp, 2);
        QCOMPARE(spy.at(0).at(1).toString(), QStringLiteral("tp2"));
    }

    void emptyAndClear()
    {
        Fixture f;
        AccuracyView v;
        QCOMPARE(v.pointCount(), 0);
        QVERIFY(v.summaryText().contains("No runs"));
        v.setReport(f.report, f.runs);
        v.clear();
        QCOMPARE(v.pointCount(), 0);
        QCOMPARE(plottedPoints(v), 0);
    }
};

QTEST_MAIN(TestAccuracyView)
#include "test_accuracyview.moc"
