// SPDX-License-Identifier: GPL-3.0-or-later
// The plan map view draws exactly the core's planMap(), computed off the GUI thread: one job
// per problem (a plan edit only moves the outline), a newer problem supersedes an older one,
// and a click on a cell hands its best plan back.
#include "core/plan_map.h"
#include "core/presets.h"
#include "widgets/planmapview.h"
#include "widgets/units.h"

#include <QComboBox>
#include <QSignalSpy>
#include <QTest>

#include <qcustomplot.h>

using namespace paralens;

namespace {

/// Llama 3 8B on 16 H100 (two nodes): every TP × PP divisor of 16, TP 16 beyond its 8 KV heads.
Scenario problem(int gpus = 16)
{
    const PresetLibrary& lib = PresetLibrary::builtin();
    Scenario s;
    s.model_id = "llama3-8b";
    s.model = *lib.model("llama3-8b");
    s.hardware_id = "h100-sxm";
    s.cluster = *lib.hardware("h100-sxm");
    s.gpus = gpus;
    s.parallel.tp = 2;
    s.parallel.pp = 2;
    s.parallel.dp = gpus / 4;
    s.training.global_batch = 32;
    s.training.seq_len = 4096;
    return s;
}

bool waitReady(PlanMapView& v)
{
    return QTest::qWaitFor([&] { return !v.isComputing(); }, 120000);
}

} // namespace

class TestPlanMapView : public QObject
{
    Q_OBJECT
private slots:
    void drawsTheCoresMap()
    {
        PlanMapView view;
        view.resize(700, 560);
        view.show();
        QSignalSpy ready(&view, &PlanMapView::mapReady);
        view.setScenario(problem());
        QVERIFY(view.isComputing()); // off the GUI thread: setScenario returned at once
        QVERIFY(waitReady(view));
        QCOMPARE(ready.count(), 1);
        const PlanMap core = planMap(problem());
        const PlanMap& shown = view.map();
        QCOMPARE(shown.tp, core.tp);
        QCOMPARE(shown.pp, core.pp);
        QCOMPARE(shown.cells.size(), core.cells.size());
        QVERIFY(core.best.has_value());
        for (const PlanMapCell& c : core.cells) {
            const QString text = view.cellText(c.tp, c.pp);
            if (c.best) {
                QVERIFY2(text.endsWith(units::count(c.best->tokens_per_second)), qPrintable(text));
                QCOMPARE(text.startsWith(QStringLiteral("★")), &c == &core.cells[*core.best]);
                QVERIFY(view.cellToolTip(c.tp, c.pp).contains(QStringLiteral("click to apply")));
            } else {
                QCOMPARE(text,
                         c.rule == "does_not_fit" ? QStringLiteral("no fit") : QStringLiteral("—"));
                QVERIFY(view.cellToolTip(c.tp, c.pp).contains(QString::fromStdString(c.reason)));
            }
        }
        // 8 KV heads do not split 16 ways.
        QVERIFY(view.cellToolTip(16, 1).contains(QStringLiteral("Cannot run")));
        QCOMPARE(view.outlined(), QPoint(2, 2));
        QVERIFY(!view.isInvalid());
    }

    void aPlanEditMovesTheOutlineWithoutANewMap()
    {
        PlanMapView view;
        view.resize(700, 560);
        view.show();
        QSignalSpy ready(&view, &PlanMapView::mapReady);
        Scenario s = problem();
        view.setScenario(s);
        QVERIFY(waitReady(view));
        s.parallel.tp = 4;
        s.parallel.dp = 2;
        s.training.micro_batch = 2;
        view.setScenario(s);
        QVERIFY(!view.isComputing());
        QCOMPARE(ready.count(), 1);
        QCOMPARE(view.outlined(), QPoint(4, 2));
    }

    void aNewerProblemSupersedesTheRunningOne()
    {
        PlanMapView view;
        view.resize(700, 560);
        view.show();
        QSignalSpy ready(&view, &PlanMapView::mapReady);
        view.setScenario(problem(16));
        view.setScenario(problem(32));
        view.setScenario(problem(8));
        QVERIFY(waitReady(view));
        QCOMPARE(ready.count(), 1); // the stale maps were cancelled, never shown
        QCOMPARE(view.mapScenario().gpus, 8);
        QCOMPARE(view.map().tp, planMapTpAxis(problem(8)));
    }

    void aHiddenViewWaitsUntilActive()
    {
        PlanMapView view;
        view.setScenario(problem(), false);
        QVERIFY(!view.isComputing());
        view.setScenario(problem(), true);
        QVERIFY(view.isComputing());
        QVERIFY(waitReady(view));
    }

