// SPDX-License-Identifier: GPL-3.0-or-later
// The step-time model (core/time.h and its steps) against hand-computed cases: a one-GPU dense
// step is 3 × forward FLOPs / (peak × efficiency) plus the optimizer; each dimension's
// collectives follow the ring alpha-beta model with the per-layer counts of Narayanan et al.
// 2021 and Korthikanti et al. 2022; and invariants: the breakdown adds up to the step,
// everything is non-negative, more bandwidth is never slower.

#include "core/comm_time.h"
#include "core/dims.h"
#include "core/dp_time.h"
#include "core/evaluate.h"
#include "core/framework.h"
#include "core/kernel_time.h"
#include "core/plan_options.h"
#include "core/time.h"
#include "core/validate.h"
#include "test_close.h"
#include "test_scenarios.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <vector>

using namespace paralens;
using paralens::testing::close;
using namespace paralens::testmodels;

namespace {

// A small Llama-style model (SwiGLU, RMSNorm, no biases, untied): per layer 4h² + 3·h·ffn + 2h
// parameters (q = kv = h), plus V·h embedding, V·h LM head and the final norm h.
constexpr double L = 2, H = 1024, FFN = 2048, V = 1024;
constexpr double kParams = L * (4 * H * H + 3 * H * FFN + 2 * H) + 2 * V * H + H;

ModelSpec tiny()
{
    ModelSpec m;
    m.name = "tiny";
    m.layers = int(L);
    m.hidden = std::int64_t(H);
    m.heads = 8;
    m.kv_heads = 8;
    m.ffn_hidden = std::int64_t(FFN);
    m.vocab = std::int64_t(V); // a multiple of 128: no padding at t = 1
    m.gated_mlp = true;
    m.tied_embeddings = false;
    return m;
}

// One GPU of 100 TFLOP/s BF16 whose HBM (1e18 B/s) makes every streaming kernel negligible.
Scenario oneGpu(Recompute recompute)
{
    ClusterSpec c;
    c.name = "test";
    c.gpu = {"test gpu", 80, 1e9, 100, 0};
    c.scale_up_gbps = 450;
    c.scale_out_gbps = 50;
    Scenario s;
    s.model = tiny();
    s.cluster = c;
    s.gpus = 1;
    s.training.seq_len = 1024;
    s.training.micro_batch = 1;
    s.training.global_batch = 1;
    s.training.recompute = recompute;
    s.training.flash_attention = true;
    return s;
}

// GEMMs at exactly 0.5 of the peak whatever their shape; long non-causal attention too; no
// kernel-launch cost (test_kernel_extras pins that term).
ModelConstants flatKernels()
{
    ModelConstants k;
    k.kernel_launch_seconds = 0;
    k.gemm_efficiency = 0.5;
    k.gemm_half_size = 0;
    k.gemm_tile_half_outputs = 0;
    k.gemm_latency_seconds = 0;
    k.attention_efficiency_ratio = 1;
    k.hbm_efficiency = 1;
    return k;
}

// What stepTime() needs, prepared as evaluate() prepares it, so time.h is called directly.
struct Step
{
    Scenario s;
    ModelConstants k;
    FrameworkConventions fw;
    std::vector<StageLayers> layers;
    std::vector<StageParams> params;
    std::vector<StageTimes> times;
    std::vector<double> inflight;
    Topology topo;
    Estimate est;

