// SPDX-License-Identifier: GPL-3.0-or-later
// The Search view runs the core search off the GUI thread and shows exactly its results.
#include "core/presets.h"
#include "widgets/searchview.h"

#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTest>

#include <qcustomplot.h>

using namespace paralens;

namespace {

SearchSpace smallProblem()
{
    const PresetLibrary& lib = PresetLibrary::builtin();
    SearchSpace sp;
    sp.base.model_id = "llama3-8b";
    sp.base.model = *lib.model("llama3-8b");
    sp.base.hardware_id = "h100-sxm";
    sp.base.cluster = *lib.hardware("h100-sxm");
    sp.base.gpus = 16;
    sp.base.training.global_batch = 32;
    sp.base.training.seq_len = 4096;
    return sp;
}

} // namespace

class TestSearchView : public QObject
{
    Q_OBJECT
private slots:
    void tableEqualsCoreResults()
    {
        SearchView view;
        view.resize(1000, 800);
        view.show();
        const SearchSpace sp = smallProblem();
        view.setSpace(sp);
        view.setTopK(20);
        view.setGroupByLayout(false); // every plan, as the core ranks them
        QSignalSpy done(&view, &SearchView::finished);
        view.start();
        QVERIFY(view.isRunning() || done.count() == 1);
        QVERIFY(done.count() == 1 || done.wait(60000));
        QVERIFY(!view.isRunning());
        QVERIFY(view.errorText().isEmpty());

        SearchOptions opt;
        opt.top_k = 20;
        const SearchResult core = search(sp, opt);
        const SearchResult& shown = view.result();
        QCOMPARE(shown.evaluated, core.evaluated);
        QCOMPARE(shown.feasible, core.feasible);
        QCOMPARE(shown.results.size(), core.results.size());

        // Table rows (in the view's default order, by rank) are the core results.
        QAbstractItemModel* m = view.table()->model();
        QCOMPARE(m->rowCount(), int(core.results.size()));
        for (int r = 0; r < m->rowCount(); ++r) {
            const SearchPlan& p = core.results[std::size_t(r)];
            auto at = [&](int c) { return m->index(r, c).data(Qt::UserRole); };
            QCOMPARE(at(0).toInt(), r + 1);
            QCOMPARE(at(1).toDouble(), p.tokens_per_second);
            QCOMPARE(at(3).toDouble(), p.peak_bytes);
            QCOMPARE(at(5).toInt(), p.parallel.tp);
            QCOMPARE(at(6).toInt(), p.parallel.pp);
            QCOMPARE(at(7).toInt(), p.parallel.dp);
            QCOMPARE(at(8).toInt(), p.parallel.cp);
            QCOMPARE(at(12).toInt(), p.training.micro_batch);
            QCOMPARE(at(13).toInt(), p.parallel.zero);
        }

        // Scatter: one graph per value of the colour dimension plus the Pareto front.
        QVERIFY(view.plot()->graphCount() >= 2);
        QCOMPARE(view.plot()->graph(view.plot()->graphCount() - 1)->dataCount(),
                 int(core.pareto.size()));
        view.setColourBy(SearchView::ColourBy::TP);
        int tps = 0;
        for (int t : {1, 2, 4, 8})
            for (const auto& list : {shown.sample, shown.results})
                if (std::any_of(list.begin(), list.end(),
                                [&](const SearchPlan& p) { return p.parallel.tp == t; })) {
                    ++tps;
                    break;
                }
        QCOMPARE(view.plot()->graphCount(), tps + 1);

        // Sorting by a column reorders rows; clicking a row emits that row's scenario.
        view.table()->sortByColumn(3, Qt::AscendingOrder); // peak memory
        for (int r = 1; r < m->rowCount(); ++r)
            QVERIFY(m->index(r - 1, 3).data(Qt::UserRole).toDouble() <=
                    m->index(r, 3).data(Qt::UserRole).toDouble());
        QSignalSpy chosen(&view, &SearchView::planChosen);
        const QModelIndex first = m->index(0, 1);
        const int rank = m->index(0, 0).data(Qt::UserRole).toInt();
        const QRect rect = view.table()->visualRect(first);
        QTest::mouseClick(view.table()->viewport(), Qt::LeftButton, {}, rect.center());
        QCOMPARE(chosen.count(), 1);
        const auto s = chosen.at(0).at(0).value<Scenario>();
        const SearchPlan& p = core.results[std::size_t(rank - 1)];
        QCOMPARE(s.parallel.tp, p.parallel.tp);
        QCOMPARE(s.parallel.pp, p.parallel.pp);
        QCOMPARE(s.parallel.zero, p.parallel.zero);
        QCOMPARE(s.training.micro_batch, p.training.micro_batch);
        QCOMPARE(s.gpus, 16);
        QCOMPARE(QString::fromStdString(s.model_id), QString("llama3-8b"));
    }

