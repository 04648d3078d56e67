// SPDX-License-Identifier: GPL-3.0-or-later
// The explorer window offscreen: it opens, its sliders move, an impossible plan names its
// rule and greys the views, documents save/load, and a corrupt file leaves the document.
#include "app/document.h"
#include "app/mainwindow.h"
#include "core/evaluate.h"
#include "core/scenario_io.h"
#include "core/units.h"
#include "widgets/breakdownview.h"
#include "widgets/controlpanel.h"
#include "widgets/headline.h"
#include "widgets/memoryview.h"
#include "widgets/snapslider.h"
#include "widgets/topologyview.h"

#include <QDropEvent>
#include <QFile>
#include <QLabel>
#include <QMessageBox>
#include <QMimeData>
#include <QScreen>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>
#include <qcustomplot.h>

using namespace paralens;

class TestMainWindow : public QObject
{
    Q_OBJECT

    /// Waits until the views show the document's current scenario.
    static bool settle(MainWindow& w)
    {
        return QTest::qWaitFor([&] {
            return !w.evaluator()->isBusy() && w.shown().generation == w.evaluator()->generation();
        });
    }

    /// The views show exactly what the core computes for `s` (the oracle is core's evaluate(),
    /// run here independently of the window's evaluation thread).
    static void verifyViewsShow(MainWindow& w, const Scenario& s)
    {
        const Estimate expected = evaluate(s);
        MemoryView* mem = w.memoryView();
        QCOMPARE(mem->stageCount(), int(expected.stages.size()));
        for (int i = 0; i < mem->stageCount(); ++i) {
            const StageMemory& st = expected.stages[std::size_t(i)];
            QCOMPARE(mem->segmentGiB(MemoryView::Parameters, i), st.parameters / units::kGiB);
            QCOMPARE(mem->segmentGiB(MemoryView::Gradients, i), st.gradients / units::kGiB);
            QCOMPARE(mem->segmentGiB(MemoryView::OptimizerStates, i),
                     st.optimizer_states / units::kGiB);
            QCOMPARE(mem->segmentGiB(MemoryView::Activations, i), st.activations / units::kGiB);
            QCOMPARE(mem->segmentGiB(MemoryView::Buffers, i), st.comm_buffers / units::kGiB);
            QCOMPARE(mem->segmentGiB(MemoryView::Overhead, i), st.runtime_overhead / units::kGiB);
        }
        QCOMPARE(mem->capacityGiB(), expected.capacity_bytes / units::kGiB);
        BreakdownView* bd = w.breakdownView();
        const double unit = bd->axisUnitSeconds();
        QCOMPARE(bd->segmentSeconds(BreakdownView::Compute),
                 expected.time.compute_seconds / unit * unit);
        QCOMPARE(bd->segmentSeconds(BreakdownView::Bubble),
                 expected.time.bubble_seconds / unit * unit);
        QCOMPARE(bd->segmentSeconds(BreakdownView::ExposedTp),
                 expected.time.exposed.tp / unit * unit);
        QCOMPARE(bd->segmentSeconds(BreakdownView::ExposedDp),
                 expected.time.exposed.dp / unit * unit);
        QCOMPARE(bd->segmentSeconds(BreakdownView::HiddenDp),
                 expected.time.overlapped.dp / unit * unit);
        Headline probe;
        probe.setEstimate(expected);
        for (int f = 0; f < Headline::FigureCount; ++f)
            QCOMPARE(w.headline()->valueText(Headline::Figure(f)),
                     probe.valueText(Headline::Figure(f)));
        QCOMPARE(w.topologyView()->groupCount() > 0, true);
    }

