// SPDX-License-Identifier: GPL-3.0-or-later
// A tour in the window: File ▸ Open Tour… is there, each step is one undoable document edit
// (undo returns to the previous step's plan), the previous step is pinned as the compare
// baseline, the strip shows "step N of M" and the filled caption, and the presenter keys step
// it: Page Down / Page Up always, arrows and space only while presenting. --tour-step opens
// at a step and names a step out of range; while presenting each step brings its view
// forward (the plan map's dock with the step's plan outlined); the caption strip holds its
// whole text and little else at 1024×768 and 1920×1080, the headline's lines apart; leaving the
// presentation (or closing the tour while presenting) puts the splitters and docks back as they
// were.
#include "app/compare.h"
#include "app/document.h"
#include "app/mainwindow.h"
#include "app/plandocks.h"
#include "app/tourcontroller.h"
#include "app/workshop.h"
#include "core/error.h"
#include "core/scenario_io.h"
#include "tests/widgets/headline_checks.h"
#include "widgets/breakdownview.h"
#include "widgets/chartview.h"
#include "widgets/ganttview.h"
#include "widgets/memoryview.h"
#include "widgets/planmapview.h"
#include "widgets/topologyview.h"

#include <QDockWidget>
#include <QLabel>
#include <QLayout>
#include <QMap>
#include <QMenuBar>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSplitter>
#include <QTest>
#include <QUndoStack>

#include <qcustomplot.h>

using namespace paralens;

