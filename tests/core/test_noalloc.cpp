// SPDX-License-Identifier: GPL-3.0-or-later
// evaluate() must not touch the heap once the Estimate it fills has grown (a search calls it
// millions of times), nor a schedule builder once its working space has.
#include "alloc_counter.h"
#include "core/evaluate.h"
#include "core/schedule.h"
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

    void scheduleBuilderKeepsItsWorkingSpace()
    {
        // The interleaved order table and the DualPipeV weight-gradient queue live in the
        // builder, the ops in the schedule: building the same shapes again allocates nothing
        // and gives what a fresh builder gives.
        const ScheduleParams interleaved{Schedule::Interleaved1F1B, 4, 16, 3};
        const ScheduleParams dualPipe{Schedule::DualPipeV, 4, 16, 2};
        ScheduleBuilder builder;
        PipelineSchedule a, b;
        builder.build(interleaved, a);
        builder.build(dualPipe, b);
        const long before = g_allocations.load();
        for (int i = 0; i < 50; ++i) {
            builder.build(interleaved, a);
            builder.build(dualPipe, b);
        }
        QCOMPARE(g_allocations.load() - before, 0L);
        for (const auto& [params, built] : {std::pair{interleaved, &a}, std::pair{dualPipe, &b}}) {
            const PipelineSchedule fresh = buildSchedule(params);
            QCOMPARE(built->ops.size(), fresh.ops.size());
            QVERIFY(built->stage_offset == fresh.stage_offset);
            for (std::size_t i = 0; i < fresh.ops.size(); ++i) {
                const PipelineOp &x = built->ops[i], &y = fresh.ops[i];
                QVERIFY(x.device == y.device && x.microbatch == y.microbatch &&
                        x.chunk == y.chunk && x.kind == y.kind);
            }
        }
    }
};

QTEST_APPLESS_MAIN(TestNoAlloc)
#include "test_noalloc.moc"
