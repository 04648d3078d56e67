// SPDX-License-Identifier: GPL-3.0-or-later
// Mixture-of-experts parallelism against hand-computed cases: how many GPUs and nodes a token's
// experts land on (counted by hand from the binomial coefficients), each dispatcher's volume
// (Megatron-Core token_dispatcher.py: allgather gathers every token, alltoall sends a copy per
// routed expert, DeepEP one per destination GPU and node), the expert-TP placement of MoE
// parallel folding (Megatron-Core parallel_state.py, order etp-ep-edp-pp), the load-imbalance
// defaults and the SM share overlapped communication costs (DeepSeek-V3 §3.2.2).

#include "core/comm_time.h"
#include "core/dims.h"
#include "core/evaluate.h"
#include "core/kernel_time.h"
#include "core/moe_dispatch.h"
#include "core/params.h"
#include "core/topology.h"
#include "core/validate.h"
#include "test_close.h"
#include "test_scenarios.h"

#include <QTest>

#include <algorithm>
#include <cmath>

using namespace paralens;
using paralens::testing::close;
using namespace paralens::testmodels;

namespace {

// NVLink 450 GB/s × 0.80 and NDR 50 GB/s × 0.92 per GPU (ModelConstants defaults).
constexpr double kNvlink = 450e9 * 0.80, kNic = 50e9 * 0.92;

// Mixtral 8x7B on one 8-GPU node (dp 8, ep 8), no latency terms: bandwidth only.
Scenario mixtralNode(MoeDispatcher dispatcher)
{
    Scenario s = scenario(mixtral8x7b(), h100_sxm(), 1, 1, 8, 8);
    s.cluster.latencies = {0, 0};
    s.parallel.ep = 8;
    s.parallel.moe_dispatcher = dispatcher;
    s.training.moe_load_imbalance = 1;
    return s;
}

// The EP communication of one MoE layer of `s`, beside `moe`'s compute.
CommTimes epOf(const Scenario& s, const LayerTimes& moe = {})
{
    static const ModelConstants k;
    const Dims d = dimsOf(s.model, ActivationShape::of(s), s.parallel.ep, s.parallel.expertTp());
    const Topology topo = placeGroups(s.parallel, s.cluster);
    return epComm(CommContext{&s, &d, &topo, &k, nullptr}, moe);
}

} // namespace

class TestMoe : public QObject
{
    Q_OBJECT
private slots:
    void destinationsCountedByHand()
    {
        MoeSpec m;
        m.experts = 8;
        m.top_k = 2;
        // One expert per GPU: two distinct experts are two GPUs.
        QVERIFY(close(expectedDestinations(m, 1), 2));
        // Every expert in one unit: always that unit.
        QVERIFY(close(expectedDestinations(m, 8), 1));
        // 4 experts on 2 GPUs of 2, top-2: a GPU is missed with C(2,2)/C(4,2) = 1/6.
        m.experts = 4;
        QVERIFY(close(expectedDestinations(m, 2), 2 * 5.0 / 6));
        // Group-limited: 8 experts in 2 groups of 4, one group per token, units of 2 experts:
        // 2 of the picked group's 4 experts, a unit of it missed with 1/6; 2 such units.
        m.experts = 8;
        m.groups = 2;
        m.group_top_k = 1;
        QVERIFY(close(expectedDestinations(m, 2), 2 * 5.0 / 6));
        // DeepSeek-V3 node-limited routing: 256 experts, 8 groups = 8 nodes, top-4 groups:
        // exactly 4 nodes (§4.2: at most 4); without the limit 8·(1 − C(224,8)/C(256,8)).
        m.experts = 256;
        m.top_k = 8;
        m.groups = 8;
        m.group_top_k = 4;
        QVERIFY(close(expectedDestinations(m, 32), 4));
        m.groups = m.group_top_k = 0;
        double miss = 1;
        for (int i = 0; i < 8; ++i)
            miss *= (224.0 - i) / (256.0 - i);
        QVERIFY(close(expectedDestinations(m, 32), 8 * (1 - miss)));
        QVERIFY(expectedDestinations(m, 32) > 5.2 && expectedDestinations(m, 32) < 5.3);
    }

