// SPDX-License-Identifier: GPL-3.0-or-later
// What a plan may be: each schedule's traits as the papers describe them, the degrees a
// scenario can run with (hand-derived), withSchedule, and agreement with validate() (a plan
// is runnable exactly when its degrees are listed) and with the search (it enumerates exactly
// the listed plans, each of which validates).
#include "core/plan_options.h"
#include "core/search.h"
#include "core/validate.h"
#include "test_scenarios.h"

#include <QTest>

#include <algorithm>
#include <set>
#include <tuple>

using namespace paralens;
using namespace paralens::testmodels;

namespace {

std::vector<int> range(int from, int to)
{
    std::vector<int> v;
    for (int i = from; i <= to; ++i)
        v.push_back(i);
    return v;
}

bool has(const std::vector<int>& values, int v)
{
    return std::find(values.begin(), values.end(), v) != values.end();
}

/// A small MoE model whose degrees all have invalid values in 1..16: 16 layers, 8 heads,
/// 4 KV heads (TP 8 divides the heads but not the KV heads), 4 experts.
ModelSpec smallMoe()
{
    ModelSpec m = llama3(16, 512, 8, 1024);
    m.name = "small-moe";
    m.kv_heads = 4;
    m.vocab = 1000;
    m.moe.experts = 4;
    m.moe.top_k = 2;
    m.moe.expert_ffn_hidden = 512;
    return m;
}

/// 16 GPUs (two nodes of 8) with a batch that suits every schedule: m = 1024 / dp >= 64
/// micro-batches, at least 2·pp for any pp <= 16. DeepSpeed, so EP with TP needs no sequence
/// parallelism; seq 48 makes CP 16 fail (48 is not a multiple of 32).
Scenario agreementBase()
{
    Scenario s;
    s.model = smallMoe();
    s.cluster = h100_sxm(); // 8 GPUs per node, scale-up domain 8
    s.gpus = 16;
    s.training.seq_len = 48;
    s.training.global_batch = 1024;
    s.training.micro_batch = 1;
    s.training.framework = Framework::DeepSpeed;
    return s;
}

/// Listed the way the search enumerates: TP, then CP, PP, DP (derived), EP, then (schedule, v).
bool listedNested(const Scenario& s)
{
    const ParallelPlan& p = s.parallel;
    const int G = s.gpus, L = s.model.layers;
    return has(tpDegrees(s.model, G, s.cluster.scale_up_domain), p.tp) &&
           has(cpDegrees(s.training.seq_len, gpusLeft(G, p.tp)), p.cp) &&
           has(ppDegrees(L, gpusLeft(G, std::int64_t(p.tp) * p.cp), 1), p.pp) &&
           std::int64_t(p.tp) * p.cp * p.pp * p.dp == G &&
           has(dpDegrees(s.training.global_batch, s.training.micro_batch,
                         std::int64_t(p.tp) * p.cp * p.pp),
               p.dp) &&
           has(epDegrees(s.model, std::int64_t(p.dp) * p.cp), p.ep) &&
           has(virtualStageDegrees(p.schedule, p.pp, L), p.virtual_stages);
}

/// Listed the way the controls move one degree with the others held.
bool listedHeld(const Scenario& s)
{
    const ParallelPlan& p = s.parallel;
    const PlanDegrees d = planDegrees(s);
    return std::int64_t(p.tp) * p.cp * p.pp * p.dp == s.gpus && has(d.tp, p.tp) &&
           has(d.pp, p.pp) && has(d.cp, p.cp) && has(d.dp, p.dp) && has(d.ep, p.ep) &&
           has(d.virtual_stages, p.virtual_stages);
}

} // namespace

