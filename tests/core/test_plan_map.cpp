// SPDX-License-Identifier: GPL-3.0-or-later
// The plan map against the plain search: each cell's best plan is the best of the unpinned
// search's plans with that TP and PP, and cells no plan can run carry the validate() rule that
// the divisibility arithmetic predicts.
#include "core/plan_map.h"
#include "core/search.h"
#include "core/validate.h"
#include "test_scenarios.h"

#include <QTest>

#include <atomic>

using namespace paralens;
using namespace paralens::testmodels;

namespace {

/// A 0.5B-parameter GQA model (16 heads, 4 KV heads) on 16 A100s: small enough to search
/// whole, big enough not to fit everywhere.
Scenario tinyProblem()
{
    ModelSpec m;
    m.name = "tiny-dense";
    m.layers = 8;
    m.hidden = 2048;
    m.heads = 16;
    m.kv_heads = 4;
    m.ffn_hidden = 5632;
    m.vocab = 32000;
    Scenario s = scenario(m, a100_80gb(), 1, 1, 16, 64, 2048);
    s.cluster.gpu.memory_gib = 8; // so that some cells fit and some do not
    return s;
}

} // namespace

class TestPlanMap : public QObject
{
    Q_OBJECT
private slots:
    void axesAreTheDivisorsTheGpusAllow()
    {
        const Scenario s = tinyProblem();
        // 16 GPUs, scale-up domain 8: TP up to 16; PP up to the 8 layers.
        QCOMPARE(planMapTpAxis(s), (std::vector<int>{1, 2, 4, 8, 16}));
        QCOMPARE(planMapPpAxis(s), (std::vector<int>{1, 2, 4, 8}));
    }

    void eachCellIsTheSearchsBestWithThatTpAndPp()
    {
        const Scenario s = tinyProblem();
        PlanMapOptions o;
        o.rescore = false; // compare screened figures with the screened brute force below
        const PlanMap map = planMap(s, o);
        QCOMPARE(map.cells.size(), map.tp.size() * map.pp.size());

        SearchSpace all;
        all.base = s;
        all.max_tp = 16;
        SearchOptions so;
        so.top_k = 1'000'000; // every fitting plan
        so.rescore = false;
        const SearchResult r = search(all, so);
        QVERIFY(r.results.size() == r.feasible);
        QVERIFY(r.feasible > 0);
        int withPlan = 0, without = 0;
        for (const PlanMapCell& c : map.cells) {
            const SearchPlan* best = nullptr; // results are best first
            std::uint64_t fitting = 0;
            for (const SearchPlan& p : r.results)
                if (p.parallel.tp == c.tp && p.parallel.pp == c.pp) {
                    ++fitting;
                    if (!best)
                        best = &p;
                }
            QCOMPARE(c.feasible, fitting);
            QCOMPARE(c.best.has_value(), best != nullptr);
            if (!best) {
                QVERIFY(!c.rule.empty());
                QVERIFY(!c.reason.empty());
                ++without;
                continue;
            }
            ++withPlan;
            QVERIFY(c.rule.empty());
            QCOMPARE(c.best->tokens_per_second, best->tokens_per_second);
            QCOMPARE(c.best->peak_bytes, best->peak_bytes);
            QCOMPARE(c.best->parallel.tp, c.tp);
            QCOMPARE(c.best->parallel.pp, c.pp);
        }
        QVERIFY(withPlan > 0);
        QVERIFY(without > 0);
        // The map's best cell is the search's best plan.
        QVERIFY(map.best.has_value());
        QCOMPARE(map.cells[*map.best].best->tokens_per_second, r.results.front().tokens_per_second);
    }