    void frameworkDefaults()
    {
        ParallelPlan p;
        // Megatron-Core's TransformerConfig.moe_token_dispatcher_type defaults to allgather.
        QVERIFY(moeDispatcher(p, Framework::Megatron) == MoeDispatcher::AllGather);
        QVERIFY(moeDispatcher(p, Framework::DeepSpeed) == MoeDispatcher::AllToAll);
        QVERIFY(moeDispatcher(p, Framework::FSDP) == MoeDispatcher::AllToAll);
        p.moe_dispatcher = MoeDispatcher::DeepEP;
        QVERIFY(moeDispatcher(p, Framework::Megatron) == MoeDispatcher::DeepEP);

        TrainingSettings t;
        ModelConstants k;
        QCOMPARE(moeLoadImbalance(t, k), k.ep_load_imbalance); // dropless
        t.framework = Framework::DeepSpeed; // capacity_factor 1.0 drops the excess
        QCOMPARE(moeLoadImbalance(t, k), 1.0);
        t.moe_load_imbalance = 1.5;
        QCOMPARE(moeLoadImbalance(t, k), 1.5);

        // Expert TP follows TP unless set (--expert-tensor-parallel-size defaults to TP).
        p.tp = 4;
        QCOMPARE(p.expertTp(), 4);
        p.expert_tp = 1;
        QCOMPARE(p.expertTp(), 1);
    }

    void dispatcherVolumes()
    {
        // N = 4096 tokens of h = 4096, k = 2, inside one node (ep 8, one expert per GPU).
        const double row = 4096.0 * 2, N = 4096, ring = 7.0 / 8;
        // alltoall: each rank sends N·k rows, 7/8 of them leave it; dispatch + combine.
        const CommTimes a2a = epOf(mixtralNode(MoeDispatcher::AllToAll));
        QVERIFY(close(a2a.forward, 2 * ring * N * 2 * row / kNvlink));
        QVERIFY(close(a2a.backward, a2a.forward));
        // allgather: every rank gathers all 8·N rows, reduce-scatters them back: 4× alltoall
        // for top-2 of 8.
        const CommTimes ag = epOf(mixtralNode(MoeDispatcher::AllGather));
        QVERIFY(close(ag.forward, 2 * ring * 8 * N * row / kNvlink));
        QVERIFY(close(ag.forward, 4 * a2a.forward));
        // DeepEP inside a node: one copy per destination GPU; with one expert per GPU that is
        // one per routed expert, as alltoall.
        const CommTimes deep = epOf(mixtralNode(MoeDispatcher::DeepEP));
        QVERIFY(close(deep.forward, a2a.forward));
        // With 8 experts per GPU (64 experts, top-8) DeepEP sends a token once per GPU it
        // reaches, alltoall once per expert.
        Scenario fine = mixtralNode(MoeDispatcher::DeepEP);
        fine.model.moe.experts = 64;
        fine.model.moe.top_k = 8;
        double miss = 1;
        for (int i = 0; i < 8; ++i)
            miss *= (56.0 - i) / (64.0 - i);
        const double gpus = 8 * (1 - miss);
        QVERIFY(close(epOf(fine).forward, 2 * ring * N * gpus * row / kNvlink));
        fine.parallel.moe_dispatcher = MoeDispatcher::AllToAll;
        QVERIFY(close(epOf(fine).forward, 2 * ring * N * 8 * row / kNvlink));
    }

    void deepEpAcrossNodes()
    {
        // DeepSeek-V3 shapes on 64 GPUs = 8 nodes, ep 64, node-limited to 4 of the 8 nodes:
        // 3.5 remote nodes per token on average, each one NIC crossing of h = 7168 bf16.
        Scenario s = scenario(ModelSpec{}, h100_sxm(), 1, 1, 64, 64);
        s.model.hidden = 7168;
        s.model.moe = {256, 8, 2048, 1, 1, 0, 8, 4};
        s.cluster.latencies = {0, 0};
        s.parallel.ep = 64;
        s.parallel.moe_dispatcher = MoeDispatcher::DeepEP;
        s.training.moe_load_imbalance = 1;
        const double N = 4096, row = 7168.0 * 2;
        const CommTimes deep = epOf(s);
        QVERIFY(close(deep.forward, 2 * N * 3.5 * row / kNic));
        // alltoall sends all 8 copies, 56/64 of them over the NIC (7 copies per token).
        s.parallel.moe_dispatcher = MoeDispatcher::AllToAll;
        QVERIFY(close(epOf(s).forward, 2 * 56.0 / 64 * N * 8 * row / kNic));
    }