class TestPlanOptions : public QObject
{
    Q_OBJECT

private slots:
    void traitsAsThePapersDescribeThem_data()
    {
        QTest::addColumn<int>("schedule");
        QTest::addColumn<int>("chunks");
        QTest::addColumn<bool>("split");
        QTest::addColumn<bool>("vshape");
        QTest::addColumn<int>("perStage");
        QTest::addColumn<bool>("paired");
        const auto row = [](const char* name, Schedule s, ChunkRule c, bool split, bool v,
                            int perStage, bool paired) {
            QTest::newRow(name) << int(s) << int(c) << split << v << perStage << paired;
        };
        // Huang et al. 2019: every forward, then every backward, one stage per device.
        row("gpipe", Schedule::GPipe, ChunkRule::One, false, false, 0, false);
        // Narayanan et al. 2021 §2.2.1 (PipeDream-Flush): the same chunking, 1F1B order.
        row("1f1b", Schedule::OneF1B, ChunkRule::One, false, false, 0, false);
        // Narayanan et al. 2021 §2.2.2: v chunks per device, chunk c of device d is stage c·p + d;
        // Megatron-LM runs it with at least pp micro-batches.
        row("interleaved", Schedule::Interleaved1F1B, ChunkRule::Free, false, false, 1, false);
        // Qi et al. 2023 §3.1: 1F1B with the backward split into B and W, one chunk.
        row("zb-h1", Schedule::ZBH1, ChunkRule::One, true, false, 0, false);
        // Qi et al. 2023 §6: two chunks per worker in a V, B/W split.
        row("zb-v", Schedule::ZBV, ChunkRule::Two, true, true, 0, false);
        // DeepSeek-V3 §3.2.1 / DualPipe's dualpipev.py: the V of ZB-V, W ops, num_chunks >=
        // 2·num_ranks, forward and backward chunks overlapped.
        row("dualpipe-v", Schedule::DualPipeV, ChunkRule::Two, true, true, 2, true);
    }
    void traitsAsThePapersDescribeThem()
    {
        QFETCH(int, schedule);
        QFETCH(int, chunks);
        QFETCH(bool, split);
        QFETCH(bool, vshape);
        QFETCH(int, perStage);
        QFETCH(bool, paired);
        const ScheduleTraits t = traitsOf(Schedule(schedule));
        QCOMPARE(int(t.chunks), chunks);
        QCOMPARE(t.split_backward, split);
        QCOMPARE(t.layout == ChunkLayout::VShape, vshape);
        QCOMPARE(t.microbatches_per_stage, perStage);
        QCOMPARE(t.pairs_forward_backward, paired);
        QCOMPARE(usesChunks(Schedule(schedule)), ChunkRule(chunks) != ChunkRule::One);
    }

    void everyScheduleListedOnceWithItsName()
    {
        std::set<Schedule> seen(kAllSchedules.begin(), kAllSchedules.end());
        QCOMPARE(seen.size(), kAllSchedules.size());
        for (Schedule s : kAllSchedules)
            QVERIFY(parseSchedule(toString(s)) == s);
        QCOMPARE(toString(kAllSchedules.front()), std::string_view("gpipe"));
    }

