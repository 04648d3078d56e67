// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/comm_cost.h"
#include "core/pipeline_cost.h"
#include "core/topology.h"
#include "test_scenarios.h"

#include <QTest>

#include <array>
#include <cmath>
#include <optional>

using namespace paralens;
using namespace paralens::testmodels;

namespace {
bool close(double a, double b, double rel = 1e-9)
{
    return std::abs(a - b) <= rel * std::abs(b);
}

class FixedProfile : public MeasuredPerformance
{
public:
    std::optional<double> collectiveSeconds(Collective c, int, Span, double) const override
    {
        if (c == Collective::AllReduce)
            return 0.125;
        return std::nullopt;
    }
    std::optional<double> gemmEfficiency(double, double, double, bool) const override
    {
        return std::nullopt;
    }
    std::optional<double> hbmGbps() const override { return std::nullopt; }
};
} // namespace

class TestTopology : public QObject
{
    Q_OBJECT
private slots:
    void megatronRankOrder()
    {
        // tp-cp-ep-dp-pp: TP fastest. tp 2, cp 2, dp 2, pp 2 → 16 ranks; 13 = 0b1101.
        ParallelPlan p;
        p.tp = 2;
        p.cp = 2;
        p.dp = 2;
        p.pp = 2;
        const auto c = rankCoordinates(p, h100_sxm(), 13);
        QCOMPARE(c.tp, 1);
        QCOMPARE(c.cp, 0);
        QCOMPARE(c.dp, 1);
        QCOMPARE(c.pp, 1);
        QCOMPARE(c.node, 1); // 8 GPUs per node
        // EP carved out of DP×CP: index (cp + cp_size·dp) mod ep.
        p.ep = 2;
        QCOMPARE(rankCoordinates(p, h100_sxm(), 13).ep, 0); // cp 0 + 2·1 = 2 → 0
        QCOMPARE(rankCoordinates(p, h100_sxm(), 2).ep, 1);  // cp 1 → 1
        // Every rank maps to a distinct coordinate.
        std::array<int, 16> seen{};
        for (int r = 0; r < 16; ++r) {
            const auto x = rankCoordinates(p, h100_sxm(), r);
            ++seen[std::size_t(x.tp + 2 * (x.cp + 2 * (x.dp + 2 * x.pp)))];
        }
        for (int n : seen)
            QCOMPARE(n, 1);
    }

    void groupSpans()
    {
        ParallelPlan p;
        p.tp = 8;
        p.dp = 4;
        p.pp = 2;
        Topology t = placeGroups(p, h100_sxm());
        QVERIFY(t.tp.span == Span::ScaleUp && !t.tp.crosses_nodes);
        QCOMPARE(t.tp.per_node, 8);
        QVERIFY(t.dp.span == Span::ScaleOut && t.dp.crosses_nodes);
        QCOMPARE(t.dp.per_node, 1);
        QCOMPARE(t.dp.nodes, 4);
        // TP 16 leaves an 8-GPU HGX node.
        p.tp = 16;
        p.dp = 1;
        QVERIFY(placeGroups(p, h100_sxm()).tp.span == Span::ScaleOut);
        // On NVL72 a TP 8 × DP 9 block is one NVLink domain across 18 trays of 4.
        p.tp = 8;
        p.dp = 9;
        p.pp = 2;
        t = placeGroups(p, gb200_nvl72());
        QVERIFY(t.tp.span == Span::ScaleUp);
        QVERIFY(t.tp.crosses_nodes); // 8 GPUs over two 4-GPU trays
        QVERIFY(t.dp.span == Span::ScaleUp);
        QVERIFY(t.pp.span == Span::ScaleOut);
        // DP 2 × TP 8 = 16 does not divide 72: some groups straddle two domains.
        p.dp = 2;
        p.pp = 9;
        QVERIFY(placeGroups(p, gb200_nvl72()).dp.span == Span::ScaleOut);
    }

    void ringCostsFollowBusFactors()
    {
        ClusterSpec c = h100_sxm();
        c.latencies.scale_up_us = 0;
        c.latencies.scale_out_us = 0;
        ModelConstants k;
        const LinkModel l = linkFor(placeGroup(8, 1, 8, c), c, k);
        const double B = 450e9 * k.scale_up_efficiency, S = 1e9;
        QVERIFY(close(collectiveSeconds(Collective::AllReduce, l, S), 2.0 * 7 / 8 * S / B));
        QVERIFY(close(collectiveSeconds(Collective::AllGather, l, S), 7.0 / 8 * S / B));
        QVERIFY(close(collectiveSeconds(Collective::ReduceScatter, l, S), 7.0 / 8 * S / B));
        QCOMPARE(collectiveSeconds(Collective::AllReduce, linkFor(placeGroup(1, 1, 8, c), c, k), S),
                 0.0);
        // DP over 8 nodes with 8 members per node: min(NVLink, 8 NICs) (docs/formulas.md §5).
        const LinkModel wide = linkFor(placeGroup(64, 1, 64, c), c, k);
        QVERIFY(wide.span == Span::ScaleOut);
        QVERIFY(close(wide.busBps(), std::min(B, 8 * 50e9 * k.scale_out_efficiency)));
        // One member per node: bound by one NIC.
        const LinkModel thin = linkFor(placeGroup(8, 8, 64, c), c, k);
        QVERIFY(close(thin.busBps(), 50e9 * k.scale_out_efficiency));
    }

