// SPDX-License-Identifier: GPL-3.0-or-later
// Workshop mode, compare and the Gantt in the window: schedule switches go through the undo
// stack and keep the time axis, the animation moves the cursor, the Gantt's stage selection
// highlights the memory stack, a pinned baseline shows alongside with deltas equal to the
// difference of the two estimates, and the schedule exports as a Perfetto trace.
#include "app/compare.h"
#include "app/document.h"
#include "app/export.h"
#include "app/mainwindow.h"
#include "app/workshop.h"
#include "core/compare.h"
#include "core/evaluate.h"
#include "core/plan_options.h"
#include "core/scenario_io.h"
#include "core/units.h"
#include "widgets/breakdownview.h"
#include "widgets/controlpanel.h"
#include "widgets/ganttplot.h"
#include "widgets/ganttview.h"
#include "widgets/headline.h"
#include "widgets/memoryview.h"

#include <QComboBox>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QToolBar>
#include <QUndoStack>
#include <QVariantAnimation>
#include <qcustomplot.h>

using namespace paralens;

namespace {

/// p = 4, m = 8 on the default model: the size of the papers' figures.
Scenario smallPipeline(Schedule s)
{
    Scenario sc = defaultScenario();
    sc.gpus = 32;
    sc.parallel.tp = 8;
    sc.parallel.pp = 4;
    sc.parallel.dp = 1;
    sc.parallel.schedule = s;
    sc.parallel.virtual_stages = s == Schedule::Interleaved1F1B ? 2 : 1;
    sc.training.global_batch = 8;
    return sc;
}

bool settle(MainWindow& w)
{
    return QTest::qWaitFor([&] {
        return !w.evaluator()->isBusy() && w.shown().generation == w.evaluator()->generation();
    });
}

} // namespace

