// SPDX-License-Identifier: GPL-3.0-or-later
// The views draw exactly the numbers they are given (hand-made Estimates), mark what they
// should, grey out with a reason, and recolour from the palette.
#include "core/presets.h"
#include "core/scenario_io.h"
#include "tests/widgets/headline_checks.h"
#include "widgets/breakdownview.h"
#include "widgets/headline.h"
#include "widgets/memoryview.h"
#include "widgets/palette.h"
#include "widgets/topologyview.h"
#include "widgets/units.h"

#include <QTest>
#include <QToolTip>
#include <QVBoxLayout>
#include <qcustomplot.h>

using namespace paralens;

namespace {

Estimate twoStages()
{
    Estimate e;
    e.gpus = 16;
    e.capacity_bytes = 80 * units::kGiB;
    StageMemory s0;
    s0.stage = 0;
    s0.layers = 40;
    s0.parameters = 10 * units::kGiB;
    s0.gradients = 20 * units::kGiB;
    s0.optimizer_states = 15 * units::kGiB;
    s0.activations = 30 * units::kGiB;
    s0.comm_buffers = 1 * units::kGiB;
    s0.runtime_overhead = 0.5 * units::kGiB; // 76.5 GiB: fits
    s0.inflight_microbatches = 2;
    StageMemory s1 = s0;
    s1.stage = 1;
    s1.activations = 50 * units::kGiB; // 96.5 GiB: over 80
    e.stages = {s0, s1};
    e.peak_bytes = s1.total();
    e.peak_stage = 1;
    e.fits = false;
    e.time.step_seconds = 2.5;
    e.time.compute_seconds = 1.5;
    e.time.bubble_seconds = 0.4;
    e.time.exposed.tp = 0.3;
    e.time.exposed.pp = 0.05;
    e.time.exposed.dp = 0.15;
    e.time.optimizer_seconds = 0.1;
    e.time.overlapped.dp = 0.6;
    e.time.overlapped.tp = 0.2;
    e.throughput.tokens_per_second = 123456;
    e.throughput.mfu = 0.4321;
    e.throughput.tflops_per_gpu = 427.4;
    return e;
}
QStringList legendNames(QCustomPlot* plot)
{
    QStringList names;
    for (QCPAbstractLegendItem* i : ChartView::legendItems(plot->legend))
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(i))
            names << item->plottable()->name();
    return names;
}

} // namespace

class TestViews : public QObject
{
    Q_OBJECT
private slots:
    void memoryBarsAreTheStageBytes()
    {
        MemoryView view;
        view.resize(800, 500);
        const Estimate e = twoStages();
        view.setEstimate(e, defaultScenario());
        QCOMPARE(view.stageCount(), 2);
        QCOMPARE(view.segmentGiB(MemoryView::Parameters, 0), 10.0);
        QCOMPARE(view.segmentGiB(MemoryView::Gradients, 1), 20.0);
        QCOMPARE(view.segmentGiB(MemoryView::OptimizerStates, 0), 15.0);
        QCOMPARE(view.segmentGiB(MemoryView::Activations, 1), 50.0);
        QCOMPARE(view.segmentGiB(MemoryView::Buffers, 0), 1.0);
        QCOMPARE(view.segmentGiB(MemoryView::Overhead, 1), 0.5);
        QCOMPARE(view.capacityGiB(), 80.0);
        QCOMPARE(view.overCapacityCount(), 1); // only stage 1 (96.5 GiB) exceeds 80 GiB
        // The tooltip carries the exact byte count: 50 GiB = 53,687,091,200 B.
        const QString tip = view.tooltipText(MemoryView::Activations, 1);
        QVERIFY2(tip.contains(QStringLiteral("53,687,091,200 B")), qPrintable(tip));
        QVERIFY(tip.contains(QStringLiteral("Korthikanti")));
        QVERIFY(tip.contains(QStringLiteral("96.5 GiB")));
    }