    Step(const Scenario& sc, const ModelConstants& kc)
        : s(sc), k(kc), fw(conventions(sc.training, sc.parallel))
    {
    }
    const TimeBreakdown& run()
    {
        const std::size_t p = std::size_t(s.parallel.pp);
        layers.assign(p, {});
        params.assign(p, {});
        times.assign(p, {});
        inflight.assign(p, 0);
        if (!splitLayers(s.model, s.parallel, fw.split, layers))
            qFatal("the test plan cannot be split");
        for (std::size_t r = 0; r < p; ++r)
            params[r] = stageParameters(s.model, s.parallel, layers[r], k.vocab_divisible_by);
        topo = placeGroups(s.parallel, s.cluster);
        StepInputs in;
        in.scenario = &s;
        in.framework = &fw;
        in.constants = &k;
        in.topology = &topo;
        in.layers = layers;
        in.params = params;
        stepTime(in, times, inflight, est);
        return est.time;
    }
};

// Forward FLOPs of the tiny model for N = 1024 tokens (s = 1024, b = 1), Korthikanti et al.
// 2022 App. A with GQA widths: QKV 2·N·h·3h, output 2·N·h², causal attention core 2·N·s·h
// (flash skips the masked half of 4·N·s·h), SwiGLU MLP 2·3·N·h·ffn; LM head 2·N·h·V.
constexpr double N = 1024, S = 1024;
constexpr double kCoreFlops = 2 * N * S * H;
constexpr double kGemmFlops = 2 * N * H * 3 * H + 2 * N * H * H + 6 * N * H * FFN;
constexpr double kHeadFlops = 2 * N * H * V;
constexpr double kFlopRate = 100e12 * 0.5;
// The flash forward runs its 1024 keys per row at 1024 / (1024 + 64) of the rate and the causal
// mask over 8 tiles of 128 keys at 0.92 · 8 / (8 + 2) (docs/formulas.md §2.5); the backward is
// 2.5× the FLOPs at 0.87 of the rate (FlashAttention-2 §4.1, FlashAttention-3 Fig. 6).
constexpr double kCoreForward = kCoreFlops / (kFlopRate * (1024.0 / 1088 * 0.92 * 8 / 10));
constexpr double kCoreBackward = 2.5 / 0.87 * kCoreForward;
// One step of the tiny model without recomputation: every GEMM three times, the core forward
// and backward.
constexpr double kStep =
    3 * (L * kGemmFlops + kHeadFlops) / kFlopRate + L * (kCoreForward + kCoreBackward);

// A node of eight H100-class GPUs: NVLink 450 GB/s × 0.80 achieved, 3 µs per hop.
constexpr double kNvlink = 450e9 * 0.80, kAlpha = 3e-6;

CommContext context(const Scenario& s, const Dims& d, const Topology& topo, const ModelConstants& k)
{
    return CommContext{&s, &d, &topo, &k, nullptr};
}

} // namespace

class TestTime : public QObject
{
    Q_OBJECT
private slots:
    void oneGpuDenseStep()
    {
        Step st(oneGpu(Recompute::None), flatKernels());
        const TimeBreakdown& t = st.run();
        // GEMM backward = input gradients + weight gradients = 2 × forward; the flash core's
        // backward 2.5 / 0.87 forwards.
        QVERIFY_CLOSE(t.step_seconds, kStep, 1e-6);
        QVERIFY_CLOSE(t.compute_seconds, kStep, 1e-6);
        QCOMPARE(t.bubble_seconds, 0.0);
        QCOMPARE(t.exposed.total(), 0.0);
        QCOMPARE(t.overlapped.total(), 0.0);
        QCOMPARE(t.critical_stage, 0);
    }

    void hostBoundLayersTakeTheirDispatchTime()
    {
        // Eager PyTorch: a layer's pass cannot end before the host has issued it. On a GPU so
        // fast that every kernel is free (1e9 TF/s, 1e18 B/s), the step is the host time of
        // every layer's passes: per micro-batch forward 10 + 1 + 6 + 5 kernels and calls (Megatron
        // Llama-style layer with flash attention: 4 GEMMs, the flash kernel, 6 fused element-wise
        // kernels, 5 rearranges) and backward 3 × 22 + 22 + 17 (recompute and checkpoint
        // function), at 12.5 µs each.
        Scenario s = oneGpu(Recompute::Full);
        s.cluster.gpu = {"test gpu", 80, 1e9, 1e9, 0};
        s.training.framework = Framework::Megatron;
        s.training.global_batch = 4; // four micro-batches
        ModelConstants k;
        k.kernel_launch_seconds = 12.5e-6;
        k.gemm_latency_seconds = 0; // the GPU's own per-GEMM time is not what this pins
        Step st(s, k);
        const TimeBreakdown& t = st.run();
        const double forward = 4 + 1 + 6 + 5, backward = 3 * forward + forward + 17;
        // The fused optimizer step is host-bound too: ⌈21 tensors / 36⌉ + ⌈kParams / (320 ·
        // 65,536)⌉ = 3 multi-tensor launches (core/optimizer_time.h).
        const double host = (4 * L * (forward + backward) + 3) * 12.5e-6;
        QVERIFY(t.step_seconds >= host);
        QVERIFY_CLOSE(t.step_seconds, host, 1e-3); // the LM head is negligible
        // Without launch costs the same step is free.
        k.kernel_launch_seconds = 0;
        Step free(s, k);
        QVERIFY(free.run().step_seconds < 1e-6);
    }