    void expertTensorParallel()
    {
        // tp 2 with SP: N/2 tokens per rank. ETP 2 (the default): after the all-to-all over
        // the 8 EP ranks (stride 2) an all-gather and a reduce-scatter over the ETP pair of
        // what arrived, 2·(N/2)·k rows; ETP 1 skips them and the EP group is 8 adjacent GPUs.
        Scenario s = scenario(mixtral8x7b(), h100_sxm(), 2, 1, 4, 8);
        s.cluster.latencies = {0, 0};
        s.parallel.ep = 4;
        s.parallel.moe_dispatcher = MoeDispatcher::AllToAll;
        s.training.moe_load_imbalance = 1;
        const double row = 4096.0 * 2, sent = 2048 * 2 * row;
        const double a2a = 3.0 / 4 * sent / kNvlink, gather = 0.5 * 2 * sent / kNvlink;
        QVERIFY(close(epOf(s).forward, 2 * a2a + 2 * gather));
        s.parallel.expert_tp = 1;
        s.parallel.ep = 8;
        QVERIFY(close(epOf(s).forward, 2 * 7.0 / 8 * sent / kNvlink));

        // Placement: EP members sit etp apart.
        Topology t = placeGroups(s.parallel, s.cluster);
        QCOMPARE(t.ep.stride, 1);
        QVERIFY(t.ep.span == Span::ScaleUp);
        QCOMPARE(t.edp.size, 1);
        QCOMPARE(rankCoordinates(s.parallel, s.cluster, 5).ep, 5);
        s.parallel.expert_tp = 0; // etp = tp = 2: ep 8 spans 16 GPUs, two nodes
        s.parallel.dp = 8;
        s.gpus = 16;
        t = placeGroups(s.parallel, s.cluster);
        QCOMPARE(t.ep.stride, 2);
        QVERIFY(t.ep.span == Span::ScaleOut);
        QCOMPARE(rankCoordinates(s.parallel, s.cluster, 5).ep, 2);

        // Expert weights split over etp·ep: 8 experts / (1·8) = one whole expert per GPU.
        ParallelPlan p;
        p.tp = 2;
        p.dp = 4;
        p.ep = 8;
        p.expert_tp = 1;
        StageLayers st;
        st.layers = st.moe_layers = 32;
        st.first = st.last = true;
        const ModelSpec m = mixtral8x7b();
        const double perExpert = 3.0 * 4096 * 14336;
        QVERIFY(close(stageParameters(m, p, st, 128).expert, 32 * perExpert));
        p.expert_tp = 2;
        p.ep = 4;
        QVERIFY(close(stageParameters(m, p, st, 128).expert, 32 * 8 * perExpert / 8));
        // Their optimizer states shard over the expert DP group, tp·dp/(etp·ep).
        p.expert_tp = 1;
        p.ep = 8;
        QCOMPARE(zeroShards(p).expert, 1.0);
        p.ep = 2;
        QCOMPARE(zeroShards(p).expert, 4.0);
    }

    void dispatcherReplacesMlpTpCollectives()
    {
        // allgather with ep 1 and etp = tp gathers exactly what SP's MLP all-gather does, so
        // the MoE layer's TP + EP communication equals a dense layer's TP communication.
        Scenario s = scenario(mixtral8x7b(), h100_sxm(), 2, 1, 1, 8);
        s.parallel.moe_dispatcher = MoeDispatcher::AllGather;
        const ModelConstants k;
        const Dims d = dimsOf(s.model, ActivationShape::of(s), 1);
        const Topology topo = placeGroups(s.parallel, s.cluster);
        const CommContext c{&s, &d, &topo, &k, nullptr};
        const CommTimes tp = tpComm(c), ep = epComm(c, LayerTimes{});
        QVERIFY(!moeLayerKeepsMlpTpComm(s));
        QVERIFY(close(0.5 * tp.forward + ep.forward, tp.forward));
        // Through the whole step: the MoE model's TP + EP exposure is the dense model's TP.
        Scenario dense = s;
        dense.model.moe = MoeSpec{};
        s.training.global_batch = dense.training.global_batch = 16;
        const Estimate em = evaluate(s), ed = evaluate(dense);
        QVERIFY(close(em.time.exposed.tp + em.time.exposed.ep, ed.time.exposed.tp, 1e-9));
        QVERIFY(close(em.time.exposed.tp, 0.5 * ed.time.exposed.tp, 1e-9));
        // Shared experts keep the MLP's TP collectives; so does a plan without SP.
        s.model.moe.shared_experts = 1;
        QVERIFY(moeLayerKeepsMlpTpComm(s));
        s.model.moe.shared_experts = 0;
        s.parallel.sequence_parallel = false;
        QVERIFY(moeLayerKeepsMlpTpComm(s));
    }