    void cellsThatCannotRunNameTheBrokenRule()
    {
        const Scenario s = tinyProblem();
        const PlanMap map = planMap(s);
        // TP 8 and 16 do not divide the 4 KV heads (Megatron splits them over TP).
        const PlanMapCell* tp8 = map.at(8, 1);
        QVERIFY(tp8);
        QVERIFY(!tp8->best);
        QCOMPARE(tp8->evaluated, std::uint64_t(0));
        QCOMPARE(tp8->rule, std::string("tp_divides_kv_heads"));
        QCOMPARE(map.at(16, 2)->rule, std::string("tp_divides_kv_heads"));
        // TP 4 × PP 8 = 32 GPUs of 16: no DP makes the product.
        QCOMPARE(map.at(4, 8)->rule, std::string("gpus_product"));
        // The reasons are validate()'s own sentences for that plan.
        Scenario bad = s;
        bad.parallel.tp = 8;
        bad.parallel.dp = 2;
        bad.parallel.sequence_parallel = true;
        bool found = false;
        for (const ValidationError& e : validate(bad))
            found = found || e.message == tp8->reason;
        QVERIFY(found);
    }

    void aCellWhosePlansDoNotFitSaysSo()
    {
        Scenario s = tinyProblem();
        s.cluster.gpu.memory_gib = 1; // 0.5B params × 18 B / 16 GPUs alone are ~0.6 GB
        const PlanMap map = planMap(s);
        const PlanMapCell* c = map.at(1, 1);
        QVERIFY(c && !c->best);
        QVERIFY(c->evaluated > 0);
        QCOMPARE(c->rule, std::string("does_not_fit"));
        QVERIFY(QString::fromStdString(c->reason).contains("1 GiB"));
    }

    void aCancelledMapStopsEarly()
    {
        std::atomic<bool> cancel{true};
        PlanMapOptions o;
        o.cancel = &cancel;
        const PlanMap map = planMap(tinyProblem(), o);
        QVERIFY(map.cancelled);
        QVERIFY(!map.best);
        for (const PlanMapCell& c : map.cells)
            QVERIFY(!c.best);
    }

    /// The third axis: each cell at a fixed value is the best of the unpinned search's fitting
    /// plans with that TP, PP and value (an independent filter over the whole search), for
    /// every axis the map offers.
    void aFixedAxisCellIsTheSearchsBestAtThatValue_data()
    {
        QTest::addColumn<int>("axis");
        QTest::addColumn<int>("value");
        QTest::newRow("micro-batch 2") << int(PlanMapAxis::MicroBatch) << 2;
        QTest::newRow("ZeRO 3") << int(PlanMapAxis::Zero) << 3;
        QTest::newRow("recompute full") << int(PlanMapAxis::Recompute) << int(Recompute::Full);
        QTest::newRow("v 2") << int(PlanMapAxis::VirtualStages) << 2;
        QTest::newRow("CP 2") << int(PlanMapAxis::Cp) << 2;
    }
    void aFixedAxisCellIsTheSearchsBestAtThatValue()
    {
        QFETCH(int, axis);
        QFETCH(int, value);
        const Scenario s = tinyProblem();
        PlanMapOptions o;
        o.rescore = false;
        o.fixed = {PlanMapAxis(axis), value};
        const PlanMap map = planMap(s, o);
        QCOMPARE(map.fixed, o.fixed);

        SearchSpace all;
        all.base = s;
        all.max_tp = 16;
        SearchOptions so;
        so.top_k = 1'000'000;
        so.rescore = false;
        const SearchResult r = search(all, so);
        QVERIFY(r.results.size() == r.feasible);
        // The value, read off each plan by hand (not through the map's own helpers).
        const auto valueOf = [&](const SearchPlan& p) {
            switch (PlanMapAxis(axis)) {
            case PlanMapAxis::MicroBatch:
                return p.training.micro_batch;
            case PlanMapAxis::Zero:
                return p.parallel.zero;
            case PlanMapAxis::Recompute:
                return int(p.training.recompute);
            case PlanMapAxis::VirtualStages:
                return p.parallel.schedule == Schedule::Interleaved1F1B ||
                               p.parallel.schedule == Schedule::ZBV ||
                               p.parallel.schedule == Schedule::DualPipeV
                           ? p.parallel.virtual_stages
                           : 1;
            case PlanMapAxis::Cp:
                return p.parallel.cp;
            case PlanMapAxis::None:
                break;
            }
            return -1;
        };
        int withPlan = 0, without = 0;
        std::uint64_t slice = 0;
        for (const PlanMapCell& c : map.cells) {
            const SearchPlan* best = nullptr;
            std::uint64_t fitting = 0;
            for (const SearchPlan& p : r.results)
                if (p.parallel.tp == c.tp && p.parallel.pp == c.pp && valueOf(p) == value) {
                    ++fitting;
                    if (!best)
                        best = &p;
                }
            slice += fitting;
            QCOMPARE(c.feasible, fitting);
            QCOMPARE(c.best.has_value(), best != nullptr);
            if (!best) {
                QVERIFY(!c.rule.empty());
                ++without;
                continue;
            }
            ++withPlan;
            QCOMPARE(valueOf(*c.best), value);
            QCOMPARE(c.best->tokens_per_second, best->tokens_per_second);
        }
        QVERIFY(withPlan > 0);
        QVERIFY(without > 0);
        QVERIFY(slice < r.feasible); // a slice, not the whole cube
    }