    void defaultGemmEfficiencyByFamily()
    {
        // The documented defaults (public cuBLAS / hipBLASLt figures): A100 0.75, MI300X 0.46,
        // B200 / GB200 / B300 0.66, anything else 0.70; FP8 GEMMs reach 0.9 of that share (0.8 on
        // MI300X). Matched on the name in any case. MI300X is H100's 0.70 scaled by SemiAnalysis'
        // Dec 2024 BF16 GEMM benchmark on the same shapes (~620 against ~720 TFLOP/s) and the peaks
        // (989 against 1,307 TF): 0.456.
        auto eff = [](const char* name, bool fp8) {
            GpuSpec g;
            g.name = name;
            return defaultGemmEfficiency(g, fp8);
        };
        QCOMPARE(eff("A100 SXM4 80GB", false), 0.75);
        QCOMPARE(eff("nvidia a100-pcie", false), 0.75);
        QCOMPARE(eff("AMD Instinct MI300X", false), 0.46);
        QVERIFY(std::abs(0.70 * 620 / 720 * 989 / 1307 - 0.46) < 0.005);
        QCOMPARE(eff("H100 SXM5", false), 0.70);
        QCOMPARE(eff("", false), 0.70);
        QCOMPARE(eff("H200", true), 0.9 * 0.70);
        // Blackwell: H100's 0.70 × OpenXLA's measured B200 / H100 BF16 rate on their largest
        // common shape (4 × 4096³: 1,690.7 / 793.1 TFLOP/s) × the peaks' ratio (989.4 / 2,250).
        QCOMPARE(eff("B200", false), 0.66);
        QCOMPARE(eff("B200 (GB200)", true), 0.9 * 0.66);
        QCOMPARE(eff("NVIDIA B300", false), 0.66);
        // GB200's datasheet peak (2,500 TF) counts a boost clock its GEMMs do not sustain: the
        // share applies to B200's 2,250 (Megatron-Bridge 25.11 measures GB200 at 1.009-1.029x
        // B200 on Llama 3 8B, same plan, where the peaks differ by 1.111).
        GpuSpec gb200;
        gb200.name = "B200 (GB200)";
        gb200.bf16_tflops = 2500;
        QCOMPARE(defaultGemmEfficiency(gb200, false), 0.66 * 2250 / 2500);
        QCOMPARE(defaultGemmEfficiency(gb200, true), 0.9 * 0.66 * 2250 / 2500);
        gb200.bf16_tflops = 2250; // a B200 at its own peak keeps the share
        QCOMPARE(defaultGemmEfficiency(gb200, false), 0.66);
        QVERIFY(std::abs(0.70 * 1690.7 / 793.1 * 989.4 / 2250 - 0.66) < 0.005);
        QCOMPARE(eff("MI300X", true), 0.80 * 0.46);
        // The FP8 shares from the same article's e4m3 figures: H100 ~1,280 of 1,979 against
        // ~720 of 989.5 in BF16; MI300X ~990 of 2,614.9 against ~620 of 1,307.4.
        QVERIFY(std::abs(1280.0 / 1979 / (720.0 / 989.5) - 0.9) < 0.015);
        QVERIFY(std::abs(990.0 / 2614.9 / (620.0 / 1307.4) - 0.80) < 0.005);
        QCOMPARE(eff("mi300 next to an A100", false), 0.75); // a100 anywhere wins

        // Without constants' override, the default is what the kernel model runs at: the
        // per-GPU figure is an 8192³ GEMM's, so on an A100 that GEMM takes 2·n³ / (312 TF ·
        // 0.75) plus the kernel's 5.45 µs.
        Scenario s = oneGpu(Recompute::None);
        s.cluster.gpu = {"A100 SXM4 80GB", 80, 2039, 312, 0};
        const KernelModel k = kernelModel(s, ModelConstants{}, nullptr);
        const double n = 8192;
        QVERIFY_CLOSE(k.gemm(n, n, n, true), 2 * n * n * n / (312e12 * 0.75) + 5.45e-6, 1e-12);
        QVERIFY_CLOSE(k.hbm, 2039e9 * 0.85, 1e-12);
    }

