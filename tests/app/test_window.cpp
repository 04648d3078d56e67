// SPDX-License-Identifier: GPL-3.0-or-later
// The window as a reviewer meets it (issue 16): controls show the document's values after a
// search plan is applied, stale search results are refused, every dock fits a 1024-pixel
// screen, an invalid plan leaves no figure of the last valid one, a GPU count the plan cannot
// take rebalances it, messages use the controls' labels, and the View and Help menus reach
// every dock, the theme and the guide.
#include "app/calibrationpanel.h"
#include "app/cli.h"
#include "app/compare.h"
#include "app/document.h"
#include "app/helpmenu.h"
#include "app/mainwindow.h"
#include "app/tooldocks.h"
#include "app/workshop.h"
#include "core/presets.h"
#include "core/scenario_io.h"
#include "core/validate.h"
#include "tests/widgets/headline_checks.h"
#include "widgets/controlpanel.h"
#include "widgets/ganttview.h"
#include "widgets/memoryview.h"
#include "widgets/searchview.h"

#include <QAbstractButton>
#include <QAbstractSlider>
#include <QComboBox>
#include <QDialog>
#include <QDockWidget>
#include <QFile>
#include <QMenuBar>
#include <QScreen>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QToolTip>
#include <QUndoStack>
#include <qcustomplot.h>

using namespace paralens;

namespace {

bool settle(MainWindow& w)
{
    return QTest::qWaitFor([&] {
        return !w.evaluator()->isBusy() && w.shown().generation == w.evaluator()->generation();
    });
}

QSpinBox* spinNamed(QWidget* root, const QString& name)
{
    for (QSpinBox* b : root->findChildren<QSpinBox*>())
        if (b->accessibleName() == name)
            return b;
    return nullptr;
}

QMenu* menuNamed(MainWindow& w, const QString& text)
{
    for (QAction* a : w.menuBar()->actions())
        if (a->text() == text)
            return a->menu();
    return nullptr;
}

/// Llama 3 8B on 16 H100s, batch 32: a search of a second or so.
Scenario smallProblem()
{
    const PresetLibrary& lib = PresetLibrary::builtin();
    Scenario s = defaultScenario();
    s.model_id = "llama3-8b";
    s.model = *lib.model("llama3-8b");
    s.gpus = 16;
    s.parallel.tp = 8;
    s.parallel.pp = 2;
    s.parallel.dp = 1;
    s.parallel.schedule = Schedule::OneF1B;
    s.parallel.virtual_stages = 1;
    s.training.global_batch = 32;
    s.training.seq_len = 4096;
    return s;
}

QString titleOf(ChartView* view)
{
    for (QCPLayoutElement* e : view->plot()->plotLayout()->elements(true))
        if (auto* t = qobject_cast<QCPTextElement*>(e); t && t->font().bold())
            return t->text();
    return {};
}

} // namespace