class TestWorkshop : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase() { QCoreApplication::setOrganizationName(QStringLiteral("ParaLensTest")); }

    void ganttShowsTheWindowsTimeline()
    {
        MainWindow w;
        w.document()->reset(smallPipeline(Schedule::OneF1B));
        w.show();
        QVERIFY(settle(w));
        const PipelineTimeline* t = w.ganttView()->gantt()->timeline();
        QVERIFY(t);
        QVERIFY(t->schedule.kind == Schedule::OneF1B);
        QCOMPARE(t->schedule.stages, 4);
        QCOMPARE(t->schedule.microbatches, 8);
        // The timeline is the core's: its span is the estimate's pipeline time source.
        PipelineTimeline oracle;
        Estimate e;
        evaluate(w.document()->scenario(), e, nullptr, ModelConstants{}, &oracle);
        QCOMPARE(t->result.pipeline_seconds, oracle.result.pipeline_seconds);
        QCOMPARE(t->schedule.ops.size(), oracle.schedule.ops.size());
        QVERIFY(w.charts().contains(w.ganttView()));

        // Selecting a stage in the Gantt highlights it in the memory stacks.
        w.ganttView()->setSelectedStage(2);
        QCOMPARE(w.memoryView()->highlightedStage(), 2);
    }

    void switchingScheduleIsAnUndoableEditThatKeepsTheZoom()
    {
        MainWindow w;
        w.document()->reset(smallPipeline(Schedule::GPipe));
        w.show();
        QVERIFY(settle(w));
        Workshop* ws = w.workshop();
        ws->setPresentation(true);
        QVERIFY(ws->toolBar()->isVisible());
        const double end = w.ganttView()->visibleEndMs();
        const double gpipe = w.ganttView()->gantt()->spanMs();
        ws->switchSchedule(Schedule::Interleaved1F1B);
        QVERIFY(settle(w));
        QVERIFY(w.ganttView()->gantt()->timeline()->schedule.kind == Schedule::Interleaved1F1B);
        QCOMPARE(w.ganttView()->gantt()->timeline()->schedule.chunks, 2);
        QCOMPARE(w.ganttView()->visibleEndMs(), end);
        QVERIFY(w.ganttView()->gantt()->spanMs() < gpipe); // the bubble shrank
        ws->switchSchedule(Schedule::ZBH1);
        QVERIFY(settle(w));
        QVERIFY(w.ganttView()->gantt()->timeline()->schedule.kind == Schedule::ZBH1);
        QCOMPARE(w.ganttView()->visibleEndMs(), end);
        QCOMPARE(w.document()->undoStack()->count(), 2);
        w.document()->undoStack()->undo();
        QVERIFY(settle(w));
        QVERIFY(w.document()->scenario().parallel.schedule == Schedule::Interleaved1F1B);
        QVERIFY(w.ganttView()->gantt()->timeline()->schedule.kind == Schedule::Interleaved1F1B);
        ws->setPresentation(false);
        QVERIFY(!ws->toolBar()->isVisible());
    }

    void workshopAndPanelSwitchSchedulesAlike()
    {
        // The workshop's buttons and the panel's schedule box give the same plan from the same
        // start: withSchedule's. From 1f1b with a stale v = 4, interleaved keeps v = 4 (a valid
        // interleaved plan here: 4·4 <= 80 layers, m = 8 >= pp); the buttons used to force 2.
        MainWindow w;
        Scenario stale = smallPipeline(Schedule::OneF1B);
        stale.parallel.virtual_stages = 4;
        Scenario wide = smallPipeline(Schedule::Interleaved1F1B);
        wide.parallel.virtual_stages = 4;
        const Scenario starts[] = {stale, wide, smallPipeline(Schedule::GPipe),
                                   smallPipeline(Schedule::ZBH1)};
        const Schedule targets[] = {Schedule::GPipe, Schedule::OneF1B, Schedule::Interleaved1F1B,
                                    Schedule::ZBH1};
        QComboBox* box = nullptr;
        for (QComboBox* b : w.controlPanel()->findChildren<QComboBox*>())
            if (b->accessibleName() == QStringLiteral("Schedule"))
                box = b;
        QVERIFY(box);
        QSignalSpy panelEdits(w.controlPanel(), &ControlPanel::edited);
        for (const Scenario& start : starts)
            for (Schedule to : targets) {
                if (to == start.parallel.schedule)
                    continue;
                w.document()->reset(start);
                w.workshop()->switchSchedule(to);
                const ParallelPlan fromWorkshop = w.document()->scenario().parallel;
                QVERIFY(fromWorkshop == withSchedule(start.parallel, to));

                w.document()->reset(start);
                const auto at = std::find(kAllSchedules.begin(), kAllSchedules.end(), to);
                emit box->activated(int(at - kAllSchedules.begin()));
                QVERIFY(!panelEdits.isEmpty());
                QVERIFY(panelEdits.last().at(0).value<Scenario>().parallel == fromWorkshop);
            }
        w.document()->reset(stale);
        w.workshop()->switchSchedule(Schedule::Interleaved1F1B);
        QCOMPARE(w.document()->scenario().parallel.virtual_stages, 4);
        QVERIFY(validate(w.document()->scenario()).empty());
    }

    void animationMovesTheCursorToTheEnd()
    {
        MainWindow w;
        w.document()->reset(smallPipeline(Schedule::OneF1B));
        w.show();
        QVERIFY(settle(w));
        Workshop* ws = w.workshop();
        ws->setPresentation(true);
        QCOMPARE(w.ganttView()->cursorSeconds(), 0.0);
        ws->step();
        const double first = w.ganttView()->cursorSeconds();
        QVERIFY(first > 0);
        ws->setDurationSeconds(0.4);
        QList<double> seen;
        connect(ws->animation(), &QVariantAnimation::valueChanged, this,
                [&] { seen << w.ganttView()->cursorSeconds(); });
        ws->play();
        QVERIFY(ws->isPlaying());
        QVERIFY(QTest::qWaitFor([&] { return !ws->isPlaying(); }, 5000));
        QVERIFY(seen.size() >= 3);
        QVERIFY(std::is_sorted(seen.begin(), seen.end()));
        const double end = w.ganttView()->gantt()->timeline()->result.pipeline_seconds;
        QCOMPARE(w.ganttView()->cursorSeconds(), end);
        // The cursor's in-flight count is the simulator's: stage 0 holds nothing at the end.
        QCOMPARE(w.ganttView()->inflightAt(0, end), 0);
    }

    void compareShowsBothAndTheDeltas()
    {
        MainWindow w;
        const Scenario base = smallPipeline(Schedule::GPipe);
        w.document()->reset(base);
        w.show();
        QVERIFY(settle(w));
        w.comparison()->pin(w.shown());
        QVERIFY(w.comparison()->isPinned());
        const Scenario current = smallPipeline(Schedule::OneF1B);
        w.document()->edit(current, QStringLiteral("parallel.schedule"));
        QVERIFY(settle(w));
        QVERIFY(w.ganttView()->hasBaseline());
        QVERIFY(w.ganttView()->baselineGantt()->timeline()->schedule.kind == Schedule::GPipe);
        QVERIFY(w.ganttView()->gantt()->timeline()->schedule.kind == Schedule::OneF1B);

        // Oracles: the two estimates computed here, independently of the window.
        const Estimate eb = evaluate(base);
        const Estimate ec = evaluate(current);
        for (std::size_t s = 0; s < eb.stages.size(); ++s)
            QCOMPARE(w.memoryView()->baselineGiB(int(s)), eb.stages[s].total() / units::kGiB);
        QCOMPARE(w.breakdownView()->baselineStepSeconds(), eb.time.step_seconds);
        const EstimateDelta d = delta(ec, eb);
        QCOMPARE(d.step_seconds, ec.time.step_seconds - eb.time.step_seconds);
        QCOMPARE(d.mfu, ec.throughput.mfu - eb.throughput.mfu);
        QCOMPARE(d.peak_bytes, ec.peak_bytes - eb.peak_bytes);
        // 1F1B holds fewer micro-batches than GPipe: less activation memory.
        QVERIFY(d.peak_bytes < 0);
        QCOMPARE(w.headline()->deltaText(Headline::StepTime),
                 Comparison::stepDeltaText(ec.time.step_seconds - eb.time.step_seconds,
                                           ec.time.step_seconds / eb.time.step_seconds));
        QCOMPARE(w.headline()->deltaText(Headline::PeakMemory),
                 Comparison::bytesDeltaText(ec.peak_bytes - eb.peak_bytes));
        QVERIFY(w.headline()->deltaText(Headline::PeakMemory).startsWith(QStringLiteral("−")));
        QCOMPARE(w.headline()->deltaText(Headline::Mfu),
                 Comparison::mfuDeltaText(ec.throughput.mfu - eb.throughput.mfu));

        // PARALENS_SHOT_DIR=dir keeps a picture of the compare mode for a person to look at.
        const QString shots = qEnvironmentVariable("PARALENS_SHOT_DIR");
        if (!shots.isEmpty()) {
            w.resize(1600, 1000);
            w.updateNow();
            QVERIFY(w.grab().save(shots + QStringLiteral("/compare.png")));
        }
        // Export includes both: the Gantt image carries the baseline rows too.
        QTemporaryDir dir;
        QString error;
        QVERIFY2(exportChart(w.ganttView(), dir.filePath(QStringLiteral("g.png")), {}, {}, &error),
                 qPrintable(error));

        w.comparison()->unpin();
        QVERIFY(!w.ganttView()->hasBaseline());
        QVERIFY(w.headline()->deltaText(Headline::StepTime).isEmpty());
        QCOMPARE(w.memoryView()->baselineGiB(0), 0.0);
        QCOMPARE(w.breakdownView()->baselineStepSeconds(), 0.0);
    }

    /// An unchanged peak says so instead of "+0 B vs baseline".
    void unchangedMemorySaysSame()
    {
        QCOMPARE(Comparison::bytesDeltaText(0), QStringLiteral("same as baseline"));
        QVERIFY(Comparison::bytesDeltaText(-1024).startsWith(QStringLiteral("−")));
    }

    /// #8: presentation fits a 1024×768 projector, keeps the memory chart a chart, has the
    /// V-schedule buttons and an icon on Play / Pause, leaves with Esc, and gives every chart
    /// its normal fonts back.
    void presentationFitsAProjectorAndLeavesWithEsc()
    {
        MainWindow w;
        w.document()->reset(smallPipeline(Schedule::OneF1B));
        w.resize(1024, 768);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(settle(w));
        QFont titleBefore;
        for (QCPLayoutElement* e : w.memoryView()->plot()->plotLayout()->elements(true))
            if (auto* t = qobject_cast<QCPTextElement*>(e))
                titleBefore = t->font();
        const QFont tickBefore =
            w.ganttView()->plot()->axisRect()->axis(QCPAxis::atBottom)->tickLabelFont();
        Workshop* ws = w.workshop();
        ws->setPresentation(true);
        QCoreApplication::processEvents();
        w.resize(1024, 768);
        QCoreApplication::processEvents();
        QVERIFY2(w.minimumSizeHint().width() <= 1024,
                 qPrintable(QString::number(w.minimumSizeHint().width())));
        QVERIFY2(w.width() <= 1024, qPrintable(QString::number(w.width())));
        // The memory stacks keep a readable share of the column (it was a ~90 px strip).
        QVERIFY2(w.memoryView()->height() >= w.ganttView()->height() / 2,
                 qPrintable(QStringLiteral("%1 vs %2")
                                .arg(w.memoryView()->height())
                                .arg(w.ganttView()->height())));
        // The HBM capacity label grows with it too (it kept the font it was made with).
        QVERIFY(w.memoryView()->capacityLabel()->font().pointSizeF() >= w.font().pointSizeF());
        // Every chart's title grows with the window's font.
        for (QCPLayoutElement* e : w.memoryView()->plot()->plotLayout()->elements(true))
            if (auto* t = qobject_cast<QCPTextElement*>(e))
                QVERIFY(t->font().pointSizeF() > titleBefore.pointSizeF());

        QStringList buttons;
        for (QAction* a : ws->toolBar()->actions())
            buttons << a->text();
        QVERIFY2(buttons.contains(QStringLiteral("ZB-V")) &&
                     buttons.contains(QStringLiteral("DualPipeV")),
                 qPrintable(buttons.join(QStringLiteral(", "))));
        for (QAction* a : ws->toolBar()->actions())
            if (a->text() == QStringLiteral("ZB-V"))
                a->trigger();
        QVERIFY(w.document()->scenario().parallel.schedule == Schedule::ZBV);
        QCOMPARE(w.document()->scenario().parallel.virtual_stages, 2);
        QVERIFY(settle(w));
        ws->setDurationSeconds(30);
        ws->play();
        QCOMPARE(ws->playAction()->text(), QStringLiteral("Pause"));
        QVERIFY(!ws->playAction()->icon().isNull());
        for (const QChar c : ws->playAction()->text())
            QVERIFY(c.unicode() < 0x2000); // no ⏸ or ▶ a font may lack

        QTest::keyClick(&w, Qt::Key_Escape);
        QVERIFY(!ws->isPresenting());
        QVERIFY(!ws->isPlaying());
        QVERIFY(!ws->toolBar()->isVisible());
        for (QCPLayoutElement* e : w.memoryView()->plot()->plotLayout()->elements(true))
            if (auto* t = qobject_cast<QCPTextElement*>(e))
                QCOMPARE(t->font().pointSizeF(), titleBefore.pointSizeF());
        QCOMPARE(w.ganttView()
                     ->plot()
                     ->axisRect()
                     ->axis(QCPAxis::atBottom)
                     ->tickLabelFont()
                     .pointSizeF(),
                 tickBefore.pointSizeF());
        // Esc outside presentation does nothing.
        QTest::keyClick(&w, Qt::Key_Escape);
        QVERIFY(!ws->isPresenting());
    }

    void traceExportIsChromeTraceJson()
    {
        MainWindow w;
        w.document()->reset(smallPipeline(Schedule::OneF1B));
        QVERIFY(settle(w));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("t.json"));
        QString error;
        QVERIFY2(exportTrace(*w.shown().timeline, path, &error), qPrintable(error));
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonDocument doc = QJsonDocument::fromJson(f.readAll());
        QVERIFY(doc.isObject());
        int complete = 0;
        for (const QJsonValue& ev : doc.object().value(QStringLiteral("traceEvents")).toArray())
            complete +=
                ev.toObject().value(QStringLiteral("ph")).toString() == QLatin1String("X") &&
                !ev.toObject()
                     .value(QStringLiteral("name"))
                     .toString()
                     .startsWith(QStringLiteral("DP"));
        QCOMPARE(complete, 4 * 8 * 2); // one event per op: p · m · (F + B)
        QVERIFY(
            !exportTrace(*w.shown().timeline, QStringLiteral("/nonexistent/dir/t.json"), &error));
        QVERIFY(error.contains(QStringLiteral("/nonexistent/dir/t.json")));
    }
};

QTEST_MAIN(TestWorkshop)
#include "test_workshop.moc"