    void gemmShapeFollowsMeasuredH100Table()
    {
        // OpenXLA's measured H100 BF16 matmul table (xla/service/gpu/model/
        // matmul_interpolator_data.h, "sm_90"; batch b folded into M): TFLOP/s of shapes that
        // span the table's depth and width, against its 16384 × 4096 × 4096 point (793.1).
        struct Point
        {
            double M, N, K, tflops;
        };
        const Point ref{16384, 4096, 4096, 793.1};
        const Point points[] = {
            {4096, 4096, 256, 392.2},  {4096, 4096, 512, 543.1},  {4096, 4096, 2048, 738.7},
            {16384, 256, 256, 206.5},  {4096, 256, 4096, 376.2},  {8192, 1024, 1024, 598.2},
            {2048, 2048, 2048, 632.0}, {16384, 1024, 512, 542.0}, {8192, 2048, 4096, 783.2},
        };
        Scenario s = oneGpu(Recompute::None);
        s.cluster.gpu = {"H100 SXM5", 80, 3350, 989.4, 0};
        const KernelModel k = kernelModel(s, ModelConstants{}, nullptr);
        auto rate = [&](const Point& p) {
            return 2 * p.M * p.N * p.K / k.gemm(p.M, p.K, p.N, true);
        };
        double squares = 0;
        for (const Point& p : points) {
            const double model = rate(p) / rate(ref), measured = p.tflops / ref.tflops;
            const double err = std::log(model / measured);
            squares += err * err;
            QVERIFY2(std::abs(err) < 0.2, qPrintable(QString("%1 x %2 x %3: model %4, table %5")
                                                         .arg(p.M)
                                                         .arg(p.N)
                                                         .arg(p.K)
                                                         .arg(model)
                                                         .arg(measured)));
        }
        QVERIFY(std::sqrt(squares / std::size(points)) < 0.08);
        // Shallower is slower at equal size; and no shape is faster than the deep, wide limit.
        QVERIFY(k.gemm(8192, 512, 8192, true) / 512 > k.gemm(8192, 4096, 8192, true) / 4096);
        QVERIFY(rate({65536, 65536, 65536, 0}) < 989.4e12 * 0.70 / 0.97);
    }

    void recomputationRepeatsTheForward()
    {
        // Full: one more forward of every layer, not of the LM head.
        Step full(oneGpu(Recompute::Full), flatKernels());
        QVERIFY_CLOSE(full.run().step_seconds, kStep + L * (kGemmFlops / kFlopRate + kCoreForward),
                      1e-6);
        // Selective: the attention core once more per layer.
        Step sel(oneGpu(Recompute::Selective), flatKernels());
        QVERIFY_CLOSE(sel.run().step_seconds, kStep + L * kCoreForward, 1e-6);
    }

    void optimizerStreamsAdamBytes()
    {
        // HBM 1 TB/s: Adam streams 30 bytes per local parameter.
        Scenario s = oneGpu(Recompute::None);
        s.cluster.gpu.hbm_gbps = 1000;
        Step one(s, flatKernels());
        QVERIFY_CLOSE(one.run().optimizer_seconds, kParams * 30 / 1e12, 1e-12);
        QCOMPARE(one.est.time.offload_seconds, 0.0);

        // The distributed optimizer (ZeRO-1) over dp = 4 steps a quarter of them.
        s.parallel.dp = 4;
        s.parallel.zero = 1;
        s.gpus = 4;
        s.training.global_batch = 4;
        Step sharded(s, flatKernels());
        QVERIFY_CLOSE(sharded.run().optimizer_seconds, kParams / 4 * 30 / 1e12, 1e-12);

        // Offloaded (Megatron: fp32 gradients down, bf16 weights up over 25 GB/s PCIe, then
        // CPU Adam at 1e9 parameters/s); nothing left on the GPU.
        s = oneGpu(Recompute::None);
        s.cluster.pcie_gbps = 25;
        s.parallel.offload_optimizer = true;
        Step off(s, flatKernels());
        const TimeBreakdown& t = off.run();
        QCOMPARE(t.optimizer_seconds, 0.0);
        QVERIFY_CLOSE(t.offload_seconds, kParams * (4 + 2) / 25e9 + kParams / 1e9, 1e-12);
        // Both add to the step.
        QVERIFY_CLOSE(t.step_seconds, kStep + t.offload_seconds, 1e-6);
    }

