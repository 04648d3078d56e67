// SPDX-License-Identifier: GPL-3.0-or-later
// A plan moved to another GPU count: DP absorbs the change when it can; otherwise PP, CP and
// TP give way in that order, each change is listed, and the result validates. Oracles are
// hand-computed from the degree rules (tp·pp·cp·dp = gpus, heads divisible by TP, pp·v at
// most the layers).
#include "core/plan_rebalance.h"
#include "core/presets.h"
#include "core/scenario_io.h"
#include "core/validate.h"

#include <QTest>

using namespace paralens;

namespace {

QStringList changes(const Rebalanced& r)
{
    QStringList out;
    for (const std::string& c : r.changes)
        out << QString::fromStdString(c);
    return out;
}

} // namespace

class TestPlanRebalance : public QObject
{
    Q_OBJECT
private slots:
    void dpAbsorbsAWholeMultiple()
    {
        // Default: Llama 3 70B, TP 8 · PP 4 · DP 2 on 64 H100s. 128 GPUs: DP 128 / 32 = 4.
        const Rebalanced r = rebalanceForGpus(defaultScenario(), 128);
        QCOMPARE(r.scenario.gpus, 128);
        QCOMPARE(r.scenario.parallel.tp, 8);
        QCOMPARE(r.scenario.parallel.pp, 4);
        QCOMPARE(r.scenario.parallel.dp, 4);
        QCOMPARE(changes(r), QStringList{"DP 2 → 4"});
        QVERIFY(validate(r.scenario).empty());
    }

    void ppGivesWayWhenDpCannot()
    {
        // 64 → 8 GPUs with TP 8 · PP 4: 32 does not divide 8. PP takes the largest degree with
        // 8 · PP dividing 8, i.e. 1; DP = 8 / 8 = 1; interleaving needs PP >= 2, so 1F1B, v 1.
        const Scenario s = defaultScenario();
        QVERIFY(s.parallel.schedule == Schedule::Interleaved1F1B);
        const Rebalanced r = rebalanceForGpus(s, 8);
        QCOMPARE(r.scenario.parallel.tp, 8);
        QCOMPARE(r.scenario.parallel.pp, 1);
        QCOMPARE(r.scenario.parallel.dp, 1);
        QVERIFY(r.scenario.parallel.schedule == Schedule::OneF1B);
        QCOMPARE(r.scenario.parallel.virtual_stages, 1);
        const QStringList c = changes(r);
        QVERIFY2(c.contains("PP 4 → 1") && c.contains("DP 2 → 1"), qPrintable(c.join("; ")));
        QVERIFY(validate(r.scenario).empty());
    }

    void ppLowersOnlyAsFarAsNeeded()
    {
        // 64 → 16 with TP 8 · PP 4: PP 2 makes 8 · 2 = 16, DP 1.
        const Rebalanced r = rebalanceForGpus(defaultScenario(), 16);
        QCOMPARE(r.scenario.parallel.pp, 2);
        QCOMPARE(r.scenario.parallel.dp, 1);
        QCOMPARE(r.scenario.parallel.tp, 8);
        QVERIFY(validate(r.scenario).empty());
    }

    void tpGivesWayLast()
    {
        // 4 GPUs: PP 1 still leaves TP 8 > 4, so TP drops to 4 (divides 64 heads, 8 KV heads).
        const Rebalanced r = rebalanceForGpus(defaultScenario(), 4);
        QCOMPARE(r.scenario.parallel.pp, 1);
        QCOMPARE(r.scenario.parallel.tp, 4);
        QCOMPARE(r.scenario.parallel.dp, 1);
        QVERIFY(changes(r).contains("TP 8 → 4"));
    }

    void partialNodesKeepTheModelParallelDegrees()
    {
        // 60 GPUs are not whole 8-GPU nodes: TP 8 · PP 4 stay (32 does not divide 60, so DP
        // stays too) and validation names the count.
        const Rebalanced r = rebalanceForGpus(defaultScenario(), 60);
        QCOMPARE(r.scenario.gpus, 60);
        QCOMPARE(r.scenario.parallel.tp, 8);
        QCOMPARE(r.scenario.parallel.pp, 4);
        QCOMPARE(r.scenario.parallel.dp, 2);
        QVERIFY(r.changes.empty());
        QStringList rules;
        for (const ValidationError& e : validate(r.scenario))
            rules << QString::fromStdString(e.rule);
        QVERIFY(rules.contains("gpus_whole_nodes"));
        QVERIFY(rules.contains("gpus_product"));
    }

    void nonsenseCountChangesNothing()
    {
        const Scenario s = defaultScenario();
        const Rebalanced r = rebalanceForGpus(s, 0);
        QCOMPARE(r.scenario.gpus, s.gpus);
        QVERIFY(r.changes.empty());
    }
};

QTEST_APPLESS_MAIN(TestPlanRebalance)
#include "test_plan_rebalance.moc"