    void chunksHopsAndMicrobatches()
    {
        // Interleaved with one chunk is plain 1F1B (Megatron runs the non-interleaved path).
        QVERIFY(effectiveSchedule(Schedule::Interleaved1F1B, 1) == Schedule::OneF1B);
        QVERIFY(effectiveSchedule(Schedule::Interleaved1F1B, 3) == Schedule::Interleaved1F1B);
        QVERIFY(effectiveSchedule(Schedule::ZBV, 2) == Schedule::ZBV);
        // Chunks a device runs: 1; v for interleaved; 2 for a V, whatever v says.
        QCOMPARE(chunksPerDevice(Schedule::OneF1B, 1), 1);
        QCOMPARE(chunksPerDevice(Schedule::ZBH1, 1), 1);
        QCOMPARE(chunksPerDevice(Schedule::Interleaved1F1B, 4), 4);
        QCOMPARE(chunksPerDevice(Schedule::Interleaved1F1B, 1), 1);
        QCOMPARE(chunksPerDevice(Schedule::ZBV, 2), 2);
        QCOMPARE(chunksPerDevice(Schedule::DualPipeV, 2), 2);
        // p2p sends per micro-batch per device: one per chunk whose output leaves the device
        // (1F1B: its one stage; interleaved v = 3: each of its three chunks feeds the next
        // device; a V: the way down and the way back up).
        QCOMPARE(p2pHopsPerMicrobatch(Schedule::GPipe, 1), 1);
        QCOMPARE(p2pHopsPerMicrobatch(Schedule::Interleaved1F1B, 3), 3);
        QCOMPARE(p2pHopsPerMicrobatch(Schedule::ZBV, 2), 2);
        // Least micro-batches: Megatron's interleaving needs m >= pp, DualPipeV m >= 2·pp.
        QCOMPARE(minMicrobatches(Schedule::Interleaved1F1B, 2, 4), std::int64_t(4));
        QCOMPARE(minMicrobatches(Schedule::Interleaved1F1B, 1, 4), std::int64_t(1));
        QCOMPARE(minMicrobatches(Schedule::DualPipeV, 2, 4), std::int64_t(8));
        QCOMPARE(minMicrobatches(Schedule::ZBV, 2, 4), std::int64_t(1));
        QCOMPARE(minMicrobatches(Schedule::OneF1B, 1, 8), std::int64_t(1));
        // The chunk rule: exactly 1, exactly 2, or any (interleaved v = 1 as 1F1B).
        QVERIFY(acceptsVirtualStages(Schedule::GPipe, 1));
        QVERIFY(!acceptsVirtualStages(Schedule::GPipe, 2));
        QVERIFY(acceptsVirtualStages(Schedule::ZBV, 2));
        QVERIFY(!acceptsVirtualStages(Schedule::DualPipeV, 3));
        QVERIFY(acceptsVirtualStages(Schedule::Interleaved1F1B, 7));
    }

    void withScheduleMakesVConsistent_data()
    {
        QTest::addColumn<int>("from");
        QTest::addColumn<int>("v");
        QTest::addColumn<int>("to");
        QTest::addColumn<int>("expected");
        const auto row = [](const char* name, Schedule from, int v, Schedule to, int expected) {
            QTest::newRow(name) << int(from) << v << int(to) << expected;
        };
        row("1f1b to interleaved takes the smallest v", Schedule::OneF1B, 1,
            Schedule::Interleaved1F1B, 2);
        row("interleaved keeps its v", Schedule::Interleaved1F1B, 4, Schedule::Interleaved1F1B, 4);
        row("a stale v >= 2 is kept by interleaved", Schedule::OneF1B, 5, Schedule::Interleaved1F1B,
            5);
        row("zb-v to interleaved", Schedule::ZBV, 2, Schedule::Interleaved1F1B, 2);
        row("interleaved to zb-h1", Schedule::Interleaved1F1B, 4, Schedule::ZBH1, 1);
        row("interleaved to dualpipe-v", Schedule::Interleaved1F1B, 4, Schedule::DualPipeV, 2);
        row("1f1b to zb-v", Schedule::OneF1B, 1, Schedule::ZBV, 2);
        row("dualpipe-v to gpipe", Schedule::DualPipeV, 2, Schedule::GPipe, 1);
        row("interleaved v = 1 to interleaved", Schedule::Interleaved1F1B, 1,
            Schedule::Interleaved1F1B, 2);
    }
    void withScheduleMakesVConsistent()
    {
        QFETCH(int, from);
        QFETCH(int, v);
        QFETCH(int, to);
        QFETCH(int, expected);
        ParallelPlan p;
        p.tp = 2;
        p.pp = 4;
        p.dp = 3;
        p.zero = 1;
        p.schedule = Schedule(from);
        p.virtual_stages = v;
        const ParallelPlan q = withSchedule(p, Schedule(to));
        QVERIFY(q.schedule == Schedule(to));
        QCOMPARE(q.virtual_stages, expected);
        QCOMPARE(q.tp, 2); // nothing else moves
        QCOMPARE(q.pp, 4);
        QCOMPARE(q.dp, 3);
        QCOMPARE(q.zero, 1);
    }