    void tensorParallelCollectives()
    {
        // Llama-3-70B widths, t = 8 on one NVLink node, one 4096-token sequence: each
        // collective moves one b·s·h activation of 2-byte elements.
        Scenario s = scenario(llama3_70b(), h100_sxm(), 8, 1, 1, 1);
        s.parallel.sequence_parallel = false;
        s.training.recompute = Recompute::None;
        const ModelConstants k;
        const Dims d = dimsOf(s.model, ActivationShape::of(s), 1);
        const Topology topo = placeGroups(s.parallel, s.cluster);
        const double bytes = 4096.0 * 8192 * 2;
        // Ring all-reduce: 2(t − 1)/t of the buffer over the bus bandwidth; latency
        // min(2(t − 1), 4·log2 t) = 12 steps (NCCL's trees).
        const double allReduce = 2.0 * 7 / 8 * bytes / kNvlink + 12 * kAlpha;
        const CommTimes ar = tpComm(context(s, d, topo, k));
        QVERIFY_CLOSE(ar.forward, 2 * allReduce, 1e-12);  // two all-reduces per layer forward
        QVERIFY_CLOSE(ar.backward, 2 * allReduce, 1e-12); // and two backward
        QCOMPARE(ar.hidden, 0.0);

        // Full recompute runs the forward's two again in the backward.
        s.training.recompute = Recompute::Full;
        QVERIFY_CLOSE(tpComm(context(s, d, topo, k)).backward, 4 * allReduce, 1e-12);

        // SP: each all-reduce becomes an all-gather plus a reduce-scatter, (t − 1)/t of the
        // gathered tensor and t − 1 latency steps each; two re-gathers hide in the backward.
        s.training.recompute = Recompute::None;
        s.parallel.sequence_parallel = true;
        const Dims dsp = dimsOf(s.model, ActivationShape::of(s), 1);
        const double gather = 7.0 / 8 * bytes / kNvlink + 7 * kAlpha;
        const CommTimes sp = tpComm(context(s, dsp, topo, k));
        QVERIFY_CLOSE(sp.forward, 4 * gather, 1e-12);
        QVERIFY_CLOSE(sp.backward, 4 * gather, 1e-12);
        QVERIFY_CLOSE(sp.hidden, 2 * gather, 1e-12);

        // On the step: every layer, every micro-batch, on the critical path.
        s.parallel.sequence_parallel = false;
        s.training.global_batch = 2;
        const Estimate e = evaluate(s);
        QVERIFY_CLOSE(e.time.exposed.tp, 2 * 80 * 4 * allReduce, 1e-12);

        // One GPU: no TP traffic at all.
        s.parallel.tp = 1;
        const Topology solo = placeGroups(s.parallel, s.cluster);
        const Dims d1 = dimsOf(s.model, ActivationShape::of(s), 1);
        const CommTimes none = tpComm(context(s, d1, solo, k));
        QCOMPARE(none.forward + none.backward + none.hidden, 0.0);
    }

    void expertParallelAllToAll()
    {
        // Mixtral shapes, ep = 8 inside one node, the alltoall dispatcher: dispatch and combine
        // send N·k·h 2-byte elements each, the busiest rank 1.2 times that (the default load
        // imbalance); an all-to-all moves (ep − 1)/ep of them with ep − 1 latency steps.
        Scenario s = scenario(mixtral8x7b(), h100_sxm(), 1, 1, 8, 8);
        s.parallel.ep = 8;
        s.parallel.moe_dispatcher = MoeDispatcher::AllToAll;
        const ModelConstants k;
        const Dims d = dimsOf(s.model, ActivationShape::of(s), 8);
        const Topology topo = placeGroups(s.parallel, s.cluster);
        const double bytes = 4096.0 * 2 * 4096 * 2 * 1.2;
        const double a2a = 7 * kAlpha + 7.0 / 8 * bytes / kNvlink;
        const CommContext c = context(s, d, topo, k);
        const CommTimes ep = epComm(c, LayerTimes{});
        QVERIFY_CLOSE(ep.forward, 2 * a2a, 1e-12);
        QVERIFY_CLOSE(ep.backward, 2 * a2a, 1e-12);
        QCOMPARE(ep.hidden, 0.0);
        // DualPipeV pairs them with compute: hidden under a long enough layer, which loses the
        // communication kernels' SM share (20 of 132, DeepSeek-V3 §3.2.2) while they run.
        s.parallel.schedule = Schedule::DualPipeV;
        LayerTimes busy;
        busy.f = busy.b = 1;
        const CommTimes paired = epComm(c, busy);
        QVERIFY_CLOSE(paired.forward + paired.backward, 20.0 / 132 * 4 * a2a, 1e-12);
        QVERIFY_CLOSE(paired.hidden, (1 - 20.0 / 132) * 4 * a2a, 1e-12);
        // A dense model has no all-to-all.
        s.model = llama3_8b();
        const CommTimes dense = epComm(c, LayerTimes{});
        QCOMPARE(dense.forward + dense.backward, 0.0);
    }