    // The view names the embedding and the LM head where core puts them, not by stage index:
    // under ZB-V / DualPipeV both sit on stage 0 and the last stage holds neither.
    void memoryTooltipsFollowCorePlacement()
    {
        MemoryView view;
        view.resize(800, 500);
        Estimate e = twoStages();
        e.stages[0].holds_embedding = e.stages[0].holds_lm_head = true;
        e.stages[1].holds_embedding = e.stages[1].holds_lm_head = false;
        view.setEstimate(e, defaultScenario());
        for (MemoryView::Part part : {MemoryView::Parameters, MemoryView::Activations}) {
            const QString first = view.tooltipText(part, 0), last = view.tooltipText(part, 1);
            QVERIFY2(first.contains(QStringLiteral("LM head")), qPrintable(first));
            QVERIFY2(first.contains(QStringLiteral("embedding")), qPrintable(first));
            QVERIFY2(!last.contains(QStringLiteral("LM head")), qPrintable(last));
            QVERIFY2(!last.contains(QStringLiteral("embedding")), qPrintable(last));
        }
    }

    // Under full recompute with a layer count the activations tooltip names how many of the
    // stage's layers core left stored, as core counted them.
    void memoryTooltipNamesStoredLayers()
    {
        MemoryView view;
        view.resize(800, 500);
        Estimate e = twoStages();
        e.stages[0].layers = e.stages[1].layers = 20;
        e.stages[1].stored_layers = 8;
        Scenario s = defaultScenario();
        s.training.recompute = Recompute::Full;
        s.training.recompute_num_layers = 12;
        view.setEstimate(e, s);
        const QString partial = view.tooltipText(MemoryView::Activations, 1);
        QVERIFY2(partial.contains(QStringLiteral("12 recomputed layers")), qPrintable(partial));
        QVERIFY2(partial.contains(QStringLiteral("other 8")), qPrintable(partial));
        const QString all = view.tooltipText(MemoryView::Activations, 0);
        QVERIFY2(!all.contains(QStringLiteral("recomputed layers")), qPrintable(all));
        QVERIFY(all.contains(QStringLiteral("layer inputs")));
    }

    void hoverShowsExactBytes()
    {
        MemoryView view;
        view.resize(800, 500);
        view.setEstimate(twoStages(), defaultScenario());
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.plot()->replot(QCustomPlot::rpImmediateRefresh);
        auto hover = [&](double stage, double gib) {
            const QPointF local(view.plot()->xAxis->coordToPixel(stage),
                                view.plot()->yAxis->coordToPixel(gib));
            QMouseEvent move(QEvent::MouseMove, local, view.plot()->mapToGlobal(local),
                             Qt::NoButton, Qt::NoButton, Qt::NoModifier);
            QCoreApplication::sendEvent(view.plot(), &move);
            return QToolTip::isVisible() ? QToolTip::text() : QString();
        };
        // Stage 1 stacks 10 + 20 + 15 GiB below its 50 GiB of activations: 60 GiB is inside.
        QString tip = hover(1, 60);
        QVERIFY2(tip.contains(QStringLiteral("Stage 1 · Activations")), qPrintable(tip));
        QVERIFY(tip.contains(QStringLiteral("53,687,091,200 B")));
        tip = hover(0, 5); // inside stage 0's 10 GiB of parameters
        QVERIFY2(tip.contains(QStringLiteral("Stage 0 · Parameters")), qPrintable(tip));
        QVERIFY(tip.contains(QStringLiteral("10,737,418,240 B")));
        hover(0.5, 5); // between the bars: the tooltip goes away
        QTRY_VERIFY(!QToolTip::isVisible());
    }

