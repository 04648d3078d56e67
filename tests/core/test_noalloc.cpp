// SPDX-License-Identifier: GPL-3.0-or-later
// evaluate() must not touch the heap once the Estimate it fills has grown (a search calls it
// millions of times).
#include "alloc_counter.h"
#include "core/evaluate.h"
#include "test_scenarios.h"

#include <QTest>

using namespace paralens;
using namespace paralens::testmodels;

class TestNoAlloc : public QObject
{
    Q_OBJECT
private slots:
    void evaluateReusesEstimate()
    {
        Scenario a = scenario(llama3_70b(), h100_sxm(), 8, 8, 4, 256);
        a.parallel.schedule = Schedule::Interleaved1F1B;
        a.parallel.virtual_stages = 2;
        Scenario b = scenario(mixtral8x7b(), h100_sxm(), 2, 4, 8, 256);
        b.parallel.ep = 8;
        b.parallel.zero = 3;
        Estimate e;
        evaluate(a, e);
        evaluate(b, e);
        const long before = g_allocations.load();
        for (int i = 0; i < 200; ++i) {
            evaluate(a, e);
            evaluate(b, e);
        }
        QCOMPARE(g_allocations.load() - before, 0L);
    }
};

QTEST_APPLESS_MAIN(TestNoAlloc)
#include "test_noalloc.moc"