    void pipelineHopAndTiedEmbeddings()
    {
        // pp = 2 inside one node, t = 2: one hop sends b·s·h/t 2-byte elements.
        Scenario s = scenario(gpt(8, 4096, 32), h100_sxm(), 2, 2, 1, 4, 2048);
        const ModelConstants k;
        const Dims d = dimsOf(s.model, ActivationShape::of(s), 1);
        const Topology topo = placeGroups(s.parallel, s.cluster);
        const CommContext c = context(s, d, topo, k);
        const double hop = kAlpha + 2048.0 * 4096 * 2 / 2 / kNvlink;
        const CommTimes pp = ppComm(c);
        QVERIFY_CLOSE(pp.forward, hop, 1e-12);
        QVERIFY_CLOSE(pp.backward, hop, 1e-12);
        QCOMPARE(pp.hidden, 0.0);
        // Tied embeddings: one all-reduce over the first and last stage of the V_pad·h/t fp32
        // gradient (V = 51,200 pads to 51,456 at t = 2); a pair: 2(2 − 1) latency steps.
        const double grad = 51456.0 * 4096 / 2 * 4;
        QVERIFY_CLOSE(tiedEmbeddingSeconds(c, 51456, 4), 2 * kAlpha + 2.0 * 1 / 2 * grad / kNvlink,
                      1e-12);
        // Under a V (ZB-V, DualPipeV) the embedding and the LM head are both on device 0 (Qi
        // et al. 2024; dualpipev.py): one matrix, no all-reduce between stages.
        for (Schedule v : {Schedule::ZBV, Schedule::DualPipeV}) {
            s.parallel = withSchedule(s.parallel, v);
            QCOMPARE(tiedEmbeddingSeconds(c, 51456, 4), 0.0);
        }
        s.parallel = withSchedule(s.parallel, Schedule::Interleaved1F1B); // looped: still there
        QVERIFY_CLOSE(tiedEmbeddingSeconds(c, 51456, 4), 2 * kAlpha + 2.0 * 1 / 2 * grad / kNvlink,
                      1e-12);
        s.parallel = withSchedule(s.parallel, Schedule::OneF1B);
        s.model.tied_embeddings = false;
        QCOMPARE(tiedEmbeddingSeconds(c, 51456, 4), 0.0);
    }

    // NCCL "uses the minimal number of SMs to achieve the performance of the platform [...] on
    // DGX with 8 NICs and a top speed of 190 GB/s, it would use 16 SMs" (NVIDIA/nccl#689): an
    // all-reduce at 190 GB/s of bus bandwidth holds 16 of an A100's 108 SMs while it moves data,
    // all 32 channels' CTAs (MAXCHANNELS) while it waits out its latency steps, and never more
    // than 32 however fast the link.
    void ncclHoldsSmsForItsBandwidth()
    {
        LinkModel l;
        l.ranks = 16;
        l.span = Span::ScaleUp;
        l.scale_up_Bps = 190e9;
        const double bytes = 8e9, bus = 2.0 * 15 / 16 * bytes / 190e9;
        QVERIFY_CLOSE(ncclSmSeconds(Collective::AllReduce, l, bytes, bus, 108), 16 * bus / 108,
                      1e-12);
        // Ten microseconds of latency on top: 32 CTAs spin through them.
        QVERIFY_CLOSE(ncclSmSeconds(Collective::AllReduce, l, bytes, bus + 10e-6, 108),
                      (16 * bus + 32 * 10e-6) / 108, 1e-12);
        // NVLink 5 at 720 GB/s would want 61 CTAs: NCCL has 32 channels.
        l.scale_up_Bps = 720e9;
        const double fast = 2.0 * 15 / 16 * bytes / 720e9;
        QVERIFY_CLOSE(ncclSmSeconds(Collective::AllReduce, l, bytes, fast, 148), 32 * fast / 148,
                      1e-12);
        // Never more than the whole GPU, nothing for a group of one.
        QVERIFY(ncclSmSeconds(Collective::AllReduce, l, bytes, fast, 16) <= fast);
        l.ranks = 1;
        QCOMPARE(ncclSmSeconds(Collective::AllReduce, l, bytes, fast, 148), 0.0);
        // The GPUs' SMs (whitepapers; CUDA's multiProcessorCount on a B200).
        QCOMPARE(streamingMultiprocessors({"A100-SXM4-80GB", 80, 2039, 312, 0}), 108.0);
        QCOMPARE(streamingMultiprocessors({"H100 SXM5 80GB", 80, 3350, 989, 1979}), 132.0);
        QCOMPARE(streamingMultiprocessors({"H100 PCIe", 80, 2000, 756, 1513}), 114.0);
        QCOMPARE(streamingMultiprocessors({"B200", 180, 8000, 2250, 4500}), 148.0);
        QCOMPARE(streamingMultiprocessors({"MI300X", 192, 5300, 1307, 2615}), 304.0);
    }