    void breakdownSegmentsAreTheTimes()
    {
        BreakdownView view;
        view.resize(800, 300);
        view.setEstimate(twoStages());
        // A 2.5 s step: the axis is in seconds, as the headline's "2.50 s" (units::seconds
        // switches to s from 1 s on); a 0.5 s step is in ms, as the headline's "500 ms".
        QCOMPARE(view.axisUnitSeconds(), 1.0);
        QVERIFY(view.plot()->xAxis->label().startsWith(QStringLiteral("s ")));
        QVERIFY(qFuzzyCompare(view.segmentSeconds(BreakdownView::Compute), 1.5));
        QVERIFY(qFuzzyCompare(view.segmentSeconds(BreakdownView::Bubble), 0.4));
        QVERIFY(qFuzzyCompare(view.segmentSeconds(BreakdownView::ExposedTp), 0.3));
        QVERIFY(qFuzzyCompare(view.segmentSeconds(BreakdownView::ExposedDp), 0.15));
        QVERIFY(qFuzzyCompare(view.segmentSeconds(BreakdownView::HiddenDp), 0.6));
        QCOMPARE(view.segmentSeconds(BreakdownView::ExposedCp), 0.0);
        Estimate shortStep = twoStages();
        shortStep.time.step_seconds = 0.5;
        view.setEstimate(shortStep);
        QCOMPARE(view.axisUnitSeconds(), 1e-3);
        QVERIFY(view.plot()->xAxis->label().startsWith(QStringLiteral("ms ")));
    }

    // The legend lists what this plan spends time on: twoStages() has TP, PP and DP traffic
    // (exposed or hidden) and no CP, EP or offload, as a dense model without CP.
    void breakdownLegendOmitsZeroCategories()
    {
        BreakdownView view;
        view.resize(800, 300);
        view.setEstimate(twoStages());
        const QStringList names = legendNames(view.plot());
        for (const char* shown :
             {"Compute", "Pipeline bubble", "TP comm", "PP comm", "DP comm", "Optimizer step"})
            QVERIFY2(names.contains(QLatin1String(shown)), qPrintable(names.join(", ")));
        for (const char* absent : {"CP comm", "EP comm", "Offload"})
            QVERIFY2(!names.contains(QLatin1String(absent)), qPrintable(names.join(", ")));
        Estimate moe = twoStages();
        moe.time.overlapped.ep = 0.1; // EP traffic, all of it hidden, still names EP
        view.setEstimate(moe);
        QVERIFY(legendNames(view.plot()).contains(QStringLiteral("EP comm")));
    }

