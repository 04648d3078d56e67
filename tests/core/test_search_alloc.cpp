// SPDX-License-Identifier: GPL-3.0-or-later
// The search allocates for its set-up and for the plans it keeps, never per plan scored.
#include "alloc_counter.h"
#include "core/search.h"
#include "test_scenarios.h"

#include <QTest>

using namespace paralens;
using namespace paralens::testmodels;

class TestSearchAlloc : public QObject
{
    Q_OBJECT
private slots:
    void noAllocationPerPlan()
    {
        SearchSpace sp;
        sp.base.model = llama3_8b();
        sp.base.cluster = h100_sxm();
        sp.base.gpus = 64;
        sp.base.training.global_batch = 256;
        sp.base.training.seq_len = 4096;
        SearchOptions opt;
        opt.threads = 2;
        opt.top_k = 10;
        search(sp, opt); // warm-up: evaluate()'s per-thread scratch, presets
        const long before = g_allocations.load();
        const SearchResult r = search(sp, opt);
        const long allocations = g_allocations.load() - before;
        qInfo("%ld allocations for %llu plans (%llu scored)", allocations,
              static_cast<unsigned long long>(r.evaluated),
              static_cast<unsigned long long>(r.scored));
        QVERIFY(r.scored > 100000);
        // Set-up (the plan structures, threads, per-thread scratch) and the kept plans only.
        QVERIFY(allocations < long(r.scored / 100));
    }
};

QTEST_APPLESS_MAIN(TestSearchAlloc)
#include "test_search_alloc.moc"