    void withScheduleGivesARunnablePlan()
    {
        // Llama 3 70B, TP 8 · PP 4 · DP 2 on 64 GPUs, m = 64: every schedule can run, so the
        // switch from any schedule to any other must leave a plan validate() accepts.
        Scenario s = scenario(llama3_70b(), h100_sxm(), 8, 4, 2, 128, 8192);
        for (Schedule from : kAllSchedules)
            for (Schedule to : kAllSchedules) {
                s.parallel = withSchedule(s.parallel, from);
                s.parallel = withSchedule(s.parallel, to);
                const auto errors = validate(s);
                QVERIFY2(errors.empty(), errors.empty() ? "" : errors.front().message.c_str());
            }
    }

    void tpDegreesDivideHeadsAndGpus()
    {
        // Llama 3 70B: 64 heads, 8 KV heads.
        const ModelSpec m = llama3_70b();
        QCOMPARE(tpDegrees(m, 64, 8), std::vector<int>({1, 2, 4, 8}));
        QCOMPARE(tpDegrees(m, 64, 4), std::vector<int>({1, 2, 4}));
        // 6 GPUs left: divisors 1, 2, 3, 6; 3 and 6 do not divide 8 KV heads.
        QCOMPARE(tpDegrees(m, 6, 8), std::vector<int>({1, 2}));
        QCOMPARE(tpDegrees(m, 0, 8), std::vector<int>({1})); // the others do not divide
        // 12 heads, 4 KV heads, 24 GPUs, domain 8: divisors <= 8 are 1 2 3 4 6 8; 3, 6 and 8
        // fail the 4 KV heads.
        ModelSpec g = m;
        g.heads = 12;
        g.kv_heads = 4;
        QCOMPARE(tpDegrees(g, 24, 8), std::vector<int>({1, 2, 4}));
    }

    void cpPpDpEpDegrees()
    {
        // CP: 2·cp divides the sequence. 100 tokens, 12 GPUs: 4 | 100 but 6, 8, 12, 24 do not.
        QCOMPARE(cpDegrees(100, 12), std::vector<int>({1, 2}));
        QCOMPARE(cpDegrees(8192, 8), std::vector<int>({1, 2, 4, 8}));
        // 48 tokens: 2·16 = 32 does not divide 48.
        QCOMPARE(cpDegrees(48, 16), std::vector<int>({1, 2, 4, 8}));
        // PP: pp·v <= layers. 80 layers, v = 5, 32 GPUs left: 16·5 = 80 fits, 32·5 does not.
        QCOMPARE(ppDegrees(80, 32, 5), std::vector<int>({1, 2, 4, 8, 16}));
        // 30 layers, v = 4, 12 GPUs: pp <= 7 of 1 2 3 4 6 12.
        QCOMPARE(ppDegrees(30, 12, 4), std::vector<int>({1, 2, 3, 4, 6}));
        // DP: divisors of B / b. 96 / 2 = 48.
        QCOMPARE(dpDegrees(96, 2, 8), std::vector<int>({1, 2, 3, 4, 6, 8, 12, 16, 24, 48}));
        QCOMPARE(dpDegrees(128, 1, 32), std::vector<int>({1, 2, 4, 8, 16, 32, 64, 128}));
        // ... and no more GPUs than a scenario holds (one million): 2^20 replicas of 1 GPU do
        // not fit, 2^19 do; with 500,000 GPUs per replica only 2 replicas fit.
        const std::vector<int> big = dpDegrees(1 << 20, 1, 1);
        QCOMPARE(big.back(), 1 << 19);
        QCOMPARE(dpDegrees(1 << 20, 1, 500000), std::vector<int>({1, 2}));
        QCOMPARE(dpDegrees(128, 0, 8), std::vector<int>({1})); // no micro-batch size yet
        // EP: divisors of the experts that divide DP·CP.
        const ModelSpec mix = mixtral8x7b();
        QCOMPARE(epDegrees(mix, 8), std::vector<int>({1, 2, 4, 8}));
        QCOMPARE(epDegrees(mix, 6), std::vector<int>({1, 2}));
        QCOMPARE(epDegrees(llama3_70b(), 64), std::vector<int>({1}));
    }