namespace {
const QString kLesson =
    QStringLiteral(PARALENS_SOURCE_DIR "/tests/data/tours/lesson.paralens-tour.json");
const QString kViews =
    QStringLiteral(PARALENS_SOURCE_DIR "/tests/data/tours/views.paralens-tour.json");

/// Every splitter's sizes and panes' hidden flags, and every dock's visibility and geometry:
/// what "the layout as before" means to the user.
struct Layout
{
    QList<QList<int>> sizes;
    QList<QList<bool>> hidden;
    QMap<QString, QRect> docks; ///< the shown docks by name, and where they are
    bool operator==(const Layout&) const = default;
};

Layout layoutOf(MainWindow& w)
{
    Layout l;
    for (QSplitter* s : w.findChildren<QSplitter*>()) {
        l.sizes << s->sizes();
        QList<bool> hidden;
        for (int i = 0; i < s->count(); ++i)
            hidden << s->widget(i)->isHidden();
        l.hidden << hidden;
    }
    for (QDockWidget* d : w.findChildren<QDockWidget*>())
        if (d->isVisible())
            l.docks[d->objectName()] = d->geometry();
    return l;
}

QString describe(const Layout& l)
{
    QStringList out;
    for (const QList<int>& s : l.sizes) {
        QStringList v;
        for (int x : s)
            v << QString::number(x);
        out << v.join('/');
    }
    for (auto it = l.docks.cbegin(); it != l.docks.cend(); ++it)
        out << QStringLiteral("%1 %2x%3+%4+%5")
                   .arg(it.key())
                   .arg(it.value().width())
                   .arg(it.value().height())
                   .arg(it.value().x())
                   .arg(it.value().y());
    return out.join(QStringLiteral("; "));
}

/// Lets the window lay itself out (docks and splitters settle over a few events).
void settle()
{
    for (int i = 0; i < 5; ++i) {
        QCoreApplication::processEvents();
        QTest::qWait(20);
    }
}

/// The share of its splitter a pane has (0 when hidden).
double shareOf(QWidget* pane)
{
    auto* split = qobject_cast<QSplitter*>(pane->parentWidget());
    if (!split)
        return 0;
    const QList<int> sizes = split->sizes();
    int total = 0;
    for (int v : sizes)
        total += v;
    return total > 0 ? double(sizes[split->indexOf(pane)]) / total : 0;
}

/// Whether the chart (or a child of it) has the window's focus.
bool focused(MainWindow& w, QWidget* chart)
{
    QWidget* f = w.focusWidget();
    return f && (f == chart || chart->isAncestorOf(f));
}
} // namespace

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

    void tourStepOptionOpensAtTheStep()
    {
        // The command line's options, as main() takes them.
        QStringList args{"paralens", "--present", "--tour", "lesson", "--tour-step", "3"};
        TourLaunch launch = TourLaunch::take(args);
        QCOMPARE(launch.tour, QStringLiteral("lesson"));
        QCOMPARE(launch.step, 3);
        QVERIFY(launch.error.isEmpty());
        QCOMPARE(args, QStringList({"paralens", "--present"}));
        args = QStringList{"paralens", "x.paralens.json", "--tour=lesson", "--tour-step=2"};
        launch = TourLaunch::take(args);
        QCOMPARE(launch.tour, QStringLiteral("lesson"));
        QCOMPARE(launch.step, 2);
        QCOMPARE(args, QStringList({"paralens", "x.paralens.json"}));
        args = QStringList{"paralens", "--tour", "lesson"};
        QCOMPARE(TourLaunch::take(args).step, 1); // the first step when not given
        for (const QStringList& bad :
             {QStringList{"paralens", "--tour", "t", "--tour-step", "0"},
              QStringList{"paralens", "--tour", "t", "--tour-step", "two"},
              QStringList{"paralens", "--tour", "t", "--tour-step"},
              QStringList{"paralens", "--tour-step", "2"}, QStringList{"paralens", "--tour"}}) {
            QStringList a = bad;
            const TourLaunch l = TourLaunch::take(a);
            QVERIFY2(!l.error.isEmpty(), qPrintable(bad.join(' ')));
            QVERIFY2(l.error.contains("--tour"), qPrintable(l.error));
        }

        MainWindow w;
        w.show();
        auto* tour = w.findChild<TourController*>();
        const Tour file = loadTourFile(kLesson.toStdString());
        QString error;
        QVERIFY2(tour->openTour(kLesson, 3, &error), qPrintable(error));
        QCOMPARE(tour->currentStep(), 2); // 1-based on the command line
        QVERIFY(w.document()->scenario() == file.steps[2].scenario);
        QCOMPARE(tour->counterText(), QStringLiteral("Hand-made lesson · step 3 of 4"));
        // The step before it is the ghosted baseline, as when stepping there.
        QVERIFY(w.comparison()->isPinned());
        QVERIFY(w.comparison()->baseline().scenario == file.steps[1].scenario);
        tour->closeTour();

        // Out of range: named, and nothing changes.
        const Scenario before = w.document()->scenario();
        for (int step : {0, 5, -1}) {
            error.clear();
            QVERIFY(!tour->openTour(kLesson, step, &error));
            QVERIFY2(error.contains("lesson.paralens-tour.json") &&
                         error.contains(QStringLiteral("--tour-step %1").arg(step)) &&
                         error.contains("4 steps"),
                     qPrintable(error));
            QVERIFY(!tour->hasTour());
            QVERIFY(w.document()->scenario() == before);
        }
        // A bundled tour by id, at its second step.
        QVERIFY2(tour->openTour(QStringLiteral("pipeline-schedules"), 2, &error),
                 qPrintable(error));
        QCOMPARE(tour->currentStep(), 1);
    }

    void eachStepBringsItsViewForward()
    {
        MainWindow w;
        w.resize(1280, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        auto* tour = w.findChild<TourController*>();
        PlanDocks* docks = w.findChild<PlanDocks*>();
        QVERIFY(tour->openTour(kViews));
        w.workshop()->setPresentation(true);
        settle();
        // Presentation hides the breakdown and the topology; the first step is the memory.
        QVERIFY(w.breakdownView()->isHidden());
        QVERIFY(focused(w, w.memoryView()));
        QVERIFY(shareOf(w.memoryView()->parentWidget()) >= 0.4);

        tour->next(); // breakdown: back, with at least 40 % of the column
        settle();
        QVERIFY(w.breakdownView()->isVisible());
        QVERIFY2(shareOf(w.breakdownView()) >= 0.4,
                 qPrintable(QString::number(shareOf(w.breakdownView()))));
        QVERIFY(focused(w, w.breakdownView()));

        tour->next(); // topology: back in its pane beside the memory, the larger part
        settle();
        QVERIFY(w.breakdownView()->isHidden()); // the previous step's view went back
        QVERIFY(w.memoryView()->isVisible());
        QVERIFY(w.topologyView()->isVisible());
        QVERIFY(shareOf(w.topologyView()) >= 0.5); // beside the memory: the width
        QVERIFY(focused(w, w.topologyView()));

        tour->next(); // gantt
        settle();
        QVERIFY(w.topologyView()->isHidden());
        QVERIFY(shareOf(w.ganttView()) >= 0.4);
        QVERIFY(focused(w, w.ganttView()));

        QCOMPARE(w.size(), QSize(1280, 900)); // no step makes the window outgrow itself

        tour->next(); // plan map: its dock opens, the map marks the step's plan
        QVERIFY(docks->planMapDock()->isVisible());
        QVERIFY(focused(w, docks->planMap()));
        QVERIFY(docks->planMapDock()->width() >= w.width() * 2 / 5);
        if (docks->planMap()->isComputing()) {
            QSignalSpy ready(docks->planMap(), &PlanMapView::mapReady);
            QVERIFY(ready.wait(60000));
        }
        const Scenario& s = w.document()->scenario();
        QCOMPARE(s.parallel.tp, 4);
        QCOMPARE(docks->planMap()->outlined(), QPoint(s.parallel.tp, s.parallel.pp));

        tour->previous(); // the dock closes again
        settle();
        QVERIFY(!docks->planMapDock()->isVisible());
        w.workshop()->setPresentation(false);
    }

    void leavingPutsTheLayoutBack()
    {
        MainWindow w;
        w.resize(1400, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        auto* tour = w.findChild<TourController*>();
        PlanDocks* docks = w.findChild<PlanDocks*>();
        // A layout of the user's own: splitters moved, the fit advice docked open.
        for (QSplitter* s : w.findChildren<QSplitter*>()) {
            QList<int> sizes = s->sizes();
            sizes.first() += 37;
            sizes.last() = std::max(40, sizes.last() - 37);
            s->setSizes(sizes);
        }
        docks->fitAdviceDock()->show();
        QVERIFY(tour->openTour(kViews, 5)); // the plan-map step, with its ghosted baseline
        settle();
        const Layout before = layoutOf(w);

        w.workshop()->setPresentation(true);
        settle();
        QVERIFY(docks->planMapDock()->isVisible());
        for (int i = 4; i > 0; --i) {
            tour->previous();
            settle();
        }
        for (int i = 1; i < tour->stepCount(); ++i) {
            tour->next();
            settle();
        }
        QCOMPARE(tour->currentStep(), 4);
        QVERIFY(layoutOf(w) != before);
        w.workshop()->setPresentation(false);
        settle();
        const Layout after = layoutOf(w);
        QVERIFY2(after == before,
                 qPrintable(describe(before) + QStringLiteral("\n") + describe(after)));
        QVERIFY(tour->dock()->isVisible()); // the tour is still open

        // Closing the tour while presenting gives back the presentation's own layout; leaving
        // then gives back the window's.
        tour->closeTour();
        w.workshop()->setPresentation(true);
        settle();
        const Layout presenting = layoutOf(w); // without a tour
        QVERIFY(tour->openTour(kViews));
        settle();
        tour->goTo(1); // breakdown
        settle();
        tour->goTo(4); // plan map
        settle();
        QVERIFY(docks->planMapDock()->isVisible());
        tour->closeTour();
        settle();
        const Layout closed = layoutOf(w);
        QVERIFY(!tour->dock()->isVisible());
        // The same panes and docks; the rows share the strip's height among them.
        QVERIFY2(closed.hidden == presenting.hidden && closed.docks == presenting.docks,
                 qPrintable(describe(presenting) + QStringLiteral("\n") + describe(closed)));
        QVERIFY(!docks->planMapDock()->isVisible());
        w.workshop()->setPresentation(false);
        settle();
        const Layout end = layoutOf(w);
        QCOMPARE(end.hidden, before.hidden); // (the rows have the strip's height now)
        QVERIFY(docks->fitAdviceDock()->isVisible());
        QVERIFY(!tour->dock()->isVisible());
        QCOMPARE(w.size(), QSize(1400, 900));
    }

    void captionFitsItsBox_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::addColumn<QString>("tourId");
        for (const char* id : {"70b-on-64-h100", "long-context", "moe-expert-parallelism",
                               "pipeline-schedules", "blackwell"}) {
            QTest::addRow("1024x768 %s", id) << QSize(1024, 768) << QString(id);
            QTest::addRow("1920x1080 %s", id) << QSize(1920, 1080) << QString(id);
        }
    }

    void captionFitsItsBox()
    {
        QFETCH(QSize, size);
        QFETCH(QString, tourId);
        MainWindow w;
        w.resize(size);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        auto* tour = w.findChild<TourController*>();
        QString error;
        QVERIFY2(tour->openTour(tourId, 1, &error), qPrintable(error));
        w.workshop()->setPresentation(true);
        w.resize(size);
        settle();
        QCOMPARE(w.size(), size);
        QLabel* caption = tour->captionLabel();
        QLabel* title = tour->titleLabel();
        QWidget* strip = tour->dock()->widget();
        for (int i = 0; i < tour->stepCount(); ++i) {
            tour->goTo(i);
            settle();
            const QString where = QStringLiteral("%1 step %2 at %3x%4")
                                      .arg(tourId)
                                      .arg(i + 1)
                                      .arg(size.width())
                                      .arg(size.height());
            QCOMPARE(caption->text(), tour->captionText());
            QVERIFY2(w.size() == size, qPrintable(where)); // no step outgrows the window
            // Large type: at least the explorer's 12 points.
            QVERIFY2(caption->font().pointSizeF() >= 12, qPrintable(where));
            // Every wrapped line is inside the label, the label inside the strip, the strip
            // inside the window.
            for (QLabel* l : {title, caption}) {
                const int needed = l->heightForWidth(l->width());
                QVERIFY2(needed <= l->height(), qPrintable(QStringLiteral("%1: %2 needs %3, has %4")
                                                               .arg(where, l->text())
                                                               .arg(needed)
                                                               .arg(l->height())));
                const QRect inStrip(l->mapTo(strip, QPoint(0, 0)), l->size());
                QVERIFY2(strip->rect().contains(inStrip), qPrintable(where));
            }
            const QRect stripInWindow(strip->mapTo(&w, QPoint(0, 0)), strip->size());
            QVERIFY2(w.rect().contains(stripInWindow), qPrintable(where));
            // No empty box: the strip is as tall as its content at its width, and the
            // caption ends within a line of the strip's bottom.
            QVERIFY2(strip->height() <= strip->layout()->heightForWidth(strip->width()) + 2,
                     qPrintable(QStringLiteral("%1: strip %2, content %3")
                                    .arg(where)
                                    .arg(strip->height())
                                    .arg(strip->layout()->heightForWidth(strip->width()))));
            const int below = strip->height() - (caption->y() + caption->height());
            QVERIFY2(
                below <= caption->fontMetrics().height(),
                qPrintable(QStringLiteral("%1: %2 px under the caption").arg(where).arg(below)));
            QVERIFY2(caption->height() <= caption->heightForWidth(caption->width()) +
                                              caption->fontMetrics().height(),
                     qPrintable(where));
            // The headline's cards (a ghosted baseline's deltas among them) never overprint.
            if (w.headline()->isVisibleTo(&w)) {
                const QString problems = testing::headlineOverprint(*w.headline());
                QVERIFY2(problems.isEmpty(), qPrintable(where + QStringLiteral("\n") + problems));
            }
            // Every chart shown lies inside the window (a squeezed layout clips their axes).
            for (ChartView* chart : w.findChildren<ChartView*>()) {
                if (!chart->isVisibleTo(&w))
                    continue;
                const QRect inWindow(chart->mapTo(&w, QPoint(0, 0)), chart->size());
                QVERIFY2(w.rect().contains(inWindow),
                         qPrintable(QStringLiteral("%1: %2 at %3,%4 %5x%6")
                                        .arg(where, chart->objectName())
                                        .arg(inWindow.x())
                                        .arg(inWindow.y())
                                        .arg(inWindow.width())
                                        .arg(inWindow.height())));
            }
            // The charts keep most of the window.
            QVERIFY2(strip->height() <= size.height() / 2,
                     qPrintable(QStringLiteral("%1: strip %2 px").arg(where).arg(strip->height())));
        }
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