    void aHiddenViewDrawsWhenShown()
    {
        // Every slider tick reaches the map, its dock open or not: hidden, it draws nothing
        // until it is shown, and then draws.
        PlanMapView view;
        view.resize(700, 560);
        QCoreApplication::processEvents(); // the draw queued as the view was built
        int replots = 0;
        connect(view.plot(), &QCustomPlot::afterReplot, this, [&] { ++replots; });
        Scenario s = problem();
        for (int tp : {2, 4, 2, 4}) {
            s.parallel.tp = tp;
            s.parallel.dp = 16 / (tp * s.parallel.pp);
            view.setScenario(s, false);
            QCoreApplication::processEvents();
        }
        QCOMPARE(replots, 0);
        view.show();
        QVERIFY(QTest::qWaitFor([&] { return replots > 0; }, 5000));
    }

    void clickingACellChoosesItsBestPlan()
    {
        PlanMapView view;
        view.resize(700, 560);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setScenario(problem());
        QVERIFY(waitReady(view));
        view.plot()->replot(); // lay the axes out at this size
        const PlanMapCell* cell = view.map().at(4, 2);
        QVERIFY(cell && cell->best);
        QSignalSpy chosen(&view, &PlanMapView::planChosen);
        QTest::mouseClick(view.plot(), Qt::LeftButton, {}, view.cellCentre(4, 2));
        QCOMPARE(chosen.count(), 1);
        const auto s = chosen.at(0).at(0).value<Scenario>();
        QCOMPARE(s.parallel.tp, 4);
        QCOMPARE(s.parallel.pp, 2);
        QCOMPARE(s.parallel.dp, cell->best->parallel.dp);
        QCOMPARE(s.training.micro_batch, cell->best->training.micro_batch);
        QCOMPARE(s.gpus, 16);
        // A cell without a plan does nothing.
        QTest::mouseClick(view.plot(), Qt::LeftButton, {}, view.cellCentre(16, 1));
        QCOMPARE(chosen.count(), 1);
    }

    /// The "Fixed:" combos: holding micro-batch at 4 recomputes the map, and the cells are the
    /// core's map at that value (which is not the free map: the cells change), each best plan
    /// with micro-batch 4; the title names the slice; the outline leaves a plan of micro-batch 1.
    void aFixedAxisChangesTheCells()
    {
        PlanMapView view;
        view.resize(700, 560);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        Scenario s = problem(); // micro-batch 1
        view.setScenario(s);
        QVERIFY(waitReady(view));
        const PlanMap free = view.map();
        QCOMPARE(view.outlined(), QPoint(2, 2));

        QComboBox* axis = view.axisBox();
        QComboBox* value = view.valueBox();
        QVERIFY(axis && value);
        QVERIFY(!value->isEnabled());
        QSignalSpy ready(&view, &PlanMapView::mapReady);
        axis->setCurrentIndex(axis->findText(QStringLiteral("micro-batch")));
        emit axis->activated(axis->currentIndex());
        QVERIFY(value->isEnabled());
        QCOMPARE(value->currentText(), QStringLiteral("1")); // the scenario's own value first
        value->setCurrentIndex(value->findText(QStringLiteral("4")));
        emit value->activated(value->currentIndex());
        QCOMPARE(view.fixed(), (PlanMapFixed{PlanMapAxis::MicroBatch, 4}));
        QVERIFY(view.isComputing());
        QVERIFY(waitReady(view));
        QVERIFY(ready.count() >= 1);

        PlanMapOptions o;
        o.fixed = {PlanMapAxis::MicroBatch, 4};
        const PlanMap core = planMap(s, o);
        const PlanMap& shown = view.map();
        QCOMPARE(shown.fixed, o.fixed);
        QCOMPARE(shown.cells.size(), core.cells.size());
        int changed = 0;
        for (std::size_t i = 0; i < core.cells.size(); ++i) {
            const PlanMapCell& c = core.cells[i];
            QCOMPARE(shown.cells[i].best.has_value(), c.best.has_value());
            if (c.best) {
                QCOMPARE(shown.cells[i].best->training.micro_batch, 4);
                QCOMPARE(shown.cells[i].best->tokens_per_second, c.best->tokens_per_second);
            }
            const PlanMapCell& f = free.cells[i];
            if (f.best.has_value() != c.best.has_value() ||
                (c.best && f.best->tokens_per_second != c.best->tokens_per_second))
                ++changed;
        }
        QVERIFY(changed > 0);
        QVERIFY(view.drawnTitle().contains(QStringLiteral("micro-batch 4")));
        QCOMPARE(view.outlined(), QPoint()); // the plan's micro-batch 1 is another slice
        s.training.micro_batch = 4;
        view.setScenario(s); // a plan edit onto the slice: outlined, no new map
        QVERIFY(!view.isComputing());
        QCOMPARE(view.outlined(), QPoint(2, 2));
    }

    void aBrokenProblemGreysTheMap()
    {
        PlanMapView view;
        Scenario s = problem();
        s.gpus = 12; // more than a node and not whole nodes of 8
        s.parallel.dp = 3;
        view.setScenario(s);
        QVERIFY(waitReady(view));
        QVERIFY(view.isInvalid());
        QVERIFY(view.map().cells.empty());
    }
};

QTEST_MAIN(TestPlanMapView)
#include "test_planmapview.moc"
