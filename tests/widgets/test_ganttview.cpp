// SPDX-License-Identifier: GPL-3.0-or-later
// The Gantt view draws the simulator's ops one for one: a hand-computed 1F1B timeline (p = 4,
// m = 8, F = 1 ms, B = 2 ms) is checked op by op, bubbles stay empty, the level of detail
// folds narrow ops into coverage without losing busy time, and the lane / cursor read the
// simulator's activation count.
#include "core/pipeline_sim.h"
#include "core/schedule.h"
#include "widgets/ganttplot.h"
#include "widgets/ganttview.h"

#include <QSignalSpy>
#include <QTest>
#include <qcustomplot.h>

using namespace paralens;

namespace {

std::shared_ptr<PipelineTimeline> makeTimeline(Schedule kind, int p, int m, int v, double f_ms,
                                               double b_ms, double w_ms)
{
    auto t = std::make_shared<PipelineTimeline>();
    ScheduleParams params;
    params.kind = kind;
    params.stages = p;
    params.microbatches = m;
    params.virtual_stages = v;
    t->schedule = buildSchedule(params);
    t->result = simulatePipeline(
        t->schedule, uniformTimings(t->schedule, f_ms * 1e-3, b_ms * 1e-3, w_ms * 1e-3));
    t->simulated = true;
    return t;
}

double totalBusyMs(const GanttPlottable* g)
{
    double sum = 0;
    for (double v : g->lastDraw().busy_ms)
        sum += v;
    return sum;
}

} // namespace

class TestGanttView : public QObject
{
    Q_OBJECT

private slots:
    void itemsMatchTheSimulatorsOps()
    {
        GanttView view;
        view.resize(1200, 600);
        auto t = makeTimeline(Schedule::OneF1B, 4, 8, 1, 1.0, 2.0, 0.0);
        view.setTimeline(t);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.plot()->replot(QCustomPlot::rpImmediateRefresh);
        const GanttPlottable* g = view.gantt();
        QCOMPARE(g->rowCount(), 4);
        int total = 0;
        for (int r = 0; r < 4; ++r) {
            const auto& ops = g->rowOps(r);
            QCOMPARE(int(ops.size()), 16); // 8 F + 8 B per stage
            const auto order = t->schedule.stageOps(r);
            for (std::size_t k = 0; k < ops.size(); ++k) {
                const PipelineOp& op = t->schedule.ops[std::size_t(ops[k])];
                QCOMPARE(op.device, r);
                QCOMPARE(op.microbatch, order[k].microbatch); // the stage's execution order
                QVERIFY(op.kind == order[k].kind);
            }
            total += int(ops.size());
        }
        QCOMPARE(total, int(t->schedule.ops.size()));
        // Hand-computed 1F1B (Narayanan Fig. 4 top): the step is (m + p − 1)(F + B) = 33 ms;
        // stage 3 runs F1 at 3–4 ms and B1 at 4–6; stage 0 waits from 4 to 10 ms for B1.
        QVERIFY(qAbs(g->spanMs() - 33.0) < 1e-9);
        auto op = g->opAt(3, 3.5);
        QVERIFY(op);
        QVERIFY(t->schedule.ops[std::size_t(*op)].kind == OpKind::F);
        QCOMPARE(t->schedule.ops[std::size_t(*op)].microbatch, 0);
        op = g->opAt(3, 5.0);
        QVERIFY(op);
        QVERIFY(t->schedule.ops[std::size_t(*op)].kind == OpKind::B);
        QVERIFY(!g->opAt(0, 7.0)); // the bubble is empty
        QVERIFY(view.tooltipAt(0, 7.0).isEmpty());
        op = g->opAt(0, 11.0);
        QVERIFY(op);
        QVERIFY(t->schedule.ops[std::size_t(*op)].kind == OpKind::B); // B1 at 10–12 ms
        const QString tip = view.tooltipAt(3, 4.5);
        QVERIFY2(tip.contains(QStringLiteral("B1")), qPrintable(tip));
        QVERIFY(tip.contains(QStringLiteral("micro-batch 1 of 8")));
        QVERIFY(tip.contains(QStringLiteral("stage 3")));
        // Zoomed to the whole step at 1200 px, every op is a labelled rectangle.
        QCOMPARE(g->lastDraw().rectangles, 64);
        QCOMPARE(g->lastDraw().aggregated, 0);
        QCOMPARE(g->lastDraw().labels, 64);
        for (double busy : g->lastDraw().busy_ms)
            QVERIFY(qAbs(busy - 24.0) < 1e-9); // m (F + B) per stage
        QVERIFY(g->lastDraw().links > 0);      // p2p arrows between rows
    }