    void virtualStageDegreesFollowTheSchedule()
    {
        // Interleaved: 2 .. layers / pp (80 / 4 = 20), capped by max_v.
        QCOMPARE(virtualStageDegrees(Schedule::Interleaved1F1B, 4, 80), range(2, 20));
        QCOMPARE(virtualStageDegrees(Schedule::Interleaved1F1B, 4, 80, 6), range(2, 6));
        QCOMPARE(virtualStageDegrees(Schedule::Interleaved1F1B, 40, 80), std::vector<int>({2}));
        QVERIFY(virtualStageDegrees(Schedule::Interleaved1F1B, 41, 80).empty());
        QVERIFY(virtualStageDegrees(Schedule::Interleaved1F1B, 1, 80).empty()); // no pipeline
        // V schedules: exactly 2, with a pipeline and 2·pp layers.
        QCOMPARE(virtualStageDegrees(Schedule::ZBV, 4, 80), std::vector<int>({2}));
        QCOMPARE(virtualStageDegrees(Schedule::DualPipeV, 40, 80), std::vector<int>({2}));
        QVERIFY(virtualStageDegrees(Schedule::ZBV, 41, 80).empty());
        QVERIFY(virtualStageDegrees(Schedule::DualPipeV, 1, 80).empty());
        // One chunk: 1, pipeline or not.
        QCOMPARE(virtualStageDegrees(Schedule::OneF1B, 4, 80), std::vector<int>({1}));
        QCOMPARE(virtualStageDegrees(Schedule::GPipe, 1, 80), std::vector<int>({1}));
    }

    void planDegreesOfTheDefaultScenario()
    {
        // Llama 3 70B on 64 GPUs (domain 8), TP 8 PP 4 CP 1 DP 2, interleaved v = 5,
        // seq 8192, B = 128, b = 1.
        Scenario s = scenario(llama3_70b(), h100_sxm(), 8, 4, 2, 128, 8192);
        s.parallel.schedule = Schedule::Interleaved1F1B;
        s.parallel.virtual_stages = 5;
        const PlanDegrees d = planDegrees(s);
        QCOMPARE(d.tp, std::vector<int>({1, 2, 4, 8})); // gcd(64, 8) = 8, 64 / 4 = 16 left
        QCOMPARE(d.pp, std::vector<int>({1, 2, 4, 8})); // 64 / 8 = 8 left; 8·5 <= 80
        QCOMPARE(d.cp, std::vector<int>({1, 2}));       // 64 / 32 = 2 left
        QCOMPARE(d.dp, std::vector<int>({1, 2, 4, 8, 16, 32, 64, 128})); // 128 / 1
        QCOMPARE(d.ep, std::vector<int>({1}));                           // dense
        QCOMPARE(d.virtual_stages, range(2, 20));                        // 80 / 4
    }