    void fixedAxisValuesFollowTheProblem()
    {
        const Scenario s = tinyProblem(); // batch 64, 8 layers, seq 2048, 16 GPUs
        QCOMPARE(planMapAxisValues(s, PlanMapAxis::None), std::vector<int>{});
        QCOMPARE(planMapAxisValues(s, PlanMapAxis::MicroBatch),
                 (std::vector<int>{1, 2, 4, 8, 16, 32, 64}));
        QCOMPARE(planMapAxisValues(s, PlanMapAxis::Zero), (std::vector<int>{0, 1, 2, 3}));
        QCOMPARE(planMapAxisValues(s, PlanMapAxis::Recompute), (std::vector<int>{0, 1, 2}));
        // v: 1, then interleaved 2 .. 8 layers / 2 stages.
        QCOMPARE(planMapAxisValues(s, PlanMapAxis::VirtualStages), (std::vector<int>{1, 2, 3, 4}));
        // CP: divisors of 16 with 2048 a multiple of 2·cp.
        QCOMPARE(planMapAxisValues(s, PlanMapAxis::Cp), (std::vector<int>{1, 2, 4, 8, 16}));
        QCOMPARE(planMapAxisValueText(PlanMapAxis::Recompute, 1), std::string("selective"));
    }

    void aCellThatCannotRunAtTheFixedValueSaysWhy()
    {
        // v 2 needs a pipeline: no PP 1 cell runs, and the reason is the pipeline rule.
        PlanMapOptions o;
        o.fixed = {PlanMapAxis::VirtualStages, 2};
        const PlanMap map = planMap(tinyProblem(), o);
        const PlanMapCell* c = map.at(1, 1);
        QVERIFY(c && !c->best);
        QCOMPARE(c->evaluated, std::uint64_t(0));
        QVERIFY(!c->rule.empty());
        QVERIFY(c->rule != "no_runnable_plan");
    }

    void aPlanEditIsNotANewProblem()
    {
        const Scenario a = tinyProblem();
        Scenario b = a;
        b.parallel.tp = 2;
        b.parallel.dp = 8;
        b.training.micro_batch = 2;
        b.training.recompute = Recompute::Full;
        QVERIFY(samePlanMapProblem(a, b));
        b.gpus = 32;
        QVERIFY(!samePlanMapProblem(a, b));
        Scenario c = a;
        c.training.global_batch = 128;
        QVERIFY(!samePlanMapProblem(a, c));
    }
};

QTEST_APPLESS_MAIN(TestPlanMap)
#include "test_plan_map.moc"
