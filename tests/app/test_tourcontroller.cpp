// SPDX-License-Identifier: GPL-3.0-or-later
// A tour in the window: File ▸ Open Tour… is there, each step is one undoable document edit
// (undo returns to the previous step's plan), the previous step is pinned as the compare
// baseline, the strip shows "step N of M" and the filled caption, and the presenter keys step
// it: Page Down / Page Up always, arrows and space only while presenting.
#include "app/compare.h"
#include "app/document.h"
#include "app/mainwindow.h"
#include "app/tourcontroller.h"
#include "app/workshop.h"
#include "core/error.h"
#include "core/scenario_io.h"

#include <QMenuBar>
#include <QTest>
#include <QUndoStack>

using namespace paralens;

namespace {
const QString kLesson =
    QStringLiteral(PARALENS_SOURCE_DIR "/tests/data/tours/lesson.paralens-tour.json");
}

class TestTourController : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase() { QCoreApplication::setOrganizationName(QStringLiteral("ParaLensTest")); }

    void stepsAreUndoableEdits()
    {
        MainWindow w;
        w.show();
        auto* tour = w.findChild<TourController*>();
        QVERIFY(tour);
        // The menu entry exists.
        bool inMenu = false;
        for (QAction* a : w.menuBar()->actions().first()->menu()->actions())
            inMenu |= a == tour->openAction();
        QVERIFY(inMenu);

        const Tour file = loadTourFile(kLesson.toStdString());
        QVERIFY(tour->openTour(kLesson));
        QCOMPARE(tour->currentStep(), 0);
        QCOMPARE(tour->stepCount(), 4);
        QVERIFY(w.document()->scenario() == file.steps[0].scenario);
        QVERIFY(!w.comparison()->isPinned()); // nothing before the first step
        QCOMPARE(tour->counterText(), QStringLiteral("Hand-made lesson · step 1 of 4"));
        QCOMPARE(tour->captionText(), QStringLiteral("TP 8 PP 4 DP 2 of 64; m 32 {literal}"));
        QVERIFY(!tour->previousAction()->isEnabled());

        tour->next();
        QCOMPARE(tour->currentStep(), 1);
        QVERIFY(w.document()->scenario() == file.steps[1].scenario);
        QVERIFY(w.comparison()->isPinned());
        QVERIFY(w.comparison()->baseline().scenario == file.steps[0].scenario);
        QCOMPARE(tour->captionText(), QStringLiteral("4 → 2, dp 4, m 16"));

        // Undo goes back to the first step's plan; the class can explore from there.
        w.document()->undoStack()->undo();
        QVERIFY(w.document()->scenario() == file.steps[0].scenario);
        w.document()->undoStack()->redo();
        QVERIFY(w.document()->scenario() == file.steps[1].scenario);

        tour->goTo(3);
        QVERIFY(!tour->nextAction()->isEnabled());
        tour->next(); // past the end: nothing happens
        QCOMPARE(tour->currentStep(), 3);
        tour->closeTour();
        QVERIFY(!tour->hasTour());
        QVERIFY(!w.comparison()->isPinned());
    }

    void presenterKeys()
    {
        MainWindow w;
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        auto* tour = w.findChild<TourController*>();
        QVERIFY(tour->openTour(kLesson));
        QTest::keyClick(&w, Qt::Key_PageDown);
        QCOMPARE(tour->currentStep(), 1);
        QTest::keyClick(&w, Qt::Key_PageUp);
        QCOMPARE(tour->currentStep(), 0);
        // Outside presentation mode the arrows belong to the controls.
        QVERIFY(!tour->nextAction()->shortcuts().contains(QKeySequence(Qt::Key_Right)));
        w.workshop()->setPresentation(true);
        QVERIFY(tour->nextAction()->shortcuts().contains(QKeySequence(Qt::Key_Right)));
        QVERIFY(tour->nextAction()->shortcuts().contains(QKeySequence(Qt::Key_Space)));
        QVERIFY(tour->previousAction()->shortcuts().contains(QKeySequence(Qt::Key_Left)));
        QTest::keyClick(&w, Qt::Key_Space);
        QCOMPARE(tour->currentStep(), 1);
        QTest::keyClick(&w, Qt::Key_Right);
        QCOMPARE(tour->currentStep(), 2);
        QTest::keyClick(&w, Qt::Key_Left);
        QCOMPARE(tour->currentStep(), 1);
        // Space was the workshop's Play key: the tour borrows it and gives it back.
        tour->closeTour();
        QTest::keyClick(&w, Qt::Key_Space);
        QVERIFY(w.workshop()->isPlaying());
        w.workshop()->pause();
        w.workshop()->setPresentation(false);
    }

    void badTourKeepsTheDocument()
    {
        MainWindow w;
        auto* tour = w.findChild<TourController*>();
        const Scenario before = w.document()->scenario();
        // openTour shows a message box; setTour reports through the exception instead.
        Tour broken = loadTourFile(kLesson.toStdString());
        broken.steps[1].caption = "{nope}";
        QVERIFY_THROWS_EXCEPTION(InputError, tour->setTour(broken));
        QVERIFY(!tour->hasTour());
        QVERIFY(w.document()->scenario() == before);
    }
};

QTEST_MAIN(TestTourController)
#include "test_tourcontroller.moc"
