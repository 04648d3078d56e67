// SPDX-License-Identifier: GPL-3.0-or-later
// Context-parallel communication (cpComm, core/comm_time.h) against hand-computed alpha-beta
// cases for each exchange: Transformer Engine's p2p ring (Megatron), PyTorch's ring attention
// over all-gathered K/V (torchtitan), the exposed all-gather of Llama 3 §3.3.2 and Ulysses'
// all-to-alls; what of each hides under the attention blocks it runs alongside.

#include "core/comm_time.h"
#include "core/dims.h"
#include "core/framework.h"
#include "core/kernel_time.h"
#include "test_scenarios.h"

#include <QTest>

#include <cmath>

using namespace paralens;
using namespace paralens::testmodels;

namespace {

bool close(double a, double b)
{
    return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)) + 1e-300;
}

#define QVERIFY_CLOSE(a, b)                                                                        \
    QVERIFY2(                                                                                      \
        close((a), (b)),                                                                           \
        qPrintable(                                                                                \
            QString("%1 = %2, expected %3").arg(#a).arg((a), 0, 'g', 17).arg((b), 0, 'g', 17)))

// One node of eight H100-class GPUs: NVLink 450 GB/s × 0.80 achieved, 3 µs per hop.
constexpr double kNvlink = 450e9 * 0.80, kAlpha = 3e-6;

// Llama 3 8B (32 query heads, 8 K/V heads of 128), one 32768-token sequence per CP rank.
struct Case
{
    Scenario s;
    Dims d;
    Topology topo;
    ModelConstants k;
    AttentionSetup a;

    Case(int cp, Framework fw, CpComm comm = CpComm::Default)
    {
        s = scenario(llama3_8b(), h100_sxm(), 1, 1, 1, 1, 32768 * cp);
        s.parallel.cp = cp;
        s.parallel.cp_comm = comm;
        s.gpus = cp;
        s.training.framework = fw;
        s.training.recompute = Recompute::None;
        refresh();
    }
    void refresh()
    {
        d = dimsOf(s.model, ActivationShape::of(s), 1);
        topo = placeGroups(s.parallel, s.cluster);
        a = attentionSetup(s, conventions(s.training.framework, s.training.optimizer));
    }
    CommTimes run(const AttentionTimes& core) const
    {
        return cpComm(CommContext{&s, &d, &topo, &k, nullptr}, a, core);
    }
};

// K and V of one rank: 2 · 32768 tokens · width · 2 bytes.
constexpr double chunk(double width)
{
    return 2 * 32768 * width * 2;
}
constexpr double sendRecv(double bytes)
{
    return kAlpha + bytes / kNvlink;
}
// Ring all-gather / reduce-scatter of `total` bytes over n ranks.
constexpr double ringCollective(double total, int n)
{
    return (n - 1) * kAlpha + double(n - 1) / n * total / kNvlink;
}

AttentionTimes noCompute()
{
    return AttentionTimes{};
}

AttentionTimes uniform(double f, double b)
{
    AttentionTimes t;
    t.first_f = t.step_f = f;
    t.first_b = t.step_b = b;
    return t;
}

} // namespace

class TestCpComm : public QObject
{
    Q_OBJECT
private slots:
    void oneRankExchangesNothing()
    {
        Case c(1, Framework::Megatron);
        const CommTimes t = c.run(uniform(1, 2));
        QCOMPARE(t.forward + t.backward + t.hidden, 0.0);
    }

    void transformerEngineRing()
    {
        // cp = 4, K/V 1024 wide (GQA as is). Forward: 3 hops of one chunk. Backward: K/V,
        // then K/V with dK/dV (bf16) twice, then dK/dV alone.
        Case c(4, Framework::Megatron);
        const double kv = sendRecv(chunk(1024)), both = sendRecv(2 * chunk(1024));
        const CommTimes bare = c.run(noCompute());
        QVERIFY_CLOSE(bare.forward, 3 * kv);
        QVERIFY_CLOSE(bare.backward, kv + 2 * both + kv);
        QCOMPARE(bare.hidden, 0.0);
        // Blocks longer than any hop hide all of it.
        const CommTimes hidden = c.run(uniform(1, 1));
        QCOMPARE(hidden.forward + hidden.backward, 0.0);
        QVERIFY_CLOSE(hidden.hidden, 3 * kv + 2 * kv + 2 * both);
        // Each hop hides under one block only: half a hop of cover leaves half of each.
        const CommTimes half = c.run(uniform(kv / 2, kv / 2));
        QVERIFY_CLOSE(half.forward, 3 * kv / 2);
        QVERIFY_CLOSE(half.backward, kv / 2 + 2 * (both - kv / 2) + kv / 2);
        // Recomputation runs the forward and its exchange again in the backward: full, and
        // Megatron's selective recompute of the core attention.
        for (Recompute r : {Recompute::Full, Recompute::Selective}) {
            c.s.training.recompute = r;
            c.refresh();
            QVERIFY_CLOSE(c.run(noCompute()).backward, 3 * kv + kv + 2 * both + kv);
        }
    }

    void pytorchRingAttentionOverGatheredKv()
    {
        // torchtitan's default: K/V repeated to all 32 heads (4096 wide) and all-gathered
        // while the local block runs; the backward gathers again and hands each block's
        // fp32 dK/dV on under the next block, the last hop exposed.
        Case c(4, Framework::FSDP);
        const double gather = ringCollective(4 * chunk(4096), 4);
        const double dkv = sendRecv(2 * chunk(4096));
        const CommTimes bare = c.run(noCompute());
        QVERIFY_CLOSE(bare.forward, gather);
        QVERIFY_CLOSE(bare.backward, gather + 4 * dkv);
        // The local block covers the gather; the remote blocks cover all dK/dV hops but the
        // last.
        AttentionTimes t;
        t.first_f = gather;
        t.first_b = gather;
        t.step_b = dkv;
        const CommTimes covered = c.run(t);
        QCOMPARE(covered.forward, 0.0);
        QVERIFY_CLOSE(covered.backward, dkv);
        QVERIFY_CLOSE(covered.hidden, 2 * gather + 3 * dkv);
        // torchtitan's "alltoall" rotation is a p2p ring with trailing dK/dV.
        c.s.parallel.cp_comm = CpComm::P2P;
        c.refresh();
        const double kv = sendRecv(chunk(4096));
        const CommTimes ring = c.run(noCompute());
        QVERIFY_CLOSE(ring.forward, 3 * kv);
        QVERIFY_CLOSE(ring.backward, kv + 2 * (kv + dkv) + dkv + dkv);
        // torchtitan's selective (op-level) checkpointing saves the attention output: nothing
        // is exchanged again; full recompute repeats the forward ring.
        c.s.training.recompute = Recompute::Selective;
        c.refresh();
        QVERIFY_CLOSE(c.run(noCompute()).backward, ring.backward);
        c.s.training.recompute = Recompute::Full;
        c.refresh();
        QVERIFY_CLOSE(c.run(noCompute()).backward, 3 * kv + ring.backward);
    }

    void compiledRingIsExposed()
    {
        // torchtitan with torch.compile traces the ring into each compiled TransformerBlock,
        // where every functional collective is waited for at once (_maybe_wrap_tensor) and
        // Inductor keeps the order: the same gather and dK/dV hops as eager, none hidden, even
        // under blocks long enough to cover them.
        Case c(4, Framework::FSDP);
        c.s.training.compile = true;
        c.refresh();
        QVERIFY(c.a.exchange_exposed);
        const double gather = ringCollective(4 * chunk(4096), 4);
        const double dkv = sendRecv(2 * chunk(4096));
        const CommTimes t = c.run(uniform(1, 1));
        QVERIFY_CLOSE(t.forward, gather);
        QVERIFY_CLOSE(t.backward, gather + 4 * dkv);
        QCOMPARE(t.hidden, 0.0);
        // Inductor's fused merges: 10 B per element forward and backward.
        QCOMPARE(c.a.cp.merge_bytes_forward, 10.0);
        QCOMPARE(c.a.cp.merge_bytes_backward, 10.0);
        // Full recompute exchanges the forward again, also exposed.
        c.s.training.recompute = Recompute::Full;
        c.refresh();
        QVERIFY_CLOSE(c.run(uniform(1, 1)).backward, 2 * gather + 4 * dkv);
        // Megatron's fused kernels do not read training.compile: its ring still hides.
        Case m(4, Framework::Megatron);
        m.s.training.compile = true;
        m.refresh();
        QVERIFY(!m.a.exchange_exposed);
        QCOMPARE(m.run(uniform(1, 1)).forward, 0.0);
    }

    void llama3AllGatherIsExposed()
    {
        // Transformer Engine's all_gather (Llama 3 §3.3.2): gathered before the attention,
        // again for the backward, dK/dV reduce-scattered in bf16; nothing hides.
        Case c(8, Framework::Megatron, CpComm::AllGather);
        const double gather = ringCollective(8 * chunk(1024), 8);
        const CommTimes t = c.run(uniform(1, 1));
        QVERIFY_CLOSE(t.forward, gather);
        QVERIFY_CLOSE(t.backward, 2 * gather);
        QCOMPARE(t.hidden, 0.0);
    }

    void ulyssesAllToAll()
    {
        // Q (4096 wide), K, V (1024) and the output (4096) forward, their gradients backward;
        // an NVLink all-to-all of a rank's B bytes moves (n − 1)/n of them in n − 1 steps.
        Case c(8, Framework::DeepSpeed);
        const auto a2a = [](double width) {
            const double bytes = 32768 * width * 2;
            return 7 * kAlpha + 7.0 / 8 * bytes / kNvlink;
        };
        const double expected = 2 * a2a(4096) + 2 * a2a(1024);
        const CommTimes t = c.run(uniform(1, 1));
        QVERIFY_CLOSE(t.forward, expected);
        QVERIFY_CLOSE(t.backward, expected);
        QCOMPARE(t.hidden, 0.0);
    }
};

QTEST_APPLESS_MAIN(TestCpComm)
#include "test_cp_comm.moc"