    void levelOfDetailKeepsEveryOp()
    {
        GanttView view;
        view.resize(800, 500);
        auto t = makeTimeline(Schedule::OneF1B, 8, 2048, 1, 1.0, 2.0, 0.0);
        view.setTimeline(t);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.plot()->replot(QCustomPlot::rpImmediateRefresh);
        const GanttPlottable* g = view.gantt();
        const int ops = int(t->schedule.ops.size());
        // Whole step: ~32k ops on < 800 px: folded into coverage, none lost.
        QCOMPARE(g->lastDraw().rectangles + g->lastDraw().aggregated, ops);
        QVERIFY(g->lastDraw().aggregated > ops * 9 / 10);
        QVERIFY(g->lastDraw().rectangles < 2000);
        for (int r = 0; r < 8; ++r)
            QVERIFY(qAbs(g->lastDraw().busy_ms[std::size_t(r)] - 2048 * 3.0) < 1e-6);

        // Zoomed in: rectangles with labels, and the busy time equals the ops' overlap with
        // the visible range, summed straight from the timeline.
        view.zoomBy(400);
        view.plot()->replot(QCustomPlot::rpImmediateRefresh);
        QVERIFY(g->lastDraw().rectangles > 0);
        QCOMPARE(g->lastDraw().aggregated, 0);
        QVERIFY(g->lastDraw().labels > 0);
        const double lo = view.visibleStartMs(), hi = view.visibleEndMs();
        double expected = 0;
        for (const OpTiming& ot : t->result.timing)
            expected += std::max(0.0, std::min(ot.end * 1e3, hi) - std::max(ot.start * 1e3, lo));
        QVERIFY(qAbs(totalBusyMs(g) - expected) < 1e-6 * expected);
        view.resetZoom();
        QVERIFY(view.autoFit());
        QVERIFY(view.visibleEndMs() >= g->spanMs());
    }

    void switchingScheduleKeepsTheRangeWhenAsked()
    {
        GanttView view;
        view.resize(1000, 500);
        view.setTimeline(makeTimeline(Schedule::GPipe, 4, 8, 1, 1.0, 1.0, 1.0));
        // GPipe with an unsplit backward (B + W = 2 ms): (m + p − 1)(F + B + W) = 33 ms.
        QVERIFY(qAbs(view.gantt()->spanMs() - 33.0) < 1e-9);
        const double end = view.visibleEndMs();
        view.setAutoFit(false);
        view.setTimeline(makeTimeline(Schedule::ZBH1, 4, 8, 1, 1.0, 1.0, 1.0));
        QVERIFY(view.gantt()->timeline()->schedule.kind == Schedule::ZBH1);
        // ZB-H1 (Qi et al.): m (F + B + W) + (p − 1)(F + B − W) = 24 + 3 = 27 ms.
        QVERIFY(qAbs(view.gantt()->spanMs() - 27.0) < 1e-9);
        QCOMPARE(view.visibleEndMs(), end);
        bool hasW = false;
        for (int r = 0; r < view.gantt()->rowCount(); ++r)
            for (std::int32_t i : view.gantt()->rowOps(r))
                hasW |= view.gantt()->timeline()->schedule.ops[std::size_t(i)].kind == OpKind::W;
        QVERIFY(hasW);
    }

    // The user's zoom stays while the step changes a little (a schedule switch) but not when
    // it changes by more than kRefitRatio (405B → 8B, New, Open, undo): the old range would
    // show the new schedule as a sliver, or nothing.
    void timeRangeRefitsWhenTheStepJumps()
    {
        GanttView view;
        view.resize(1000, 500);
        view.setTimeline(makeTimeline(Schedule::OneF1B, 4, 8, 1, 1.0, 2.0, 0.0));
        const double span = view.gantt()->spanMs(); // (m + p − 1)(F + B) = 11 · 3 = 33 ms
        QVERIFY(qAbs(span - 33.0) < 1e-9);
        view.zoomBy(2.0); // the user zooms: auto-fit off
        QVERIFY(!view.autoFit());
        // A 50× shorter step (F = 0.02, B = 0.04 ms): 0.66 ms, the whole of it shown.
        view.setTimeline(makeTimeline(Schedule::OneF1B, 4, 8, 1, 0.02, 0.04, 0.0));
        QVERIFY(qAbs(view.gantt()->spanMs() - 0.66) < 1e-9);
        QCOMPARE(view.visibleStartMs(), 0.0);
        QVERIFY(qAbs(view.visibleEndMs() - 0.66 * 1.01) < 1e-9);
        // Zoomed again, a 10× longer step is shown whole too.
        view.zoomBy(2.0);
        view.setTimeline(makeTimeline(Schedule::OneF1B, 4, 8, 1, 0.2, 0.4, 0.0));
        QVERIFY(qAbs(view.visibleEndMs() - 6.6 * 1.01) < 1e-9);
        // A small change (6.6 → 7.7 ms) keeps the zoom.
        view.zoomBy(2.0);
        const double lo = view.visibleStartMs(), hi = view.visibleEndMs();
        view.setTimeline(makeTimeline(Schedule::OneF1B, 4, 8, 1, 0.3, 0.4, 0.0));
        QCOMPARE(view.visibleStartMs(), lo);
        QCOMPARE(view.visibleEndMs(), hi);
    }