class TestWindow : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("ParaLensTest"));
        QCoreApplication::setApplicationName(QStringLiteral("test_window"));
        QSettings().clear();
    }

    /// #2: a plan with PP 4, v 14 applied from a PP 8 state (whose v range ends at 80 / 8 =
    /// 10): the spin box shows 14, and ↑ asks for 15 (PP 4 takes v up to 80 / 4 = 20).
    void appliedPlanShowsItsVirtualStages()
    {
        MainWindow w;
        w.show();
        Document* doc = w.document();
        Scenario pp8 = doc->scenario();
        QVERIFY(pp8.parallel.schedule == Schedule::Interleaved1F1B);
        pp8.parallel.pp = 8;
        pp8.parallel.dp = 1;
        pp8.parallel.virtual_stages = 5;
        doc->edit(pp8, QStringLiteral("parallel.pp"));
        QSpinBox* v = spinNamed(w.controlPanel(), QStringLiteral("Virtual stages"));
        QVERIFY(v);
        QCOMPARE(v->value(), 5);
        QCOMPARE(v->maximum(), 10);

        Scenario chosen = pp8;
        chosen.parallel.pp = 4;
        chosen.parallel.dp = 2;
        chosen.parallel.virtual_stages = 14;
        emit w.toolDocks()->searchView()->planChosen(chosen);
        QCOMPARE(doc->scenario().parallel.virtual_stages, 14);
        QCOMPARE(v->value(), 14);
        QVERIFY(settle(w));
        QCOMPARE(v->value(), 14);
        QVERIFY(w.shown().ok());
        v->setFocus();
        QTest::keyClick(v, Qt::Key_Up);
        QCOMPARE(doc->scenario().parallel.virtual_stages, 15);
        QCOMPARE(v->value(), 15);
    }

    /// #3 and #15: results searched for one problem are marked stale, greyed and never
    /// applied once the model, GPU count or batch changes; searching again clears it. The
    /// panel's own GPU count and batch are searched, and a chosen plan brings them.
    void staleSearchResultsAreRefused()
    {
        MainWindow w;
        w.document()->reset(smallProblem());
        SearchView* search = w.toolDocks()->searchView();
        search->setTopK(10);
        QSignalSpy done(search, &SearchView::finished);
        search->start();
        QVERIFY(done.wait(60000));
        QVERIFY(!search->result().results.empty());
        QVERIFY(!search->isStale());
        QVERIFY(search->table()->isEnabled());

        Scenario other = w.document()->scenario();
        other.model_id = "llama3-70b";
        other.model = *PresetLibrary::builtin().model("llama3-70b");
        w.document()->edit(other, QStringLiteral("model"));
        QVERIFY(search->isStale());
        QVERIFY(!search->table()->isEnabled());
        QVERIFY2(search->statusText().startsWith(QStringLiteral("Stale")),
                 qPrintable(search->statusText()));
        QVERIFY(search->statusText().contains(QStringLiteral("Llama")));
        QSignalSpy chosen(search, &SearchView::planChosen);
        QTableView* table = search->table();
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {},
                          table->visualRect(table->model()->index(0, 1)).center());
        QCOMPARE(chosen.count(), 0);
        QCOMPARE(w.document()->scenario().model_id, std::string("llama3-70b"));

        // Back to the searched model: the results apply again.
        w.document()->undoStack()->undo();
        QVERIFY(!search->isStale());
        // The panel's GPU count: another problem until searched.
        search->gpusBox()->setValue(32);
        QVERIFY(search->isStale());
        QCOMPARE(search->space().base.gpus, 32);
        search->start();
        QVERIFY(done.wait(60000));
        QVERIFY(!search->isStale());
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {},
                          table->visualRect(table->model()->index(0, 1)).center());
        QCOMPARE(chosen.count(), 1);
        const Scenario& s = w.document()->scenario();
        QCOMPARE(s.gpus, 32);
        QCOMPARE(std::int64_t{s.parallel.tp} * s.parallel.pp * s.parallel.cp * s.parallel.dp,
                 std::int64_t{32});
        QVERIFY(validate(s).empty());
        // A document change of the GPU count reaches the panel; an unrelated one keeps it.
        QCOMPARE(search->gpusBox()->value(), 32);
        Scenario zero = s;
        zero.parallel.zero = 0;
        w.document()->edit(zero, QStringLiteral("parallel.zero"));
        QCOMPARE(search->gpusBox()->value(), 32);
    }

    /// #4: with any one dock open (and Calibration after importing a log), or all of them, the
    /// window fits a 1024 × 768 screen: below 1280 pixels the tool docks are tabbed with the
    /// Scenario dock instead of taking a column of their own.
    /// Compare on a 1024 × 768 screen (the window 1024 wide, and at its least width as a
    /// first start makes it): the headline's cards with their deltas wrap onto more rows,
    /// none of their lines overprints another, and the window still fits the screen. The
    /// baseline has more pipeline stages than the current plan: the memory chart shows them all.
    void compareFitsA1024PixelScreen()
    {
        Scenario baseline = loadScenarioFile(
            PARALENS_SOURCE_DIR "/resources/examples/llama3-70b-64xh100.paralens.json");
        Scenario current = baseline;
        baseline.parallel.pp = 8;
        baseline.parallel.dp = 1;
        MainWindow w;
        w.document()->reset(baseline);
        w.resize(1024, 768);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(settle(w));
        w.comparison()->pin(w.shown());
        w.document()->edit(current, QStringLiteral("parallel.pp"));
        QVERIFY(settle(w));
        QVERIFY(!w.headline()->deltaText(Headline::StepTime).isEmpty());
        QTest::qWait(50); // the deferred font scaling
        for (int width : {1024, w.minimumSizeHint().width()}) {
            w.resize(width, 768);
            QCoreApplication::processEvents();
            const QString where = QStringLiteral("%1x%2, headline %3 columns at level %4")
                                      .arg(w.width())
                                      .arg(w.height())
                                      .arg(w.headline()->columns())
                                      .arg(w.headline()->compactLevel());
            QVERIFY2(w.minimumSizeHint().height() <= 768,
                     qPrintable(where + QStringLiteral(": least height ") +
                                QString::number(w.minimumSizeHint().height())));
            QVERIFY2(w.width() <= 1024 && w.height() <= 768, qPrintable(where));
            const QString problems = testing::headlineOverprint(*w.headline());
            QVERIFY2(problems.isEmpty(), qPrintable(where + QStringLiteral("\n") + problems));
            // At 1024 px the step's change reads whole, without "vs baseline" if need be.
            const QString step = w.headline()->shownDeltaText(Headline::StepTime);
            if (w.width() == 1024)
                QVERIFY2(!step.contains(QStringLiteral("…")), qPrintable(where + ": " + step));
            QVERIFY2(w.headline()->deltaText(Headline::StepTime).startsWith(step.chopped(1)) ||
                         step == w.headline()->deltaText(Headline::StepTime),
                     qPrintable(step));
        }
        QCOMPARE(w.memoryView()->stageCount(), 4);
        QVERIFY(w.memoryView()->baselineGiB(7) > 0);
        QVERIFY(w.memoryView()->plot()->xAxis->range().upper > 7);
    }

    void everyDockFitsA1024PixelScreen_data()
    {
        QTest::addColumn<QString>("dock");
        QTest::newRow("none") << QString();
        for (const char* name : {"SearchDock", "CalibrationDock", "AccuracyDock", "LaunchDock",
                                 "PlanMapDock", "FitAdviceDock", "all"})
            QTest::newRow(name) << QString::fromLatin1(name);
    }
    void everyDockFitsA1024PixelScreen()
    {
        QFETCH(QString, dock);
        MainWindow w;
        w.resize(1024, 768);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(settle(w));
        const QStringList names =
            dock == QStringLiteral("all")
                ? QStringList{"SearchDock", "CalibrationDock", "AccuracyDock",
                              "LaunchDock", "PlanMapDock",     "FitAdviceDock"}
                : (dock.isEmpty() ? QStringList{} : QStringList{dock});
        for (const QString& name : names) {
            auto* d = w.findChild<QDockWidget*>(name);
            QVERIFY(d);
            d->show();
            d->raise();
        }
        if (dock == QStringLiteral("CalibrationDock"))
            QVERIFY(w.toolDocks()->calibrationPanel()->importFiles({QStringLiteral(
                PARALENS_SOURCE_DIR "/tests/data/nccl/h100_2node_16gpu_allreduce_srun.txt")}));
        QTest::qWait(50); // the deferred tabbing and font scaling
        QCoreApplication::processEvents();
        w.resize(1024, 768);
        QCoreApplication::processEvents();
        QVERIFY2(w.minimumSizeHint().width() <= 1024,
                 qPrintable(QString::number(w.minimumSizeHint().width())));
        QVERIFY2(w.minimumSizeHint().height() <= 768,
                 qPrintable(QString::number(w.minimumSizeHint().height())));
        QVERIFY2(w.minimumSize().width() <= 1024, qPrintable(QString::number(w.minimumWidth())));
        QVERIFY2(w.width() <= 1024, qPrintable(QString::number(w.width())));
        QVERIFY2(w.height() <= 768, qPrintable(QString::number(w.height())));
        // Each open tool is a tab beside the Scenario dock, not a column of its own.
        auto* scenario = w.findChild<QDockWidget*>(QStringLiteral("ScenarioDock"));
        for (const QString& name : names) {
            auto* d = w.findChild<QDockWidget*>(name);
            QVERIFY2(w.tabifiedDockWidgets(scenario).contains(d), qPrintable(name));
            QCOMPARE(w.dockWidgetArea(d), Qt::LeftDockWidgetArea);
        }
        if (!names.isEmpty()) // the one opened last is in front
            QVERIFY(!w.findChild<QDockWidget*>(names.last())->visibleRegion().isEmpty());
    }

    /// A wide window keeps the tools in their own column on the right.
    void aWideWindowKeepsToolsOnTheRight()
    {
        MainWindow w;
        w.resize(1600, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        auto* d = w.findChild<QDockWidget*>(QStringLiteral("PlanMapDock"));
        d->show();
        QTest::qWait(50);
        QCOMPARE(w.dockWidgetArea(d), Qt::RightDockWidgetArea);
    }

    /// A first start (nothing saved) opens at 1600 × 1000 or four fifths of the screen,
    /// whichever is smaller, centred; a side whose four fifths would be under 1280 × 800 takes
    /// the whole screen; never larger than the screen.
    void firstStartSize()
    {
        QCOMPARE(MainWindow::firstStartSize(QSize(2560, 1440)), QSize(1600, 1000));
        QCOMPARE(MainWindow::firstStartSize(QSize(1920, 1080)), QSize(1536, 864));
        QCOMPARE(MainWindow::firstStartSize(QSize(1024, 768)), QSize(1024, 768));
        QCOMPARE(MainWindow::firstStartSize(QSize(1366, 768)), QSize(1366, 768));
        QCOMPARE(MainWindow::firstStartSize(QSize(1600, 900)), QSize(1280, 900));
        QSettings().clear();
        MainWindow w;
        w.restoreSession(false);
        const QRect avail = w.screen()->availableGeometry();
        const QSize expected = MainWindow::firstStartSize(avail.size())
                                   .expandedTo(w.minimumSizeHint())
                                   .expandedTo(QSize(0, 720))
                                   .boundedTo(avail.size());
        QCOMPARE(w.size(), expected);
        QVERIFY(avail.contains(w.geometry()));
    }

    /// Fonts follow the window's size: 1 at 1600 × 1000, up to 1.5 on a big window, down to
    /// 0.85 on a small one; the charts' text follows the window's font.
    void fontsScaleWithTheWindow()
    {
        QCOMPARE(MainWindow::fontScaleFor(QSize(1600, 1000)), 1.0);
        QCOMPARE(MainWindow::fontScaleFor(QSize(2560, 1440)), 1.45); // 1440 / 1000, to 0.05
        QCOMPARE(MainWindow::fontScaleFor(QSize(1024, 768)), 0.85);
        QCOMPARE(MainWindow::fontScaleFor(QSize(4000, 3000)), 1.5);
        MainWindow w;
        w.resize(2400, 1500);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(QTest::qWaitFor([&] { return w.fontScale() == 1.5; }));
        QCOMPARE(w.memoryView()->font().pointSizeF(), QApplication::font().pointSizeF() * 1.5);
        QCOMPARE(w.memoryView()->plot()->xAxis->tickLabelFont().pointSizeF(),
                 QApplication::font().pointSizeF() * 1.5);
    }

    /// PARALENS_BASELINE=A paralens B: compare mode with A's evaluation pinned as the baseline.
    void baselineEnvironmentOpensCompare()
    {
        QTemporaryDir dir;
        Scenario a = smallProblem();
        Scenario b = smallProblem();
        b.parallel.tp = 4;
        b.parallel.pp = 4;
        const QString pathA = dir.filePath(QStringLiteral("a.paralens.json"));
        const QString pathB = dir.filePath(QStringLiteral("b.paralens.json"));
        for (const auto& [path, s] : {std::pair{pathA, a}, std::pair{pathB, b}}) {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray::fromStdString(scenarioToText(s)));
        }
        MainWindow w;
        QVERIFY(w.openFile(pathB));
        w.show();
        QVERIFY(settle(w));
        qputenv("PARALENS_BASELINE", pathA.toLocal8Bit());
        w.applyEnvironment();
        qunsetenv("PARALENS_BASELINE");
        QVERIFY(w.comparison()->isPinned());
        QCOMPARE(w.comparison()->baseline().scenario.parallel.tp, 8);
        QCOMPARE(w.comparison()->baseline().scenario.parallel.pp, 2);
        QCOMPARE(w.document()->scenario().parallel.tp, 4); // B stays the document
        // The views show B beside A: B's evaluation arrives after the baseline's.
        QVERIFY(settle(w));
        QVERIFY(w.shown().ok());
        QCOMPARE(w.shown().scenario.parallel.tp, 4);
        // A broken baseline is an error, not a silent non-compare.
        MainWindow other;
        QSignalSpy errors(&other, &MainWindow::errorShown);
        QVERIFY(!other.openBaseline(dir.filePath(QStringLiteral("missing.paralens.json"))));
        QCOMPARE(errors.count(), 1);
        QVERIFY(!other.comparison()->isPinned());
    }

    /// #7: an invalid plan shows no figure of the last valid one; the figures under the
    /// controls say what a count of GPUs is in nodes, in words that agree in number.
    void invalidPlanLeavesNoStaleFigures()
    {
        MainWindow w;
        w.show();
        QVERIFY(settle(w));
        QVERIFY(titleOf(w.ganttView()).contains(QStringLiteral("p = 4")));
        Scenario s = w.document()->scenario();
        s.gpus = 9'999'999;
        w.document()->edit(s, QStringLiteral("gpus"));
        QVERIFY(settle(w));
        QVERIFY(!w.shown().ok());
        QCOMPARE(titleOf(w.ganttView()), w.ganttView()->chartTitle());
        const QString derived = w.controlPanel()->derivedText();
        QVERIFY2(derived.contains(QStringLiteral("not whole nodes of 8")), qPrintable(derived));
        QVERIFY2(!derived.contains(QStringLiteral("1250000")), qPrintable(derived));
        QVERIFY2(!derived.contains(QStringLiteral("micro-batch")), qPrintable(derived));

        Scenario one = w.document()->scenario();
        one.gpus = 8;
        one.parallel.tp = 8;
        one.parallel.pp = 1;
        one.parallel.dp = 1;
        one.parallel.schedule = Schedule::OneF1B;
        one.parallel.virtual_stages = 1;
        w.document()->edit(one, QStringLiteral("gpus"));
        QVERIFY(settle(w));
        QVERIFY(w.shown().ok());
        // B = 128 sequences, b = 1, DP 1: 128 micro-batches.
        QCOMPARE(w.controlPanel()->derivedText(),
                 QStringLiteral("1 node of 8 GPUs · 128 micro-batches per step"));
        QVERIFY(!titleOf(w.ganttView()).contains(QStringLiteral("p = 4")));
    }

    /// #12: typing 8 GPUs under TP 8 · PP 4 rebalances (PP 4 → 1, DP 2 → 1) and says so;
    /// the plan runs. Messages on screen name the controls, not the JSON keys.
    void gpuCountRebalancesAndMessagesUseLabels()
    {
        MainWindow w;
        w.show();
        QVERIFY(settle(w));
        w.controlPanel()->gpusBox()->setValue(8);
        const Scenario& s = w.document()->scenario();
        QCOMPARE(s.gpus, 8);
        QCOMPARE(s.parallel.tp, 8);
        QCOMPARE(s.parallel.pp, 1);
        QCOMPARE(s.parallel.dp, 1);
        QVERIFY(settle(w));
        QVERIFY2(w.shown().ok(), qPrintable(w.shown().reason()));
        const QString derived = w.controlPanel()->derivedText();
        QVERIFY2(derived.contains(QStringLiteral("GPUs 64 → 8")) &&
                     derived.contains(QStringLiteral("PP 4 → 1")) &&
                     derived.contains(QStringLiteral("DP 2 → 1")),
                 qPrintable(derived));
        w.document()->undoStack()->undo();
        QCOMPARE(w.document()->scenario().parallel.pp, 4);
        QVERIFY(!w.controlPanel()->derivedText().contains(QStringLiteral("→")));

        // 60 GPUs: not whole nodes and no degree makes the product; the banner and the
        // charts name GPUs, TP and PP as the panel labels them.
        Scenario bad = w.document()->scenario();
        bad.gpus = 60;
        w.document()->edit(bad, QStringLiteral("gpus"));
        QVERIFY(settle(w));
        const QString banner = w.controlPanel()->bannerText();
        QVERIFY2(banner.contains(QStringLiteral("GPUs = 60")), qPrintable(banner));
        QVERIFY2(banner.contains(QStringLiteral("TP × PP × CP × DP")), qPrintable(banner));
        for (const QString& key :
             {QStringLiteral("parallel."), QStringLiteral("gpus ="), QStringLiteral("hardware.")}) {
            QVERIFY2(!banner.contains(key), qPrintable(banner));
            QVERIFY2(!w.shown().reason().contains(key), qPrintable(w.shown().reason()));
        }
    }

    /// View lists every dock (also one added after the window was built) and Reset Layout
    /// closes the tool docks again; the theme is kept in the settings.
    void viewMenuReachesEveryDockAndTheTheme()
    {
        MainWindow w;
        w.show();
        auto* extra = new QDockWidget(QStringLiteral("Later dock"), &w);
        extra->setObjectName(QStringLiteral("LaterDock"));
        w.addDockWidget(Qt::RightDockWidgetArea, extra);
        w.refreshViewMenu();
        const QList<QAction*> entries = w.viewMenu()->actions();
        for (QDockWidget* d : w.findChildren<QDockWidget*>())
            QVERIFY2(entries.contains(d->toggleViewAction()), qPrintable(d->objectName()));

        auto* search = w.findChild<QDockWidget*>(QStringLiteral("SearchDock"));
        search->toggleViewAction()->trigger();
        QVERIFY(search->isVisible());
        w.resetLayout();
        QVERIFY(!search->isVisible());

        auto* dark = w.viewMenu()->findChild<QAction*>(QStringLiteral("Theme_dark"));
        QVERIFY(dark);
        dark->trigger();
        QCOMPARE(QSettings().value(QStringLiteral("ui/theme")).toString(), QStringLiteral("dark"));
        QTRY_VERIFY(w.palette().color(QPalette::Window).lightness() < 80);
        QCOMPARE(w.memoryView()->plot()->legend->brush().color(),
                 w.palette().color(QPalette::Base));
        {
            MainWindow again; // the next start keeps it
            auto* a = again.viewMenu()->findChild<QAction*>(QStringLiteral("Theme_dark"));
            QVERIFY(a && a->isChecked());
        }
        w.viewMenu()->findChild<QAction*>(QStringLiteral("Theme_system"))->trigger();
        QTRY_VERIFY(w.palette().color(QPalette::Window).lightness() > 150);
    }

    /// Help: F1 shows the guide from the built-in resource; every control explains itself
    /// under What's This; Save As answers Ctrl+Shift+S.
    void helpGuideWhatsThisAndSaveAsKey()
    {
        MainWindow w;
        w.show();
        QVERIFY(HelpMenu::guideText().contains(QStringLiteral("# ParaLens user guide")));
        QAction* guide = w.findChild<QAction*>(QStringLiteral("UserGuideAction"));
        QVERIFY(guide);
        QCOMPARE(guide->shortcut(), QKeySequence(Qt::Key_F1));
        guide->trigger();
        auto* dialog = w.findChild<QDialog*>(QStringLiteral("UserGuide"));
        QVERIFY(dialog && dialog->isVisible());
        auto* text = dialog->findChild<QTextBrowser*>();
        QVERIFY(text->toPlainText().contains(QStringLiteral("Presentation mode")));
        dialog->close();

        QStringList missing;
        for (QWidget* c : w.findChildren<QWidget*>()) {
            const bool control = qobject_cast<QAbstractButton*>(c) || qobject_cast<QComboBox*>(c) ||
                                 qobject_cast<QAbstractSpinBox*>(c) ||
                                 qobject_cast<QAbstractSlider*>(c);
            if (control && isUserControl(c) && c->whatsThis().isEmpty())
                missing << QStringLiteral("%1 (%2)").arg(c->metaObject()->className(),
                                                         c->accessibleName());
        }
        QVERIFY2(missing.isEmpty(), qPrintable(missing.join(QStringLiteral(", "))));

        bool saveAs = false;
        for (QAction* a : menuNamed(w, QStringLiteral("&File"))->actions())
            if (a->shortcuts().contains(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S)))
                saveAs = a->text().startsWith(QStringLiteral("Save &As"));
        QVERIFY(saveAs);
    }

    /// `paralens --present` opens the window in presentation mode, with or without a file.
    void presentIsAWindowOption()
    {
        QVERIFY(!cli::wantsCli({QStringLiteral("paralens"), QStringLiteral("--present")}));
        QVERIFY(!cli::wantsCli({QStringLiteral("paralens"), QStringLiteral("a.paralens.json"),
                                QStringLiteral("--present")}));
        QVERIFY(cli::wantsCli({QStringLiteral("paralens"), QStringLiteral("eval")}));
    }

    /// #5: resting the mouse on a memory segment keeps its exact figures; the generic hint
    /// does not replace them.
    void hoverTipIsNotReplacedByTheGenericHint()
    {
        MainWindow w;
        w.resize(1600, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(settle(w));
        w.updateNow();
        QCustomPlot* p = w.memoryView()->plot();
        // The middle of stage 0's bottom segment (parameters), in pixels.
        const double params = w.memoryView()->segmentGiB(MemoryView::Parameters, 0);
        const QPoint at(int(p->xAxis->coordToPixel(0)), int(p->yAxis->coordToPixel(params / 2)));
        QTest::mouseMove(p, at);
        QVERIFY(QTest::qWaitFor([] { return QToolTip::isVisible(); }, 2000));
        const QString exact = QToolTip::text();
        QVERIFY2(exact.contains(QStringLiteral("Stage 0")), qPrintable(exact));
        QHelpEvent rest(QEvent::ToolTip, at, p->mapToGlobal(at));
        QCoreApplication::sendEvent(p, &rest);
        QCOMPARE(QToolTip::text(), exact);
        QToolTip::hideText();
    }
};

QTEST_MAIN(TestWindow)
#include "test_window.moc"