    /// Grouping keeps the fastest plan of each TP·PP·DP·CP·EP layout and the schedule filter
    /// only its schedule; the oracle is the core's ranked list, filtered here by hand.
    void groupingAndFilterNarrowTheTable()
    {
        SearchView view;
        view.setSpace(smallProblem());
        view.setTopK(40);
        QSignalSpy done(&view, &SearchView::finished);
        view.start();
        QVERIFY(done.count() == 1 || done.wait(60000));
        const std::vector<SearchPlan>& plans = view.result().results;
        QVERIFY(plans.size() > 4);
        QAbstractItemModel* m = view.table()->model();

        view.setGroupByLayout(true);
        std::vector<int> firsts;
        for (int i = 0; i < int(plans.size()); ++i) {
            const ParallelPlan& p = plans[std::size_t(i)].parallel;
            bool seen = false;
            for (int j : firsts) {
                const ParallelPlan& q = plans[std::size_t(j)].parallel;
                seen = seen || (p.tp == q.tp && p.pp == q.pp && p.dp == q.dp && p.cp == q.cp &&
                                p.ep == q.ep);
            }
            if (!seen)
                firsts.push_back(i);
        }
        QCOMPARE(view.listedPlans(), firsts);
        QCOMPARE(m->rowCount(), int(firsts.size()));
        for (int r = 0; r < m->rowCount(); ++r)
            QCOMPARE(m->index(r, 0).data(Qt::UserRole).toInt(), firsts[std::size_t(r)] + 1);
        QVERIFY(firsts.size() < plans.size()); // the top plans had near-duplicates

        view.setGroupByLayout(false);
        const Schedule only = plans.front().parallel.schedule;
        view.setScheduleFilter(only);
        int expected = 0;
        for (const SearchPlan& p : plans)
            expected += p.parallel.schedule == only;
        QCOMPARE(m->rowCount(), expected);
        view.setScheduleFilter(std::nullopt);
        QCOMPARE(m->rowCount(), int(plans.size()));
        QVERIFY(view.statusText().contains("plans evaluated"));
    }

    void cancelStops()
    {
        SearchView view;
        SearchSpace sp = smallProblem();
        const PresetLibrary& lib = PresetLibrary::builtin();
        sp.base.model = *lib.model("gpt3-175b");
        sp.base.model_id = "gpt3-175b";
        sp.base.gpus = 1024;
        sp.base.training.global_batch = 1536;
        sp.base.training.seq_len = 2048;
        view.setSpace(sp);
        view.setThreads(2); // about a second of work even on a many-core machine
        QSignalSpy done(&view, &SearchView::finished);
        view.start();
        QTest::qWait(50);
        const auto t0 = std::chrono::steady_clock::now();
        view.cancel();
        QVERIFY(done.count() == 1 || done.wait(5000));
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count();
        QVERIFY2(ms < 500, qPrintable(QString("finished %1 ms after Cancel").arg(ms)));
        QVERIFY(view.result().cancelled);
    }

    void badProblemShowsError()
    {
        SearchView view;
        SearchSpace sp = smallProblem();
        sp.base.gpus = 12; // not whole 8-GPU nodes
        view.setSpace(sp);
        QSignalSpy done(&view, &SearchView::finished);
        view.start();
        QVERIFY(done.count() == 1 || done.wait(5000));
        QVERIFY2(view.errorText().contains("GPUs"), qPrintable(view.errorText())); // its label
        // The chart greys with the reason, as the explorer's charts do for a plan that
        // cannot run; a good search shows plans again.
        QVERIFY(view.isInvalid());
        QCOMPARE(view.invalidReason(), view.errorText());
        QCOMPARE(view.plot()->graphCount(), 0);
        view.setSpace(smallProblem());
        view.start();
        QVERIFY(done.count() == 2 || done.wait(60000));
        QVERIFY(!view.isInvalid());
        QVERIFY(view.plot()->graphCount() >= 2);
    }

    void isAChartView()
    {
        SearchView view;
        ChartView* chart = &view;
        QCOMPARE(chart->chartId(), QStringLiteral("search"));
        QVERIFY(!chart->chartTitle().isEmpty());
        QPalette dark;
        dark.setColor(QPalette::Window, QColor(0x2b, 0x2b, 0x2b));
        dark.setColor(QPalette::Base, QColor(0x1e, 0x1e, 0x1e));
        dark.setColor(QPalette::Text, QColor(0xe0, 0xe0, 0xe0));
        view.setPalette(dark);
        QCOMPARE(view.plot()->legend->brush().color(), QColor(0x1e, 0x1e, 0x1e));
        QCOMPARE(view.plot()->xAxis->tickLabelColor(), QColor(0xe0, 0xe0, 0xe0));
    }

    void destroyWhileRunning()
    {
        auto* view = new SearchView;
        SearchSpace sp = smallProblem();
        sp.base.gpus = 1024;
        sp.base.training.global_batch = 1024;
        view->setSpace(sp);
        view->start();
        QTest::qWait(20);
        const auto t0 = std::chrono::steady_clock::now();
        delete view; // cancels and waits
        QVERIFY(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(500));
    }
};

QTEST_MAIN(TestSearchView)
#include "test_searchview.moc"