    // Time axes use the headline's unit: ms below a 1 s step, s from 1 s on.
    void timeAxisUnitFollowsTheStep()
    {
        GanttView view;
        view.resize(1000, 500);
        view.setTimeline(makeTimeline(Schedule::OneF1B, 4, 8, 1, 1.0, 2.0, 0.0)); // 33 ms
        QCOMPARE(view.timeAxisUnitSeconds(), 1e-3);
        view.plot()->replot(QCustomPlot::rpImmediateRefresh);
        QCPAxis* lane = view.memoryLane()->keyAxis();
        QCOMPARE(lane->label(), QStringLiteral("time (ms)"));
        view.setTimeline(makeTimeline(Schedule::OneF1B, 4, 8, 1, 100.0, 200.0, 0.0)); // 3.3 s
        QCOMPARE(view.timeAxisUnitSeconds(), 1.0);
        view.plot()->replot(QCustomPlot::rpImmediateRefresh);
        QCOMPARE(lane->label(), QStringLiteral("time (s)"));
        // The keys stay in ms; the labels read seconds: a tick at 2000 ms reads "2".
        const QVector<double> ticks = lane->tickVector();
        const QVector<QString> labels = lane->tickVectorLabels();
        bool checked = false;
        for (int i = 0; i < ticks.size(); ++i)
            if (qAbs(ticks[i] - 2000.0) < 1e-9) {
                QCOMPARE(labels[i], QStringLiteral("2"));
                checked = true;
            }
        QVERIFY2(checked, "a tick at 2000 ms");
    }

    // Exports leave out the selected stage's band (a screen cursor), and it comes back.
    void exportHidesTheSelection()
    {
        GanttView view;
        view.resize(800, 400);
        view.setTimeline(makeTimeline(Schedule::OneF1B, 4, 8, 1, 1.0, 2.0, 0.0));
        view.setMemoryLaneVisible(false); // the lane is the selected stage's data, not a mark
        view.setSelectedStage(2);
        auto grab = [&] {
            QImage img(QSize(800, 400), QImage::Format_RGB32);
            img.fill(Qt::white);
            QCPPainter painter(&img);
            view.plot()->toPainter(&painter, img.width(), img.height());
            return img;
        };
        const QImage selected = grab();
        view.setExporting(true);
        const QImage exported = grab();
        view.setExporting(false);
        QVERIFY(selected != exported);
        QCOMPARE(grab(), selected);
        view.setSelectedStage(0);
        view.setExporting(true);
        QCOMPARE(grab(), exported); // the same picture whichever stage is selected
        view.setExporting(false);
    }

    void chunksExpandIntoRows()
    {
        GanttView view;
        auto t = makeTimeline(Schedule::Interleaved1F1B, 4, 8, 2, 0.5, 1.0, 0.0);
        view.setTimeline(t);
        QCOMPARE(view.gantt()->rowCount(), 4);
        view.setExpandChunks(true);
        QCOMPARE(view.gantt()->rowCount(), 8);
        for (int r = 0; r < 8; ++r) {
            QCOMPARE(int(view.gantt()->rowOps(r).size()), 16);
            for (std::int32_t i : view.gantt()->rowOps(r))
                QCOMPARE(int(t->schedule.ops[std::size_t(i)].chunk), r % 2);
        }
    }