    void dataParallelReduction()
    {
        // dp = 8 on one node, plain DDP: the stage's fp32 gradients are all-reduced once per
        // step, 2(d − 1)/d of 4·P bytes, 12 latency steps.
        Scenario s = oneGpu(Recompute::None);
        s.cluster = h100_sxm();
        s.parallel.dp = 8;
        s.gpus = 8;
        s.training.global_batch = 8;
        const double allReduce = 2.0 * 7 / 8 * (4 * kParams) / kNvlink + 12 * kAlpha;
        Step exposed(s, ModelConstants{});
        exposed.fw.overlap_grad_reduce = false;
        const TimeBreakdown& t = exposed.run();
        QVERIFY_CLOSE(t.exposed.dp, allReduce, 1e-12);
        QCOMPARE(t.overlapped.dp, 0.0);

        // Overlapped with the last backward: what outlasts it is exposed, and the hidden part
        // costs the backward the SM share the collective holds; the parts add up to the whole.
        Step overlapped(s, ModelConstants{});
        const TimeBreakdown& o = overlapped.run();
        const StageTimes& st = overlapped.times[0];
        const double bw = st.backward_seconds + st.weight_seconds;
        // NCCL holds 16 SMs per 190 GB/s of bus bandwidth (NVIDIA/nccl#689) of the H100's 132
        // for the all-reduce's bus bytes, 2(d − 1)/d · 4·P, and its 32 channels' CTAs through
        // the 12 latency steps.
        const double ctaSeconds = 2.0 * 7 / 8 * (4 * kParams) / (190e9 / 16) + 32 * 12 * kAlpha;
        const double share = ctaSeconds / 132 / allReduce;
        QVERIFY_CLOSE(o.exposed.dp, std::max(0.0, allReduce - bw) + share * std::min(allReduce, bw),
                      1e-12);
        QVERIFY_CLOSE(o.exposed.dp + o.overlapped.dp, allReduce, 1e-12);
        QVERIFY(o.step_seconds < t.step_seconds);
    }

    void hiddenDataParallelFitsItsWindows()
    {
        // ZeRO-2 with hybrid sharding (shard group 8 of dp 16, two nodes of 8): the per-micro-
        // batch gradient reduce-scatter and the replicas' once-per-step all-reduce both want the
        // one micro-batch's backward, the parameter all-gather its forward. What they hide
        // together cannot exceed that micro-batch's compute, and the
        // collectives' exposed and hidden parts add up to their whole (found by issue 16: DP
        // communication "hidden under" more than the step's compute).
        Scenario s = oneGpu(Recompute::None);
        s.cluster = h100_sxm();
        s.cluster.scale_out_gbps = 1; // slow replicas: their all-reduce outlasts the backward
        s.parallel.dp = 16;
        s.parallel.zero = 2;
        s.parallel.shard_group = 8;
        s.gpus = 16;
        s.training.global_batch = 16;
        Step step(s, flatKernels());
        const TimeBreakdown& t = step.run();
        // The compute the collectives may run beside: the same plan without DP.
        Scenario one = s;
        one.parallel.dp = 1;
        one.gpus = 1;
        one.training.global_batch = 1;
        one.parallel.shard_group = 0;
        Step alone(one, flatKernels());
        alone.run();
        const double window = alone.times[0].total();
        QVERIFY(t.exposed.dp > 0);
        QVERIFY2(
            t.overlapped.dp <= window * (1 + 1e-9),
            qPrintable(
                QString("hidden %1 s under %2 s of compute").arg(t.overlapped.dp).arg(window)));
        // Every DP collective of the step is either exposed or hidden.
        const Dims d = dimsOf(s.model, ActivationShape::of(s), 1);
        const CommContext c = context(step.s, d, step.topo, step.k);
        const DpCosts dp = dpCosts(c, dpLinks(c), step.fw, step.params[0], 3);
        QVERIFY_CLOSE(t.exposed.dp + t.overlapped.dp,
                      dp.grad_tail + dp.param_tail + dp.step_exposed + dp.forward + dp.backward,
                      1e-9);
    }

