// SPDX-License-Identifier: GPL-3.0-or-later
// The Search, Calibration and Accuracy docks of the main window: the Tools menu shows them, a
// plan chosen in the search, a saved profile and a measured run opened from the accuracy chart
// change the document as undoable edits; the accuracy note reaches the headline.
#include "app/accuracypanel.h"
#include "app/calibrationpanel.h"
#include "app/document.h"
#include "app/export.h"
#include "app/mainwindow.h"
#include "app/tooldocks.h"
#include "core/calibration.h"
#include "core/scenario_io.h"
#include "widgets/accuracyview.h"
#include "widgets/headline.h"
#include "widgets/calibrationview.h"
#include "widgets/searchview.h"

#include <QDockWidget>
#include <QImage>
#include <QMenuBar>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

using namespace paralens;

class TestToolDocks : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void toolsMenuTogglesTheDocks()
    {
        MainWindow w;
        w.show();
        QMenu* tools = nullptr;
        for (QAction* a : w.menuBar()->actions())
            if (a->text() == "&Tools")
                tools = a->menu();
        QVERIFY(tools);
        QCOMPARE(tools->actions().size(), 3);
        auto* search = w.findChild<QDockWidget*>("SearchDock");
        auto* calibration = w.findChild<QDockWidget*>("CalibrationDock");
        auto* accuracy = w.findChild<QDockWidget*>("AccuracyDock");
        QVERIFY(search && calibration && accuracy);
        QVERIFY(!search->isVisible()); // closed until asked for
        tools->actions().at(0)->trigger();
        QVERIFY(search->isVisible());
        QCOMPARE(tools->actions().at(2)->text(), QStringLiteral("Accuracy"));
        QVERIFY(!accuracy->isVisible());
        tools->actions().at(2)->trigger();
        QVERIFY(accuracy->isVisible());
    }

    void openedRunIsOneUndoableEdit()
    {
        MainWindow w;
        Document* doc = w.document();
        Scenario s = doc->scenario();
        s.calibration = "/profiles/cluster.json";
        doc->edit(s, "calibration");
        const Scenario before = doc->scenario();
        Scenario run = before;
        run.model.name = "measured model";
        run.model.layers = 40;
        run.parallel.pp = 4;
        run.parallel.dp = 2;
        run.calibration.clear();
        emit w.toolDocks()->accuracyPanel()->view()->runChosen(run, "a run");
        QCOMPARE(doc->scenario().model.name, std::string("measured model"));
        QCOMPARE(doc->scenario().parallel.pp, 4);
        QCOMPARE(doc->scenario().calibration, before.calibration); // the run names none
        doc->undoStack()->undo();
        QCOMPARE(doc->scenario().model.name, before.model.name);
        QCOMPARE(doc->scenario().parallel.pp, before.parallel.pp);
    }

    void accuracyNoteReachesTheHeadline()
    {
        MainWindow w;
        QVERIFY(w.headline()->accuracyNote().isEmpty());
        emit w.toolDocks()->accuracyPanel()->noteChanged("vs measured: ±5.0 % on 3 similar runs",
                                                         "tip");
        QCOMPARE(w.headline()->accuracyNote(),
                 QStringLiteral("vs measured: ±5.0 % on 3 similar runs"));
    }

    void dockChartsExportLikeTheViews()
    {
        QTemporaryDir dir;
        MainWindow w;
        const QList<ChartView*> charts = w.toolDocks()->charts();
        QCOMPARE(charts.size(), 2);
        QCOMPARE(charts.at(0), static_cast<ChartView*>(w.toolDocks()->searchView()));
        QCOMPARE(charts.at(1), static_cast<ChartView*>(w.toolDocks()->calibrationPanel()->view()));
        for (ChartView* c : charts) {
            const QString path = dir.filePath(c->chartId() + QStringLiteral(".png"));
            QString error;
            QVERIFY2(exportChart(c, path, ExportOptions{}, QStringLiteral("stamp"), &error),
                     qPrintable(error));
            QImage image(path);
            QCOMPARE(image.size(), ExportOptions{}.size);
        }
    }

    void chosenPlanIsOneUndoableEdit()
    {
        MainWindow w;
        Document* doc = w.document();
        const Scenario before = doc->scenario();
        Scenario chosen = before;
        chosen.parallel.pp = 8;
        chosen.parallel.dp = 1;
        chosen.parallel.virtual_stages = 1;
        chosen.parallel.schedule = Schedule::OneF1B;
        chosen.training.micro_batch = 2;
        chosen.model.name = "ignored"; // only the plan and batch split are taken
        emit w.toolDocks()->searchView()->planChosen(chosen);
        QCOMPARE(doc->scenario().parallel.pp, 8);
        QCOMPARE(doc->scenario().training.micro_batch, 2);
        QCOMPARE(doc->scenario().model.name, before.model.name);
        QVERIFY(doc->isModified());
        doc->undoStack()->undo();
        QCOMPARE(doc->scenario().parallel.pp, before.parallel.pp);
        QCOMPARE(doc->scenario().training.micro_batch, before.training.micro_batch);
    }

    void savedProfileBecomesTheCalibration()
    {
        QTemporaryDir dir;
        MainWindow w;
        Document* doc = w.document();
        QVERIFY(doc->scenario().calibration.empty());
        CalibrationPanel* panel = w.toolDocks()->calibrationPanel();
        emit panel->profileChanged(QString()); // an unsaved import names no file
        QVERIFY(doc->scenario().calibration.empty());
        const QString path = dir.filePath("cluster.json");
        emit panel->profileChanged(path);
        QCOMPARE(QString::fromStdString(doc->scenario().calibration), path);
        doc->undoStack()->undo();
        QVERIFY(doc->scenario().calibration.empty());
    }
};

QTEST_MAIN(TestToolDocks)
#include "test_tooldocks.moc"