    void laneAndCursorFollowTheSimulator()
    {
        GanttView view;
        auto t = makeTimeline(Schedule::OneF1B, 4, 8, 1, 1.0, 2.0, 0.0);
        view.setTimeline(t);
        QSignalSpy selected(&view, &GanttView::stageSelected);
        // Stage 0 has started F1..F4 by 3.5 ms and freed none (1F1B holds p − r).
        QCOMPARE(view.inflightAt(0, 3.5e-3), 4);
        QCOMPARE(view.inflightAt(3, 3.5e-3), 1);
        QCOMPARE(view.inflightAt(0, 0.5e-3), 1);
        QVERIFY(view.memoryLane()->data()->size() > 2);
        view.setSelectedStage(3);
        QCOMPARE(selected.count(), 1);
        QCOMPARE(selected.at(0).at(0).toInt(), 3);
        view.setCursorSeconds(4.5e-3);
        QCOMPARE(view.cursorSeconds(), 4.5e-3);
        // Stepping goes to the earliest op start after the cursor on any stage.
        double expected = t->result.pipeline_seconds;
        for (const OpTiming& ot : t->result.timing)
            if (ot.start > 4.5e-3 + 1e-12)
                expected = std::min(expected, ot.start);
        QCOMPARE(view.nextEventAfter(4.5e-3), expected);
    }

    void mouseAndKeyboardZoomPanAndSelect()
    {
        GanttView view;
        view.resize(1000, 500);
        view.setTimeline(makeTimeline(Schedule::OneF1B, 4, 8, 1, 1.0, 2.0, 0.0));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.plot()->replot(QCustomPlot::rpImmediateRefresh);
        const double width = view.visibleEndMs() - view.visibleStartMs();
        QTest::keyClick(view.plot(), Qt::Key_Plus);
        QVERIFY(qAbs((view.visibleEndMs() - view.visibleStartMs()) - width / 1.5) < 1e-9);
        QVERIFY(!view.autoFit());
        const double start = view.visibleStartMs();
        QTest::keyClick(view.plot(), Qt::Key_Right);
        QVERIFY(view.visibleStartMs() > start);
        QTest::keyClick(view.plot(), Qt::Key_Home);
        QCOMPARE(view.visibleStartMs(), 0.0);
        QVERIFY(view.autoFit());
        // A click on stage 2's row selects it.
        QCPAxis* y = view.plot()->axisRect()->axis(QCPAxis::atLeft);
        QCPAxis* x = view.plot()->axisRect()->axis(QCPAxis::atBottom);
        QSignalSpy selected(&view, &GanttView::stageSelected);
        const QPoint at(int(x->coordToPixel(5.0)), int(y->coordToPixel(2.0)));
        QTest::mouseClick(view.plot(), Qt::LeftButton, {}, at);
        QCOMPARE(selected.count(), 1);
        QCOMPARE(view.selectedStage(), 2);
    }

    // The label rule by hand: labels centred on rows rowPx apart overlap unless they are at
    // least ceil(line / rowPx) rows apart; the stride is that rounded up to a power of two,
    // and the last row takes the place of the label before it where they would overlap.
    void labelledRowsByHand()
    {
        using V = std::vector<int>;
        QCOMPARE(GanttView::labelledRows(4, 20.0, 15), (V{0, 1, 2, 3})); // room for all
        QCOMPARE(GanttView::labelledRows(8, 6.25, 15), (V{0, 4, 7}));    // 3 rows → 4
        QCOMPARE(GanttView::labelledRows(8, 7.5, 15), (V{0, 2, 4, 7}));  // 6 gives way to 7
        QCOMPARE(GanttView::labelledRows(8, 1.0, 15), (V{0}));           // 8 px: one label
        QCOMPARE(GanttView::labelledRows(2, 15.0, 15), (V{0, 1}));       // touching is fine
        QCOMPARE(GanttView::labelledRows(1, 3.0, 15), (V{0}));
        QCOMPARE(GanttView::labelledRows(0, 3.0, 15), V{});
        const V many = GanttView::labelledRows(64, 100.0, 15); // ≤ ~16 labels: every 4th
        QCOMPARE(many.front(), 0);
        QCOMPARE(many[1], 4);
        QCOMPARE(many.back(), 63);
        QCOMPARE(int(many.size()), 17);
        // Invariant over a sweep: first and last row, no two labels closer than a line.
        for (int rows = 1; rows <= 40; ++rows)
            for (double px = 0.5; px <= 30; px += 0.75) {
                const V r = GanttView::labelledRows(rows, px, 15);
                QCOMPARE(r.front(), 0);
                if ((rows - 1) * px >= 15)
                    QCOMPARE(r.back(), rows - 1);
                for (std::size_t i = 1; i < r.size(); ++i)
                    QVERIFY2((r[i] - r[i - 1]) * px >= 15 - 1e-9,
                             qPrintable(QStringLiteral("%1 rows of %2 px").arg(rows).arg(px)));
            }
    }