    void imbalanceStretchesExpertsAndAllToAll()
    {
        Scenario s = mixtralNode(MoeDispatcher::AllToAll);
        const CommTimes even = epOf(s);
        s.training.moe_load_imbalance = 1.5;
        QVERIFY(close(epOf(s).forward, 1.5 * even.forward));
        // allgather moves every token whatever the routing.
        s.parallel.moe_dispatcher = MoeDispatcher::AllGather;
        const double ag = epOf(s).forward;
        s.training.moe_load_imbalance = 1;
        QVERIFY(close(epOf(s).forward, ag));
        // The expert GEMMs of the busiest rank grow with it; the rest of the layer does not.
        const ModelConstants k;
        const KernelModel km = kernelModel(s, k, nullptr);
        const Dims d = dimsOf(s.model, ActivationShape::of(s), 8);
        const LayerTimes balanced =
            layerTimes(s.model, d, km, s.parallel, s.training, k, AttentionSetup{}, true);
        s.training.moe_load_imbalance = 2;
        const LayerTimes skewed =
            layerTimes(s.model, d, km, s.parallel, s.training, k, AttentionSetup{}, true);
        const LayerTimes dense =
            layerTimes(s.model, d, km, s.parallel, s.training, k, AttentionSetup{}, false);
        QVERIFY(skewed.f > balanced.f && skewed.f < 2 * balanced.f);
        QVERIFY(balanced.f > 0.9 * dense.f); // top-2 of 8 on 8 ranks: one expert's N·2 rows
    }

    void overlapCostsTheSmShare()
    {
        // Paired forward/backward chunks (DualPipeV or Megatron-Core's EP overlap): under
        // plenty of compute, the communication costs its 20/132 SM share; with none, all of it.
        Scenario s = mixtralNode(MoeDispatcher::AllToAll);
        const CommTimes bare = epOf(s);
        const double comm = bare.forward + bare.backward;
        s.parallel.moe_overlap = true;
        LayerTimes busy;
        busy.f = busy.b = busy.w = 1;
        const CommTimes hidden = epOf(s, busy);
        QVERIFY(close(hidden.forward + hidden.backward, 20.0 / 132 * comm));
        QVERIFY(close(hidden.hidden, (1 - 20.0 / 132) * comm));
        const CommTimes starved = epOf(s, LayerTimes{});
        QVERIFY(close(starved.forward + starved.backward, comm));
        // Compute shorter than the communication: the excess shows, at least the SM share.
        LayerTimes some;
        some.f = 0.25 * comm;
        some.b = 0.25 * comm;
        const CommTimes part = epOf(s, some);
        QVERIFY(close(part.forward + part.backward, 0.5 * comm));
    }

    void validationNamesTheFoldingRule()
    {
        Scenario s = scenario(mixtral8x7b(), h100_sxm(), 2, 1, 4, 64);
        s.parallel.ep = 8; // ep 8 does not divide dp 4 ...
        QVERIFY(!isRunnable(s));
        s.parallel.expert_tp = 1; // ... but etp 1 × ep 8 tiles tp 2 × dp 4
        QVERIFY(isRunnable(s));
        s.parallel.expert_tp = 3; // 3 does not divide 14336 nor 8
        const auto issues = validate(s);
        bool folding = false, ffn = false;
        for (const auto& i : issues) {
            folding = folding || i.rule == "etp_ep_divides_tp_cp_dp";
            ffn = ffn || i.rule == "etp_divides_expert_ffn";
        }
        QVERIFY(folding && ffn);
        s.parallel.expert_tp = 1;
        s.model.moe.groups = 3; // 3 does not divide 8 experts
        s.model.moe.group_top_k = 1;
        QVERIFY(!isRunnable(s));
        s.model.moe.groups = 4;
        QVERIFY(isRunnable(s));
    }

    void evaluateStaysFinite()
    {
        // Every dispatcher through the whole model, on one node and across nodes.
        for (MoeDispatcher m :
             {MoeDispatcher::Default, MoeDispatcher::AllGather, MoeDispatcher::AllToAll,
              MoeDispatcher::DeepEP, MoeDispatcher::HybridEP})
            for (int dp : {8, 32}) {
                Scenario s = scenario(mixtral8x7b(), h100_sxm(), 1, 1, dp, 256);
                s.parallel.ep = 8;
                s.parallel.expert_tp = 1;
                s.parallel.moe_dispatcher = m;
                const Estimate e = evaluate(s);
                QVERIFY(std::isfinite(e.time.step_seconds) && e.time.step_seconds > 0);
                QVERIFY(e.time.exposed.ep > 0);
            }
    }
};

QTEST_APPLESS_MAIN(TestMoe)
#include "test_moe.moc"
