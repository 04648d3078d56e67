// SPDX-License-Identifier: GPL-3.0-or-later
// The Fit advice and Plan map docks of the main window: the Tools menu shows them, the advice
// opens by itself when an edit takes the plan over capacity, and a suggestion applied or a
// map cell clicked is one undoable edit of the document.
#include "app/document.h"
#include "app/mainwindow.h"
#include "app/plandocks.h"
#include "core/evaluate.h"
#include "core/scenario_io.h"
#include "widgets/fitadviceview.h"
#include "widgets/planmapview.h"

#include <QDockWidget>
#include <QMenuBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>
#include <QUndoStack>

#include <qcustomplot.h>

using namespace paralens;

namespace {

PlanDocks* docksOf(MainWindow& w)
{
    return w.findChild<PlanDocks*>();
}

/// The document's model and cluster with data parallelism only and no sharding: Llama 3 70B
/// (the default) holds 18 bytes per parameter on every GPU, far over 80 GiB.
Scenario dataParallelOnly(const Scenario& s)
{
    Scenario d = s;
    d.parallel.dp = d.gpus;
    d.parallel.tp = d.parallel.pp = d.parallel.cp = d.parallel.ep = 1;
    d.parallel.virtual_stages = 1;
    d.parallel.schedule = Schedule::OneF1B;
    d.parallel.zero = 0;
    d.parallel.sequence_parallel = false;
    d.training.micro_batch = 1;
    return d;
}

bool waitViews(MainWindow& w)
{
    QSignalSpy spy(&w, &MainWindow::viewsUpdated);
    return spy.wait(10000);
}

} // namespace

class TestPlanDocks : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void toolsMenuTogglesBothDocks()
    {
        MainWindow w;
        w.show();
        PlanDocks* docks = docksOf(w);
        QVERIFY(docks);
        QVERIFY(!docks->fitAdviceDock()->isVisible());
        QVERIFY(!docks->planMapDock()->isVisible());
        QVERIFY(!docks->planMap()->isComputing()); // a hidden map costs nothing
        docks->planMapDock()->toggleViewAction()->trigger();
        QVERIFY(docks->planMapDock()->isVisible());
        QVERIFY(docks->planMap()->isComputing() || !docks->planMap()->map().cells.empty());
        QCOMPARE(docks->charts().size(), 1);
    }

    void goingOverCapacityOpensTheAdviceAndApplyIsUndoable()
    {
        MainWindow w;
        w.show();
        Document* doc = w.document();
        PlanDocks* docks = docksOf(w);
        QVERIFY(waitViews(w));
        QVERIFY(w.shown().estimate.fits); // the default scenario fits
        QVERIFY(!docks->fitAdviceDock()->isVisible());
        const Scenario over = dataParallelOnly(doc->scenario());
        QVERIFY(!evaluate(over).fits);
        doc->edit(over, "test");
        QVERIFY(waitViews(w));
        QVERIFY(docks->fitAdviceDock()->isVisible());
        FitAdviceView* fit = docks->fitAdvice();
        QVERIFY(QTest::qWaitFor([&] { return !fit->isComputing(); }, 60000));
        QVERIFY(!fit->advice().fits);
        QVERIFY(!fit->advice().suggestions.empty());
        const FitSuggestion first = fit->advice().suggestions.front();
        const int steps = doc->undoStack()->count();
        QTest::mouseClick(fit->applyButton(0), Qt::LeftButton);
        QCOMPARE(doc->undoStack()->count(), steps + 1);
        QVERIFY(doc->scenario().parallel == first.scenario.parallel);
        QVERIFY(doc->scenario().training == first.scenario.training);
        QVERIFY(waitViews(w));
        QVERIFY(w.shown().estimate.fits);
        doc->undoStack()->undo();
        QVERIFY(doc->scenario().parallel == over.parallel);
    }

    void aMapCellIsOneUndoableEdit()
    {
        MainWindow w;
        w.resize(1600, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        Document* doc = w.document();
        PlanDocks* docks = docksOf(w);
        docks->planMapDock()->show();
        PlanMapView* map = docks->planMap();
        QVERIFY(QTest::qWaitFor([&] { return !map->isComputing(); }, 120000));
        QVERIFY(map->map().best.has_value());
        const PlanMapCell& best = map->map().cells[*map->map().best];
        const Scenario before = doc->scenario();
        map->plot()->replot();
        QTest::mouseClick(map->plot(), Qt::LeftButton, {}, map->cellCentre(best.tp, best.pp));
        QCOMPARE(doc->scenario().parallel.tp, best.tp);
        QCOMPARE(doc->scenario().parallel.pp, best.pp);
        QCOMPARE(doc->scenario().parallel.dp, best.best->parallel.dp);
        QCOMPARE(map->outlined(), QPoint(best.tp, best.pp));
        QVERIFY(!map->isComputing()); // a plan edit does not recompute the map
        doc->undoStack()->undo();
        QVERIFY(doc->scenario().parallel == before.parallel);
    }

    /// Issue 16: on a 2560 × 1440 screen the Plan map's column takes the room its cells'
    /// numbers need, also when the dock opened on the smaller first-start window (as
    /// PARALENS_SHOW_DOCKS with PARALENS_WINDOW_SIZE=max does): every cell draws its text, and
    /// each cell is at least as wide as that text in the font it is drawn in.
    void aWideScreenMapShowsEveryCellsNumber()
    {
        MainWindow w;
        w.resize(1600, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        PlanDocks* docks = docksOf(w);
        docks->planMapDock()->show();
        w.resize(2560, 1440); // the font scales up (MainWindow::fontScaleFor: 1.45)
        PlanMapView* map = docks->planMap();
        QVERIFY(QTest::qWaitFor([&] { return !map->isComputing(); }, 120000));
        QTest::qWait(50); // the widened column laid out
        map->plot()->replot(QCustomPlot::rpImmediateRefresh);
        QCOMPARE(w.dockWidgetArea(docks->planMapDock()), Qt::RightDockWidgetArea);
        QVERIFY(!map->map().cells.empty());
        QVERIFY(map->drawsAllCellTexts());
        const double cell = double(map->plot()->axisRect()->width()) / map->map().tp.size();
        int checked = 0;
        for (int i = 0; i < map->plot()->itemCount(); ++i) {
            auto* label = qobject_cast<QCPItemText*>(map->plot()->item(i));
            if (!label || !label->visible() || !label->clipToAxisRect())
                continue; // the cells' labels are clipped to the map; the message is not
            const int need = QFontMetrics(label->font()).horizontalAdvance(label->text());
            QVERIFY2(need <= cell, qPrintable(QStringLiteral("%1: %2 px in a %3 px cell")
                                                  .arg(label->text())
                                                  .arg(need)
                                                  .arg(cell)));
            ++checked;
        }
        QCOMPARE(checked, int(map->map().cells.size()));
        // Numbers, not only colour and dashes: the best cell shows its tokens/s.
        const PlanMapCell& best = map->map().cells[*map->map().best];
        QVERIFY(map->cellText(best.tp, best.pp).startsWith(QStringLiteral("★ ")));
    }
};

QTEST_MAIN(TestPlanDocks)
#include "test_plandocks.moc"