    void shardGroupIsClampedToDp()
    {
        // A shard group larger than DP names more replicas than there are: validate() rejects
        // it (dp % shard_group != 0), and evaluate() treats it as the whole DP group in memory
        // and time alike.
        Scenario s = scenario(llama3_8b(), h100_sxm(), 1, 1, 4, 64);
        s.parallel.zero = 3;
        s.parallel.shard_group = 16;
        const std::vector<ValidationError> errors = validate(s);
        QVERIFY(std::any_of(errors.begin(), errors.end(), [](const ValidationError& e) {
            return e.rule == "shard_group_divides_dp";
        }));
        QCOMPARE(s.parallel.shardGroup(), 4);
        const Estimate big = evaluate(s);
        s.parallel.shard_group = 0;
        const Estimate whole = evaluate(s);
        QCOMPARE(big.stages[0].parameters, whole.stages[0].parameters);
        QCOMPARE(big.stages[0].optimizer_states, whole.stages[0].optimizer_states);
        QCOMPARE(big.time.step_seconds, whole.time.step_seconds);
        QCOMPARE(big.time.optimizer_seconds, whole.time.optimizer_seconds);
        // A smaller group really shards less.
        s.parallel.shard_group = 2;
        QCOMPARE(s.parallel.shardGroup(), 2);
        QVERIFY_CLOSE(evaluate(s).stages[0].parameters, 2 * whole.stages[0].parameters, 1e-12);
    }

    void breakdownAddsUpAndMoreBandwidthIsNeverSlower()
    {
        std::vector<Scenario> plans;
        for (int zero : {0, 1, 2, 3})
            for (bool sp : {false, true}) {
                Scenario s = scenario(llama3_70b(), h100_sxm(), 8, 1, 4, 64);
                s.parallel.zero = zero;
                s.parallel.sequence_parallel = sp;
                s.parallel.cp = sp ? 2 : 1;
                s.gpus = s.parallel.gpus();
                plans.push_back(s);
            }
        Scenario moe = scenario(mixtral8x7b(), h100_sxm(), 2, 1, 8, 64);
        moe.parallel.ep = 8;
        moe.parallel.zero = 1;
        plans.push_back(moe);
        Scenario off = scenario(llama3_8b(), h100_sxm(), 1, 1, 8, 64);
        off.parallel.zero = 2;
        off.parallel.offload_optimizer = true;
        plans.push_back(off);
        Scenario piped = scenario(llama3_70b(), h100_sxm(), 8, 4, 2, 64);
        piped.parallel.zero = 1;
        plans.push_back(piped);
        Scenario v = piped;
        v.parallel.schedule = Schedule::Interleaved1F1B;
        v.parallel.virtual_stages = 2;
        plans.push_back(v);

        for (std::size_t i = 0; i < plans.size(); ++i) {
            const Scenario& s = plans[i];
            const std::vector<ValidationError> errors = validate(s);
            QVERIFY2(errors.empty(), errors.empty() ? "" : errors[0].message.c_str());
            const Estimate e = evaluate(s);
            const TimeBreakdown& t = e.time;
            for (double x : {t.step_seconds, t.compute_seconds, t.bubble_seconds,
                             t.optimizer_seconds, t.offload_seconds, t.exposed.tp, t.exposed.cp,
                             t.exposed.ep, t.exposed.pp, t.exposed.dp, t.overlapped.tp,
                             t.overlapped.cp, t.overlapped.ep, t.overlapped.pp, t.overlapped.dp})
                QVERIFY(std::isfinite(x) && x >= 0);
            // One stage: the step is its compute, the exposed communication, the optimizer
            // and the offload, nothing else. With a pipeline the bubble (which holds the
            // exposed p2p time) comes on top.
            const double parts =
                t.compute_seconds + t.exposed.total() + t.optimizer_seconds + t.offload_seconds;
            if (s.parallel.pp == 1) {
                QCOMPARE(t.bubble_seconds, 0.0);
                QVERIFY_CLOSE(t.step_seconds, parts, 1e-9);
            } else {
                QVERIFY(t.bubble_seconds > 0);
                QVERIFY_CLOSE(t.step_seconds, parts + t.bubble_seconds - t.exposed.pp, 1e-9);
            }

            // Twice the NVLink, NIC, HBM or PCIe bandwidth never makes the step slower.
            for (int which = 0; which < 4; ++which) {
                Scenario fast = s;
                double& bw = which == 0   ? fast.cluster.scale_up_gbps
                             : which == 1 ? fast.cluster.scale_out_gbps
                             : which == 2 ? fast.cluster.gpu.hbm_gbps
                                          : fast.cluster.pcie_gbps;
                bw *= 2;
                QVERIFY2(evaluate(fast).time.step_seconds <= t.step_seconds * (1 + 1e-12),
                         qPrintable(QString("plan %1: bandwidth %2 doubled").arg(i).arg(which)));
            }
        }
    }
};

QTEST_APPLESS_MAIN(TestTime)
#include "test_time.moc"
