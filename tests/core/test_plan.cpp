// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/plan.h"

#include <QTest>

using namespace paralens;

class TestPlan : public QObject
{
    Q_OBJECT
private slots:
    void enumNamesRoundTrip()
    {
        for (auto s : {Schedule::GPipe, Schedule::OneF1B, Schedule::Interleaved1F1B, Schedule::ZBH1,
                       Schedule::ZBV, Schedule::DualPipeV})
            QVERIFY(parseSchedule(toString(s)) == s);
        QCOMPARE(toString(Schedule::Interleaved1F1B), std::string_view("interleaved-1f1b"));
        QVERIFY(!parseSchedule("2f2b").has_value());
        QVERIFY(!parseRecompute("").has_value());
    }
    void microbatchesFollowNarayanan()
    {
        TrainingSettings t;
        t.global_batch = 1536;
        t.micro_batch = 2;
        QCOMPARE(t.microbatches(8), 96); // m = B / (b * d)
    }
};

QTEST_APPLESS_MAIN(TestPlan)
#include "test_plan.moc"