    void allToAllAcrossNodes()
    {
        // docs/formulas.md §5: 2 × 8 H100, NIC 48 GB/s → busbw = 15/16 · 2 · 48 = 90 GB/s.
        ClusterSpec c = h100_sxm();
        c.latencies.scale_out_us = 0;
        ModelConstants k;
        k.scale_out_efficiency = 48.0 / 50.0;
        const LinkModel l = linkFor(placeGroup(16, 1, 16, c), c, k);
        const double S = 1e9, t = collectiveSeconds(Collective::AllToAll, l, S);
        QVERIFY(close(S / t * 15.0 / 16.0, 90e9));
    }

    void measuredReplacesFormula()
    {
        const ClusterSpec c = h100_sxm();
        const LinkModel l = linkFor(placeGroup(8, 1, 8, c), c, ModelConstants{});
        FixedProfile prof;
        QCOMPARE(collectiveSeconds(Collective::AllReduce, l, 1e6, &prof), 0.125);
        QVERIFY(collectiveSeconds(Collective::AllGather, l, 1e6, &prof) < 0.01); // falls back
    }

    void closedFormBubbles()
    {
        const int p = 4, m = 8;
        std::array<StageTimes, 4> st;
        st.fill(StageTimes{1.0, 2.0, 0.0});
        std::array<double, 4> inflight{};
        // 1F1B: overhead (p − 1)/m, fraction (p − 1)/(m + p − 1), step (m + p − 1)(tf + tb).
        PipelineCost c = pipelineCost(Schedule::OneF1B, m, 1, st, 0, inflight);
        QVERIFY(close(c.bubble_overhead, 3.0 / 8));
        QVERIFY(close(c.bubble_fraction, 3.0 / 11));
        QVERIFY(close(c.step_seconds, 11 * 3.0));
        for (int r = 0; r < p; ++r)
            QCOMPARE(inflight[std::size_t(r)], double(p - r));
        // GPipe: same bubble, m in flight everywhere.
        c = pipelineCost(Schedule::GPipe, m, 1, st, 0, inflight);
        QVERIFY(close(c.bubble_overhead, 3.0 / 8));
        QCOMPARE(inflight[3], double(m));
        // Interleaved: (p − 1)/(v·m); rank 0 holds p(1 + (p − 1)/(p·v)) (Korthikanti §4.2.3).
        c = pipelineCost(Schedule::Interleaved1F1B, m, 2, st, 0, inflight);
        QVERIFY(close(c.bubble_overhead, 3.0 / 16));
        QVERIFY(close(inflight[0], p * (1 + (p - 1.0) / (p * 2))));
        // ZB-H1: bubble (p − 1)(F + B − W).
        st.fill(StageTimes{1.0, 1.0, 1.0});
        c = pipelineCost(Schedule::ZBH1, m, 1, st, 0, inflight);
        QVERIFY(close(c.step_seconds - m * 3.0, 3 * (1.0 + 1.0 - 1.0)));
        // ZB-V with F = B = W: no bubble once full (ZB README); the simulated order keeps the
        // fill of the first chunk, (p − 1) chunk forwards of F/2, which does not grow with m.
        c = pipelineCost(Schedule::ZBV, m, 2, st, 0, inflight);
        QVERIFY(close(c.step_seconds, m * 3.0 + (p - 1) * 0.5));
        c = pipelineCost(Schedule::ZBV, 4 * m, 2, st, 0, inflight);
        QVERIFY(close(c.step_seconds, 4 * m * 3.0 + (p - 1) * 0.5));
        // The closed form states the ideal.
        c = closedFormPipelineCost(Schedule::ZBV, m, 2, st, 0, inflight);
        QVERIFY(close(c.step_seconds, m * 3.0));
        // p2p hops on the fill and drain: 2(p − 1).
        st.fill(StageTimes{1.0, 2.0, 0.0});
        // GPipe: the fill and drain cross 2(p − 1) links; 1F1B also waits for round trips in
        // its steady phase, so more is exposed, exactly the step time it adds.
        c = pipelineCost(Schedule::GPipe, m, 1, st, 0.01, inflight);
        QVERIFY(close(c.p2p_exposed_seconds, 2 * 3 * 0.01));
        c = pipelineCost(Schedule::OneF1B, m, 1, st, 0.01, inflight);
        QVERIFY(c.p2p_exposed_seconds > 2 * 3 * 0.01);
        QVERIFY(close(c.step_seconds, 11 * 3.0 + c.p2p_exposed_seconds));
        c = closedFormPipelineCost(Schedule::OneF1B, m, 1, st, 0.01, inflight);
        QVERIFY(close(c.p2p_exposed_seconds, 2 * 3 * 0.01));
    }
};

QTEST_APPLESS_MAIN(TestTopology)
#include "test_topology.moc"