    void validateAcceptsExactlyTheListedPlans()
    {
        // Every (tp, cp, pp, ep, schedule, v) in 1..8 × 1..16 × 1..16 × 1..4 × 6 × 1..4 on
        // 16 GPUs: runnable exactly when listed, both the way the search nests the degrees and
        // the way the controls hold the others. Two runnable spellings are never listed and
        // left out: TP above the scale-up domain (8 here), and interleaved with v = 1 (plain
        // 1F1B).
        Scenario s = agreementBase();
        int runnable = 0, checked = 0;
        for (int tp = 1; tp <= 8; ++tp)
            for (int cp = 1; cp <= 16; ++cp)
                for (int pp = 1; pp <= 16; ++pp)
                    for (int ep = 1; ep <= 4; ++ep)
                        for (Schedule sch : kAllSchedules)
                            for (int v = 1; v <= 4; ++v) {
                                if (sch == Schedule::Interleaved1F1B && v == 1)
                                    continue;
                                ParallelPlan& p = s.parallel;
                                p = ParallelPlan{};
                                p.tp = tp;
                                p.cp = cp;
                                p.pp = pp;
                                p.dp = std::max(1, s.gpus / (tp * cp * pp));
                                p.ep = ep;
                                p.schedule = sch;
                                p.virtual_stages = v;
                                const bool ok = isRunnable(s);
                                runnable += ok;
                                ++checked;
                                if (ok != listedNested(s) || ok != listedHeld(s)) {
                                    const auto e = validate(s);
                                    QFAIL(qPrintable(
                                        QStringLiteral("tp %1 cp %2 pp %3 ep %4 %5 v %6: "
                                                       "runnable %7, nested %8, held %9 (%10)")
                                            .arg(tp)
                                            .arg(cp)
                                            .arg(pp)
                                            .arg(ep)
                                            .arg(QString::fromUtf8(toString(sch).data(),
                                                                   qsizetype(toString(sch).size())))
                                            .arg(v)
                                            .arg(ok)
                                            .arg(listedNested(s))
                                            .arg(listedHeld(s))
                                            .arg(e.empty() ? QString()
                                                           : QString::fromStdString(e[0].rule))));
                                }
                            }
        QVERIFY(runnable > 100); // the box holds both kinds
        QVERIFY(checked - runnable > 10000);
    }

    void searchEnumeratesExactlyTheListedPlans()
    {
        // With memory to spare every runnable plan fits; a sample as large as the space keeps
        // them all. Their (tp, cp, pp, dp, ep, schedule, v) must be the listed ones, in the
        // search's canonical spelling (no pipeline: 1f1b only), and each must validate.
        SearchSpace sp;
        sp.base = agreementBase();
        sp.base.cluster.gpu.memory_gib = 1e5;
        sp.micro_batch = 1;
        sp.recompute = Recompute::None;
        sp.zero = 0;
        sp.offload_optimizer = false;
        sp.sequence_parallel = false;
        SearchOptions opt;
        opt.sample = 20000;
        opt.threads = 2;
        opt.rescore = false;
        opt.prune = false;
        const SearchResult r = search(sp, opt);
        QCOMPARE(r.feasible, r.evaluated);
        QVERIFY(r.feasible < 20000);
        QCOMPARE(std::uint64_t(r.sample.size()), r.feasible);

        using Key = std::tuple<int, int, int, int, int, int, int>;
        std::set<Key> found;
        for (const SearchPlan& p : r.sample) {
            const Scenario s = scenarioFor(sp, p);
            const auto errors = validate(s);
            QVERIFY2(errors.empty(), errors.empty() ? "" : errors.front().message.c_str());
            const ParallelPlan& q = p.parallel;
            found.insert({q.tp, q.cp, q.pp, q.dp, q.ep, int(q.schedule), q.virtual_stages});
        }
        QCOMPARE(std::uint64_t(found.size()), r.feasible); // one plan per combination

        std::set<Key> listed;
        const Scenario& b = sp.base;
        const int G = b.gpus;
        for (int tp : tpDegrees(b.model, G, b.cluster.scale_up_domain))
            for (int cp : cpDegrees(b.training.seq_len, G / tp))
                for (int pp : ppDegrees(b.model.layers, G / (tp * cp), 1)) {
                    const int dp = G / (tp * cp * pp);
                    for (int ep : epDegrees(b.model, dp * cp))
                        for (Schedule sch : kAllSchedules)
                            for (int v : virtualStageDegrees(sch, pp, b.model.layers))
                                if (pp > 1 || sch == Schedule::OneF1B)
                                    listed.insert({tp, cp, pp, dp, ep, int(sch), v});
                }
        QCOMPARE(found.size(), listed.size());
        QVERIFY(found == listed);
    }
};

QTEST_GUILESS_MAIN(TestPlanOptions)
#include "test_plan_options.moc"