    // At 1024×700 the breakdown gets ~480×200 px: its legend flows into columns instead of
    // drawing entries over each other, and every entry stays inside the plot.
    void smallChartsKeepLegendEntriesApart_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::newRow("480x200") << QSize(480, 200);
        QTest::newRow("360x150") << QSize(360, 150);
        QTest::newRow("900x500") << QSize(900, 500);
    }
    void smallChartsKeepLegendEntriesApart()
    {
        QFETCH(QSize, size);
        BreakdownView breakdown;
        Estimate e = twoStages();
        e.time.exposed.cp = 0.01;
        e.time.exposed.ep = 0.01;
        e.time.offload_seconds = 0.01; // all nine entries
        breakdown.setEstimate(e);
        MemoryView memory;
        memory.setEstimate(twoStages(), defaultScenario());
        TopologyView topology;
        topology.setScenario(defaultScenario()); // 8 TP groups in the legend
        for (ChartView* view : std::initializer_list<ChartView*>{&breakdown, &memory, &topology}) {
            view->resize(size);
            view->show();
            QVERIFY(QTest::qWaitForWindowExposed(view));
            view->plot()->replot(QCustomPlot::rpImmediateRefresh);
            const auto items = ChartView::legendItems(view->plot()->legend);
            const QRect area = view->plot()->rect();
            QVERIFY(items.size() >= 7);
            for (int i = 0; i < items.size(); ++i) {
                const QRect a = items[i]->outerRect();
                QVERIFY2(area.contains(a), qPrintable(view->chartId()));
                for (int j = i + 1; j < items.size(); ++j)
                    QVERIFY2(!a.intersects(items[j]->outerRect()),
                             qPrintable(QStringLiteral("%1: entries %2 and %3 overlap")
                                            .arg(view->chartId())
                                            .arg(i)
                                            .arg(j)));
            }
            // The title is never wider than the plot: it wraps instead.
            const QFontMetrics fm(view->plot()->font());
            for (const QString& line : view->drawnTitle().split(QLatin1Char('\n')))
                QVERIFY(fm.horizontalAdvance(line) <= area.width());
        }
    }

    // "HBM capacity" sits beside the plot, level with its line: never over a bar or the
    // over-capacity marker, and not cut off.
    void capacityLabelClearsTheBars_data()
    {
        QTest::addColumn<double>("tallestGiB");
        QTest::newRow("over capacity") << 96.5;
        QTest::newRow("just under") << 79.0;
        QTest::newRow("far under") << 30.0;
    }
    void capacityLabelClearsTheBars()
    {
        QFETCH(double, tallestGiB);
        Estimate e = twoStages();
        e.stages[1].activations += (tallestGiB - e.stages[1].total() / units::kGiB) * units::kGiB;
        MemoryView view;
        view.resize(520, 260);
        view.setEstimate(e, defaultScenario());
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.plot()->replot(QCustomPlot::rpImmediateRefresh);
        const QRectF label = view.capacityLabelRect();
        QVERIFY(!label.isEmpty());
        QVERIFY(view.capacityLabel()->text().contains(QStringLiteral("80.0 GiB")));
        QVERIFY2(QRectF(view.plot()->rect()).contains(label), "the label is cut off");
        for (int s = 0; s < view.stageCount(); ++s) {
            const QRectF bar = view.stageBarRect(s);
            // The over-capacity marker (an 11 px triangle) sits on the bar's top edge.
            const QRectF marker(bar.center().x() - 6, bar.top() - 6, 12, 12);
            QVERIFY2(!label.intersects(bar) && !label.intersects(marker),
                     qPrintable(QStringLiteral("stage %1").arg(s)));
        }
        QVERIFY(!label.intersects(view.plot()->legend->outerRect()));
        // Level with the capacity line.
        const double lineY = view.plot()->yAxis->coordToPixel(80.0);
        QVERIFY(label.top() <= lineY && label.bottom() >= lineY);
    }

    void headlineSaysWhenCalibrated()
    {
        Headline h;
        Estimate e = twoStages();
        h.setEstimate(e);
        QVERIFY(h.calibrationText().isEmpty()); // datasheet figures: no badge
        e.calibrated = true;
        h.setCalibrationSource(QStringLiteral("measured calibration profile h100.json"));
        h.setEstimate(e);
        QVERIFY(h.calibrationText().contains(QStringLiteral("calibrated")));
        h.setInvalid(QStringLiteral("no plan"));
        QVERIFY(h.calibrationText().isEmpty());
    }

    void headlineFormatsWithUnits()
    {
        Headline h;
        h.setEstimate(twoStages());
        QCOMPARE(h.valueText(Headline::StepTime), QStringLiteral("2.50 s"));
        QCOMPARE(h.valueText(Headline::TokensPerSecond), QStringLiteral("123 k"));
        QCOMPARE(h.valueText(Headline::Mfu), QStringLiteral("43.2 %"));
        QCOMPARE(h.valueText(Headline::TflopsPerGpu), QStringLiteral("427"));
        QCOMPARE(h.valueText(Headline::PeakMemory), QStringLiteral("96.5 GiB / 80.0 GiB"));
        QVERIFY(h.valueText(Headline::Fits).contains(QStringLiteral("OOM")));
        h.setInvalid(QStringLiteral("parallel.tp = 3 must divide model.heads = 64"));
        QCOMPARE(h.valueText(Headline::StepTime), QStringLiteral("—"));
    }

    /// Each evaluation hands the memory chart the Gantt's selected stage again: unchanged, it
    /// queues no second replot of a chart the window has just replotted; a new stage does.
    /// Every chart draws into one paint buffer (nothing is drawn on QCustomPlot's overlay).
    void memoryHighlightRedrawsOnlyWhenItMoves()
    {
        MemoryView view;
        view.resize(700, 400);
        view.show();
        view.setEstimate(twoStages(), defaultScenario());
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QTest::qWait(100); // the draws queued as the view was shown and laid out
        int replots = 0;
        connect(view.plot(), &QCustomPlot::afterReplot, this, [&] { ++replots; });
        view.setHighlightedStage(1);
        QVERIFY(QTest::qWaitFor([&] { return replots == 1; }, 5000));
        for (int i = 0; i < 3; ++i)
            view.setHighlightedStage(1);
        QTest::qWait(50);
        QCOMPARE(replots, 1);
        QCOMPARE(view.highlightedStage(), 1);
        QCOMPARE(view.plot()->layer(QStringLiteral("overlay"))->mode(), QCPLayer::lmLogical);
    }

    /// A baseline of more pipeline stages than the current plan: its ghost bars past the
    /// current plan's last stage are on the chart too (the stage axis holds all of them), and
    /// the value axis holds the tallest ghost; unpinned, the axis is the current plan's again.
    void memoryGhostShowsEveryBaselineStage()
    {
        MemoryView view;
        view.resize(700, 400);
        const Estimate current = twoStages(); // stages 0 and 1, the tallest 96.5 GiB
        Estimate baseline = twoStages();
        StageMemory extra = baseline.stages[0];
        extra.activations = 90 * units::kGiB; // 136.5 GiB: the tallest of all
        for (int s = 2; s < 4; ++s) {
            extra.stage = s;
            baseline.stages.push_back(extra);
        }
        for (bool baselineFirst : {false, true}) {
            if (baselineFirst) {
                view.setBaseline(&baseline);
                view.setEstimate(current, defaultScenario());
            } else {
                view.setEstimate(current, defaultScenario());
                view.setBaseline(&baseline);
            }
            view.plot()->replot();
            QCOMPARE(view.stageCount(), 2);
            QCOMPARE(view.baselineGiB(3), 136.5);
            const QCPRange x = view.plot()->xAxis->range();
            QVERIFY2(x.lower <= -0.45 && x.upper >= 3.45,
                     qPrintable(QStringLiteral("%1..%2").arg(x.lower).arg(x.upper)));
            QVERIFY(view.plot()->yAxis->range().upper > 136.5);
        }
        view.setBaseline(nullptr);
        QVERIFY(view.plot()->xAxis->range().upper < 2);
        QVERIFY(view.plot()->yAxis->range().upper < 136.5);
    }

    /// The strip in a column above a chart, as in the window: whatever height the column
    /// leaves it (from its least to more than it wants) and at a narrow, middle and wide
    /// width, with compare deltas and the calibration badge, no line overprints another.
    void headlineNeverOverprints_data()
    {
        QTest::addColumn<int>("width");
        QTest::addColumn<double>("points");
        for (int width : {420, 560, 800, 1500})
            for (double points : {9.0, 12.0, 16.0})
                QTest::addRow("%d px, %g pt", width, points) << width << points;
    }

    void headlineNeverOverprints()
    {
        QFETCH(int, width);
        QFETCH(double, points);
        QWidget window;
        QFont font = window.font();
        font.setPointSizeF(points);
        window.setFont(font);
        auto* column = new QVBoxLayout(&window);
        auto* h = new Headline(&window);
        auto* chart = new QWidget(&window);
        chart->setMinimumHeight(100);
        chart->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
        column->addWidget(h);
        column->addWidget(chart, 1);
        Estimate e = twoStages();
        e.calibrated = true;
        h->setEstimate(e);
        h->setDelta(Headline::StepTime, QStringLiteral("−0.12 s (−5.0 %) vs baseline"));
        h->setDelta(Headline::TokensPerSecond, QStringLiteral("+6.1 k vs baseline"));
        h->setDelta(Headline::Mfu, QStringLiteral("+2.1 pt vs baseline"));
        h->setDelta(Headline::PeakMemory, QStringLiteral("−12.5 GiB vs baseline"));
        window.resize(width, 600);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QCoreApplication::processEvents();
        const int least = window.minimumSizeHint().height();
        const int most = h->sizeHint().height() + 100 + 2 * column->contentsMargins().top() + 40;
        QSet<int> levels;
        for (int height = least; height <= most; height += 3) {
            window.resize(width, height);
            QCoreApplication::processEvents();
            const QString where = QStringLiteral("%1x%2 (%3 columns, level %4, strip %5 px)")
                                      .arg(window.width())
                                      .arg(window.height())
                                      .arg(h->columns())
                                      .arg(h->compactLevel())
                                      .arg(h->height());
            const QString problems = testing::headlineOverprint(*h);
            QVERIFY2(problems.isEmpty(), qPrintable(where + QStringLiteral("\n") + problems));
            levels << h->compactLevel();
        }
        // Given its preferred height, the strip sets every line apart; the least is the
        // tightest level, and the wide strip has all six in one row.
        QVERIFY(levels.contains(0) ||
                width <= 560); // narrower: the large values need two columns' width
        QVERIFY(levels.contains(Headline::kLevels - 1) || h->columns() == Headline::FigureCount);
        if (width >= 1500 && points <= 9)
            QCOMPARE(h->columns(), int(Headline::FigureCount));
        // The delta and the badge are still there at every level (whole in deltaText()).
        QCOMPARE(h->deltaText(Headline::Mfu), QStringLiteral("+2.1 pt vs baseline"));
        QVERIFY(!h->calibrationText().isEmpty());
    }

    /// A change of level changes the cards, not the strip's size: one resize of the window
    /// resizes the strip once, and the level follows from the height given alone.
    void headlineLevelDoesNotResizeAgain()
    {
        QWidget window;
        auto* column = new QVBoxLayout(&window);
        auto* h = new Headline(&window);
        auto* chart = new QWidget(&window);
        chart->setMinimumHeight(100);
        chart->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
        column->addWidget(h);
        column->addWidget(chart, 1);
        h->setEstimate(twoStages());
        h->setDelta(Headline::StepTime, QStringLiteral("−0.12 s (−5.0 %) vs baseline"));
        window.resize(500, 800);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QCoreApplication::processEvents();
        QCOMPARE(h->compactLevel(), 0);
        const QSize hint = h->sizeHint();
        const QSize least = h->minimumSizeHint();
        QVERIFY(least.height() < hint.height());
        for (int level = Headline::kLevels - 1; level >= 0; --level) {
            // The height the column leaves the strip: just what the level needs.
            const int strip = h->heightAtLevel(level);
            const int before = h->resizeCount();
            window.resize(500, window.minimumSizeHint().height() - least.height() + strip);
            QCoreApplication::processEvents();
            QCOMPARE(h->height(), strip);
            QCOMPARE(h->compactLevel(), level);
            QVERIFY2(h->resizeCount() - before <= 1,
                     qPrintable(QString::number(h->resizeCount() - before)));
            QCOMPARE(h->sizeHint(), hint); // whatever the level
            QCOMPARE(h->minimumSizeHint(), least);
        }
    }

    void invalidClearsDataAndShowsReason()
    {
        MemoryView view;
        view.setEstimate(twoStages(), defaultScenario());
        view.setInvalid(QStringLiteral("parallel.tp = 3 must divide model.heads = 64"));
        QVERIFY(view.isInvalid());
        QCOMPARE(view.stageCount(), 0);
        QCOMPARE(view.overCapacityCount(), 0);
        view.setEstimate(twoStages(), defaultScenario());
        QVERIFY(!view.isInvalid());
        QCOMPARE(view.stageCount(), 2);
    }

    /// A TP change re-tiles the map and resizes its legend, so the square cells need new axis
    /// ranges after the layout: the one replot the window asks for draws with ticks set up for
    /// those ranges (the same a second replot would set up), and queues no other.
    void topologyDrawsANewPlanInOneReplot()
    {
        Scenario s = defaultScenario(); // 64 GPUs, TP 8
        TopologyView view;
        view.resize(600, 400);
        view.show();
        view.setScenario(s);
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QTest::qWait(100);
        int replots = 0;
        connect(view.plot(), &QCustomPlot::afterReplot, this, [&] { ++replots; });
        for (int tp : {4, 8, 2}) {
            s.parallel.tp = tp;
            s.parallel.dp = 64 / (tp * s.parallel.pp);
            replots = 0;
            view.setScenario(s);
            view.plot()->replot(QCustomPlot::rpQueuedRefresh);
            const QCPRange x = view.plot()->xAxis->range(), y = view.plot()->yAxis->range();
            const QVector<double> ticks = view.plot()->yAxis->tickVector();
            QTest::qWait(50);
            QCOMPARE(replots, 1);
            view.plot()->replot();
            QCOMPARE(view.plot()->xAxis->range(), x);
            QCOMPARE(view.plot()->yAxis->range(), y);
            QCOMPARE(view.plot()->yAxis->tickVector(), ticks);
        }
    }

    void topologyColoursFollowRankOrder()
    {
        // 64 GPUs, TP 8 · PP 4 · DP 2, rank order tp-cp-ep-dp-pp (Megatron):
        // rank = tp + 8·dp + 16·pp. Rank 27 = tp 3, dp 1, pp 1.
        Scenario s = defaultScenario();
        TopologyView view;
        view.resize(600, 400);
        view.setScenario(s);
        QVERIFY(!view.isAggregated());
        view.setColorBy(TopologyView::ByTpGroup);
        QCOMPARE(view.groupCount(), 8);
        QCOMPARE(view.drawnGroup(27), 3); // TP group = rank / 8
        QCOMPARE(view.drawnGroup(24), 3);
        QCOMPARE(view.drawnGroup(31), 3);
        QCOMPARE(view.drawnGroup(32), 4);
        view.setColorBy(TopologyView::ByPpStage);
        QCOMPARE(view.groupCount(), 4);
        QCOMPARE(view.drawnGroup(27), 1);
        QCOMPARE(view.drawnGroup(63), 3);
        view.setColorBy(TopologyView::ByDpReplica);
        QCOMPARE(view.groupCount(), 2);
        QCOMPARE(view.drawnGroup(27), 1);
        QCOMPARE(view.drawnGroup(16), 0);
        view.setColorBy(TopologyView::ByNode);
        QCOMPARE(view.drawnGroup(27), 3); // 8 GPUs per node
        const QString text = view.rankText(27);
        QVERIFY2(text.contains(QStringLiteral("node 3")) && text.contains(QStringLiteral("PP 1")),
                 qPrintable(text));
    }

    void topologyAggregatesHugeClusters()
    {
        Scenario s = defaultScenario();
        s.parallel.dp = 32768; // 8 · 4 · 32768 = 1,048,576 GPUs
        s.gpus = s.parallel.gpus();
        TopologyView view;
        view.resize(600, 400);
        QElapsedTimer timer;
        timer.start();
        view.setScenario(s);
        view.plot()->replot(QCustomPlot::rpImmediateRefresh);
        QVERIFY(view.isAggregated());
        QVERIFY2(timer.elapsed() < 5000, "drawing a million GPUs must stay aggregated and fast");
        view.setColorBy(TopologyView::ByPpStage);
        // One cell per node of 8: node 100000 starts at rank 800000, PP stage 800000 / 262144.
        QCOMPARE(view.drawnGroup(800000), 3);
        QCOMPARE(view.drawnGroup(800001), -1); // not the first GPU of a node: not drawn
    }

    void recoloursOnPaletteChange()
    {
        MemoryView view;
        QPalette dark;
        dark.setColor(QPalette::Window, QColor(30, 30, 30));
        dark.setColor(QPalette::Base, QColor(20, 20, 20));
        dark.setColor(QPalette::Text, QColor(230, 230, 230));
        view.setPalette(dark);
        QCOMPARE(view.plot()->xAxis->tickLabelColor(), QColor(230, 230, 230));
        QVERIFY(palette::isDark(dark));
        // Okabe–Ito colours stay distinct from each other.
        for (int i = 0; i < 8; ++i)
            for (int j = i + 1; j < 8; ++j)
                QVERIFY(palette::categorical(i) != palette::categorical(j));
    }

    void unitsFormatting()
    {
        QCOMPARE(units::bytes(1.5 * units::kGiB), QStringLiteral("1.5 GiB"));
        QCOMPARE(units::bytes(512.0 * 1024 * 1024), QStringLiteral("512.0 MiB"));
        QCOMPARE(units::seconds(0.0123), QStringLiteral("12.3 ms"));
        QCOMPARE(units::seconds(42e-6), QStringLiteral("42.0 µs"));
        QCOMPARE(units::percent(0.5), QStringLiteral("50.0 %"));
        QCOMPARE(units::bytes(std::nan("")), QStringLiteral("—"));
    }
};

QTEST_MAIN(TestViews)
#include "test_views.moc"