    // Compare with a deeper baseline (p = 8 over p = 4) in a short view: the ghosted lane's
    // rows are shorter than a line of text, and its labels, as drawn in the first paint, do
    // not overlap (boxes from the font's metrics at the ticks' pixels), with stage 0 and
    // stage 7 labelled. The current lane keeps the same rule.
    void baselineRowLabelsDoNotOverlap()
    {
        GanttView view;
        view.resize(700, 380);
        view.setTimeline(makeTimeline(Schedule::OneF1B, 4, 8, 1, 1.0, 2.0, 0.0));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.plot()->replot(QCustomPlot::rpImmediateRefresh);
        // The baseline lane is laid out for the first time in this one paint.
        view.setBaseline(makeTimeline(Schedule::OneF1B, 8, 16, 1, 1.0, 2.0, 0.0));
        view.plot()->replot(QCustomPlot::rpImmediateRefresh);
        auto check = [](QCPAxis* y, int rows, bool mustThin) {
            const QFontMetrics fm(y->tickLabelFont());
            const double rowPx = double(y->axisRect()->height()) / rows;
            if (mustThin)
                QVERIFY2(rowPx < fm.height(), qPrintable(QStringLiteral("rows %1 px").arg(rowPx)));
            const QVector<double> ticks = y->tickVector();
            const QVector<QString> labels = y->tickVectorLabels();
            QCOMPARE(ticks.size(), labels.size());
            QVERIFY(ticks.size() >= 2);
            std::vector<QRectF> boxes;
            for (int i = 0; i < ticks.size(); ++i) {
                const double py = y->coordToPixel(ticks[i]);
                QRectF box(0, 0, fm.horizontalAdvance(labels[i]), fm.height());
                box.moveCenter(QPointF(0, py)); // QCustomPlot centres a left tick label
                boxes.push_back(box);
            }
            for (std::size_t i = 0; i < boxes.size(); ++i)
                for (std::size_t j = i + 1; j < boxes.size(); ++j)
                    QVERIFY2(!boxes[i].intersects(boxes[j]),
                             qPrintable(labels[int(i)] + QStringLiteral(" / ") + labels[int(j)]));
            QVERIFY(labels.contains(QStringLiteral("stage 0")));
            QVERIFY(labels.contains(QStringLiteral("stage %1").arg(rows - 1)));
        };
        check(view.baselineGantt()->valueAxis(), 8, true);
        if (QTest::currentTestFailed())
            return;
        check(view.gantt()->valueAxis(), 4, false);
        // The lane's axis label stands rotated beside it: its widest line fits the lane.
        QCPAxis* laneY = view.memoryLane()->valueAxis();
        const QFontMetrics fm(laneY->labelFont());
        int widest = 0;
        for (const QString& line : laneY->label().split(QLatin1Char('\n')))
            widest = std::max(widest, fm.horizontalAdvance(line));
        QVERIFY2(widest <= laneY->axisRect()->height(), qPrintable(laneY->label()));
        // A roomy view: every row labelled, and the full lane label.
        view.resize(1200, 1000);
        view.plot()->replot(QCustomPlot::rpImmediateRefresh);
        QCOMPARE(view.baselineGantt()->valueAxis()->tickVector().size(), 8);
        QCOMPARE(laneY->label(), QStringLiteral("stage 0\nin flight"));
    }

    void laneLabelShortensToItsHeight()
    {
        const QFontMetrics fm(QFont(QStringLiteral("DejaVu Sans"), 9));
        const int stage = fm.horizontalAdvance(QStringLiteral("stage 3"));
        const int flight = fm.horizontalAdvance(QStringLiteral("in flight"));
        QCOMPARE(GanttView::laneAxisLabel(3, std::max(stage, flight), fm),
                 QStringLiteral("stage 3\nin flight"));
        QCOMPARE(GanttView::laneAxisLabel(3, std::max(stage, flight) - 1, fm),
                 QStringLiteral("s3\nheld"));
        QCOMPARE(GanttView::laneAxisLabel(3, 1, fm), QStringLiteral("s3"));
    }

    void noTimelineShowsAMessage()
    {
        GanttView view;
        view.setTimeline(nullptr);
        QVERIFY(view.isInvalid());
        auto t = makeTimeline(Schedule::OneF1B, 2, 2, 1, 1.0, 1.0, 0.0);
        t->simulated = false;
        view.setTimeline(t);
        QVERIFY(view.invalidReason().contains(QStringLiteral("closed form")));
    }
};

QTEST_MAIN(TestGanttView)
#include "test_ganttview.moc"