    QTemporaryDir m_dir;

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("ParaLensTest"));
        QCoreApplication::setApplicationName(QStringLiteral("test_mainwindow"));
        QSettings().clear();
        QVERIFY(m_dir.isValid());
    }

    void opensWithTheDefaultScenario()
    {
        MainWindow w;
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(settle(w));
        QCOMPARE(w.document()->scenario().model_id, std::string("llama3-70b"));
        QCOMPARE(w.controlPanel()->slider(ControlPanel::Tp)->value(), 8);
        QVERIFY(w.windowTitle().contains(QStringLiteral("Untitled")));
        QVERIFY(!w.isWindowModified());
    }

    void slidersMoveAndMarkModified()
    {
        MainWindow w;
        w.show();
        QVERIFY(settle(w));
        QSlider* pp = w.controlPanel()->slider(ControlPanel::Pp)->slider();
        pp->setFocus();
        QTest::keyClick(pp, Qt::Key_Left); // PP 4 -> 2, DP follows: 64 / (8 · 2) = 4
        QCOMPARE(w.document()->scenario().parallel.pp, 2);
        QCOMPARE(w.document()->scenario().parallel.dp, 4);
        QVERIFY(w.isWindowModified());
        QVERIFY(settle(w));
        QCOMPARE(w.shown().scenario.parallel.pp, 2);
        w.document()->undoStack()->undo();
        QCOMPARE(w.document()->scenario().parallel.pp, 4);
        QCOMPARE(w.controlPanel()->slider(ControlPanel::Pp)->value(), 4);
        QVERIFY(!w.isWindowModified());
    }

    void impossiblePlanShowsReasonAndGreysViews()
    {
        MainWindow w;
        w.show();
        QVERIFY(settle(w));
        w.controlPanel()->gpusBox()->setValue(60);
        QVERIFY(settle(w));
        QVERIFY(w.controlPanel()->bannerText().contains(QStringLiteral("GPUs = 60")));
        QVERIFY(!w.shown().ok());
        for (ChartView* c : w.charts()) {
            QVERIFY2(c->isInvalid(), qPrintable(c->chartId()));
            QVERIFY(c->invalidReason().contains(QStringLiteral("GPUs = 60")));
        }
        QCOMPARE(w.memoryView()->stageCount(), 0); // no stale numbers
        QCOMPARE(w.headline()->valueText(Headline::StepTime), QStringLiteral("—"));
    }

    /// One tick, one validation: the panel, the document and the evaluator do not each check
    /// the plan again; the one Evaluation carries its errors to the panel's marks, the status
    /// line and every view.
    void oneEditValidatesOnceForEveryConsumer()
    {
        MainWindow w;
        w.show();
        QVERIFY(settle(w));
        const quint64 before = Evaluator::validationCount();
        QSlider* tp = w.controlPanel()->slider(ControlPanel::Tp)->slider();
        tp->setFocus();
        QTest::keyClick(tp, Qt::Key_Left); // TP 8 -> 4
        QVERIFY(settle(w));
        QCOMPARE(Evaluator::validationCount() - before, quint64(1));
        QCOMPARE(w.shown().scenario.parallel.tp, 4);
        QVERIFY(w.shown().ok());
        QVERIFY(w.controlPanel()->errors().empty());
        QVERIFY(w.controlPanel()->bannerText().isEmpty());

        const quint64 mid = Evaluator::validationCount();
        w.controlPanel()->gpusBox()->setValue(60); // 60 != 4·4·1·DP and not whole nodes
        // The panel shows the new value at once but judges nothing itself: the marks come
        // with the evaluation.
        QCOMPARE(w.controlPanel()->gpusBox()->value(), 60);
        QVERIFY(w.controlPanel()->bannerText().isEmpty());
        QVERIFY(settle(w));
        QCOMPARE(Evaluator::validationCount() - mid, quint64(1));
        const Evaluation& e = w.shown();
        QCOMPARE(e.scenario.gpus, 60);
        QVERIFY(!e.errors.empty());
        QStringList shownRules, evaluatedRules;
        for (const ValidationError& err : w.controlPanel()->errors())
            shownRules << QString::fromStdString(err.rule);
        for (const ValidationError& err : e.errors)
            evaluatedRules << QString::fromStdString(err.rule);
        QCOMPARE(shownRules, evaluatedRules);
        QVERIFY(evaluatedRules.contains(QStringLiteral("gpus_product")));
        QLabel* status = nullptr;
        for (QLabel* label : w.findChildren<QLabel*>())
            if (label->accessibleName() == QStringLiteral("Warnings"))
                status = label;
        QVERIFY(status);
        QCOMPARE(status->text(), e.reason().section(QLatin1Char('\n'), 0, 0));
        for (ChartView* c : w.charts())
            QCOMPARE(c->invalidReason(), e.reason());
    }

    void sliderChangesViewsToCoreEstimateAndUndoRestores()
    {
        MainWindow w;
        w.show();
        QVERIFY(settle(w));
        const Scenario before = w.document()->scenario();
        verifyViewsShow(w, before);
        if (QTest::currentTestFailed())
            return;
        const double stepBefore = w.shown().estimate.time.step_seconds;

        QSlider* tp = w.controlPanel()->slider(ControlPanel::Tp)->slider();
        tp->setFocus();
        QTest::keyClick(tp, Qt::Key_Left); // TP 8 -> 4, DP 2 -> 4
        QVERIFY(settle(w));
        const Scenario after = w.document()->scenario();
        QCOMPARE(after.parallel.tp, 4);
        QCOMPARE(after.parallel.dp, 4);
        QCOMPARE(w.shown().scenario.parallel.tp, 4);
        verifyViewsShow(w, after);
        if (QTest::currentTestFailed())
            return;
        QVERIFY(w.shown().estimate.time.step_seconds != stepBefore);

        w.document()->undoStack()->undo();
        QVERIFY(settle(w));
        QCOMPARE(w.document()->scenario().parallel.tp, 8);
        QCOMPARE(w.controlPanel()->slider(ControlPanel::Tp)->value(), 8);
        verifyViewsShow(w, before);
        QCOMPARE(w.shown().estimate.time.step_seconds, stepBefore);
        w.document()->undoStack()->redo();
        QVERIFY(settle(w));
        verifyViewsShow(w, after);
    }

    void oneDragIsOneUndoStep()
    {
        MainWindow w;
        w.show();
        QVERIFY(settle(w));
        QSlider* dp = w.controlPanel()->slider(ControlPanel::Dp)->slider();
        const int start = dp->value();
        dp->setSliderDown(true); // the user grabs the handle (emits sliderPressed)
        dp->setValue(start + 1);
        dp->setValue(start + 2);
        dp->setValue(start + 3);
        dp->setSliderDown(false);
        QCOMPARE(w.document()->scenario().parallel.dp, 16); // 2 -> 4 -> 8 -> 16
        QCOMPARE(w.document()->undoStack()->count(), 1);
        // A second drag is a second step.
        dp->setSliderDown(true);
        dp->setValue(start + 1);
        dp->setSliderDown(false);
        QCOMPARE(w.document()->undoStack()->count(), 2);
        w.document()->undoStack()->undo();
        QCOMPARE(w.document()->scenario().parallel.dp, 16);
        w.document()->undoStack()->undo();
        QCOMPARE(w.document()->scenario().parallel.dp, 2);
        QCOMPARE(w.document()->scenario().gpus, 64);
        QVERIFY(settle(w));
        verifyViewsShow(w, w.document()->scenario());
    }

    void saveLoadRoundTrip()
    {
        const QString path = m_dir.filePath(QStringLiteral("round.paralens.json"));
        Scenario saved;
        {
            MainWindow w;
            QTest::keyClick(w.controlPanel()->slider(ControlPanel::Pp)->slider(), Qt::Key_Left);
            w.controlPanel()->gpusBox()->setValue(128); // DP follows: 128 / (8 · 2) = 8
            QVERIFY(w.isWindowModified());
            QVERIFY(w.saveFile(path));
            QVERIFY(!w.isWindowModified());
            QVERIFY(w.windowTitle().startsWith(QStringLiteral("round.paralens.json")));
            saved = w.document()->scenario();
        }
        MainWindow w2;
        QVERIFY(w2.openFile(path));
        QCOMPARE(scenarioToText(w2.document()->scenario()), scenarioToText(saved));
        QCOMPARE(w2.document()->scenario().parallel.dp, 8);
        QCOMPARE(w2.controlPanel()->slider(ControlPanel::Pp)->value(), 2);
        QVERIFY(!w2.isWindowModified());
        QCOMPARE(w2.document()->filePath(), path);
        const QStringList recent = QSettings().value(QStringLiteral("recentFiles")).toStringList();
        QVERIFY(recent.contains(QFileInfo(path).absoluteFilePath()));
        QVERIFY(settle(w2));
        verifyViewsShow(w2, saved);
    }

    void corruptFileShowsErrorAndKeepsDocument()
    {
        const QString path = m_dir.filePath(QStringLiteral("broken.paralens.json"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\n  \"model\": \"llama3-70b\",\n  \"gpus\": 64,\n  \"parallel\": {\"tp\": ");
        f.close();

        MainWindow w;
        w.show();
        QTest::keyClick(w.controlPanel()->slider(ControlPanel::Tp)->slider(), Qt::Key_Left);
        const std::string before = scenarioToText(w.document()->scenario());
        const int undoCount = w.document()->undoStack()->count();
        QSignalSpy errors(&w, &MainWindow::errorShown);
        QVERIFY(!w.openFile(path));
        QCOMPARE(errors.count(), 1);
        const QString message = errors.at(0).at(0).toString();
        QVERIFY2(message.contains(QStringLiteral("broken.paralens.json")), qPrintable(message));
        auto* box = w.findChild<QMessageBox*>(QStringLiteral("ErrorBox"));
        QVERIFY(box);
        QVERIFY(box->isVisible());
        QCOMPARE(box->text(), message);
        box->close();
        QCOMPARE(scenarioToText(w.document()->scenario()), before);
        QCOMPARE(w.document()->undoStack()->count(), undoCount);
        QVERIFY(w.isWindowModified());
        QVERIFY(w.document()->filePath().isEmpty());
    }

    void dropOpensScenario()
    {
        MainWindow w;
        const QString path = QStringLiteral(
            PARALENS_SOURCE_DIR "/resources/examples/mixtral-8x7b-32xh100.paralens.json");
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(path)});
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton,
                              Qt::NoModifier);
        QCoreApplication::sendEvent(&w, &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(&w, &drop);
        QCOMPARE(w.document()->scenario().model_id, std::string("mixtral-8x7b"));
        QCOMPARE(w.document()->filePath(), path);
        QVERIFY(settle(w));
        verifyViewsShow(w, w.document()->scenario());
    }

    void sessionKeepsGeometryAndLastScenario()
    {
        const QString path = QStringLiteral(
            PARALENS_SOURCE_DIR "/resources/examples/mixtral-8x7b-32xh100.paralens.json");
        {
            MainWindow w;
            w.resize(780, 700); // within the offscreen screen, above the minimum
            w.show();
            QVERIFY(w.openFile(path));
            QVERIFY(w.close()); // unmodified: no question asked; the session is written
        }
        MainWindow w2;
        QCOMPARE(w2.document()->scenario().model_id, std::string("llama3-70b"));
        w2.restoreSession(true);
        QCOMPARE(w2.document()->scenario().model_id, std::string("mixtral-8x7b"));
        QCOMPARE(w2.size(), QSize(780, 700));
        QVERIFY(!w2.isWindowModified());
    }

    /// A geometry saved on a larger display (a 2560-pixel desk screen, then a projector) is
    /// fitted to this screen's available area when restored.
    void restoredGeometryFitsTheScreen()
    {
        {
            MainWindow w;
            w.show();
            const QRect avail = w.screen()->availableGeometry();
            w.resize(avail.width() + 900, avail.height() + 500);
            QVERIFY(w.close());
        }
        MainWindow w2;
        w2.restoreSession(false);
        w2.show();
        w2.fitToScreen(); // as main() does once the frame is known
        const QRect avail = w2.screen()->availableGeometry();
        QVERIFY2(w2.frameGeometry().width() <= avail.width(),
                 qPrintable(
                     QStringLiteral("%1 > %2").arg(w2.frameGeometry().width()).arg(avail.width())));
        QVERIFY(w2.frameGeometry().height() <= avail.height());
        QVERIFY(avail.contains(w2.frameGeometry().topLeft()));
    }

    void darkPaletteRecoloursEveryView()
    {
        MainWindow w;
        w.resize(1600, 1000);
        w.show();
        QVERIFY(settle(w));
        QPalette dark;
        dark.setColor(QPalette::Window, QColor(0x2b, 0x2b, 0x2b));
        dark.setColor(QPalette::Base, QColor(0x1e, 0x1e, 0x1e));
        dark.setColor(QPalette::Button, QColor(0x35, 0x35, 0x35));
        for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
            dark.setColor(role, QColor(0xe0, 0xe0, 0xe0));
        w.setPalette(dark);
        w.updateNow();
        for (ChartView* c : w.charts()) {
            QCOMPARE(c->plot()->legend->brush().color(), QColor(0x1e, 0x1e, 0x1e));
            QCOMPARE(c->plot()->xAxis->tickLabelColor(), QColor(0xe0, 0xe0, 0xe0));
        }
        // PARALENS_SHOT_DIR=dir keeps a picture of the dark window for a person to look at.
        const QString shots = qEnvironmentVariable("PARALENS_SHOT_DIR");
        if (!shots.isEmpty())
            QVERIFY(w.grab().save(shots + QStringLiteral("/dark.png")));
    }

    void calibrationProblemIsNotedNotFatal()
    {
        MainWindow w;
        Scenario s = w.document()->scenario();
        s.calibration = "no-such-profile.json";
        w.document()->edit(s, QStringLiteral("calibration"));
        QVERIFY(settle(w));
        QVERIFY(w.shown().ok()); // still evaluated, on datasheet figures
        QVERIFY2(w.shown().calibration.contains(QStringLiteral("no-such-profile.json")),
                 qPrintable(w.shown().calibration));
    }

    void updateNowRepaintsSynchronously()
    {
        MainWindow w;
        w.resize(1600, 1000);
        w.show();
        QVERIFY(settle(w));
        Scenario s = w.document()->scenario();
        s.parallel.pp = 2;
        s.parallel.dp = 4;
        w.document()->edit(s, QStringLiteral("parallel.pp"));
        w.updateNow(); // no event loop: the views show the new plan on return
        QCOMPARE(w.shown().scenario.parallel.pp, 2);
        verifyViewsShow(w, s);
    }
};

QTEST_MAIN(TestMainWindow)
#include "test_mainwindow.moc"
