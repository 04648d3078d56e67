// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/time.h"
#include "core/comm_cost.h"
#include "core/plan_options.h"

#include <algorithm>
#include <string_view>

namespace paralens {
namespace {

// Case-insensitive search for a lowercase ASCII key (no locale calls: this runs per evaluation).
bool nameHas(const std::string& name, std::string_view key)
{
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
    if (name.size() < key.size())
        return false;
    for (std::size_t i = 0; i + key.size() <= name.size(); ++i) {
        std::size_t j = 0;
        while (j < key.size() && lower(name[i + j]) == key[j])
            ++j;
        if (j == key.size())
            return true;
    }
    return false;
}

// Kernel model for one GPU: peaks, efficiencies and the optional profile.
struct Kernels
{
    double peak_lin = 0;  ///< FLOP/s for linear layers (FP8 peak when training in FP8)
    double peak_bf16 = 0; ///< FLOP/s for attention and the LM head
    double eff_lin = 0, eff_bf16 = 0, attn_ratio = 0, half = 0;
    double hbm = 0; ///< achievable bytes/s
    bool fp8 = false;
    const MeasuredPerformance* measured = nullptr;

    double gemm(double M, double K, double N, bool linear) const
    {
        if (M <= 0 || K <= 0 || N <= 0)
            return 0;
        const bool f8 = linear && fp8;
        double eff = f8 ? eff_lin : eff_bf16;
        bool fromProfile = false;
        if (measured)
            if (auto e = measured->gemmEfficiency(M, N, K, f8)) {
                eff = *e;
                fromProfile = true;
            }
        if (!fromProfile) {
            const double x = std::min({M, K, N});
            eff *= x / (x + half);
        }
        const double bytes = (f8 ? 1.0 : 2.0) * (M * K + K * N) + 2.0 * M * N;
        return rooflineSeconds(2 * M * K * N, f8 ? peak_lin : peak_bf16, eff, bytes, hbm);
    }
    /// Forward, input-gradient and weight-gradient times of Y[M×N] = X[M×K]·W[K×N].
    void linear(double M, double K, double N, double count, double& f, double& b, double& w) const
    {
        f += count * gemm(M, K, N, true);
        b += count * gemm(M, N, K, true);
        w += count * gemm(K, M, N, true);
    }
    double stream(double bytes) const { return bytes / hbm; }
};

// Per-micro-batch kernel times of one layer on one GPU, split the way the pipeline needs.
struct LayerTimes
{
    double f = 0, b = 0, w = 0; ///< forward; input grads (+ recompute); weight grads
    double core_f = 0;          ///< attention core forward (CP overlap, selective recompute)
    double recompute = 0;
};

struct Shape
{
    double Ng, s, b, h, q, kv, t, tsp, cp, c, ep;
};

LayerTimes layerTimes(const ModelSpec& m, const Shape& d, const Kernels& k,
                      const TrainingSettings& tr, const ModelConstants& kc, bool moe)
{
    LayerTimes lt;
    // Attention projections.
    k.linear(d.Ng, d.h, (d.q + 2 * d.kv) / d.t, 1, lt.f, lt.b, lt.w);
    k.linear(d.Ng, d.q / d.t, d.h, 1, lt.f, lt.b, lt.w);
    // Attention core: 4·N·s·q/t; flash kernels skip the masked half of a causal score matrix.
    const double coreFlops = 4 * d.Ng * d.s * d.q / d.t * (tr.flash_attention ? 0.5 : 1.0);
    double core;
    if (tr.flash_attention) {
        core = rooflineSeconds(coreFlops, k.peak_bf16, k.eff_bf16 * k.attn_ratio, 0, k.hbm);
    } else {
        // Batched GEMMs plus the softmax / dropout kernels streaming the a·s² score tensors
        // (≈ 10 bytes per score element forward: write 2, read 2, mask 1, dropout 2 + 2 + 1).
        const double scores = m.heads / d.t * (d.s / d.cp) * d.s * d.b;
        core =
            rooflineSeconds(coreFlops, k.peak_bf16, k.eff_bf16, 0, k.hbm) + k.stream(10 * scores);
    }
    lt.core_f = core;
    lt.f += core;
    lt.b += 2 * core;
    // MLP, experts, router.
    double elemFfn;
    const double ffn = double(m.ffn_hidden);
    if (!moe || !m.isMoe()) {
        k.linear(d.Ng, d.h, (d.c - 1) * ffn / d.t, 1, lt.f, lt.b, lt.w);
        k.linear(d.Ng, ffn / d.t, d.h, 1, lt.f, lt.b, lt.w);
        elemFfn = 3 * ffn / d.t;
    } else {
        const double fe = double(m.moe.expert_ffn_hidden);
        const double E = m.moe.experts, kk = m.moe.top_k;
        // Each GPU holds E/ep experts (1/t of each); the EP group's tokens arrive there, so a
        // local expert sees N·ep·k/E rows, times the straggler factor.
        const double rows = d.Ng * d.ep * kk / std::max(1.0, E) * kc.ep_load_imbalance;
        const double local = std::max(1.0, E / d.ep);
        k.linear(rows, d.h, (d.c - 1) * fe / d.t, local, lt.f, lt.b, lt.w);
        k.linear(rows, fe / d.t, d.h, local, lt.f, lt.b, lt.w);
        if (m.moe.shared_experts > 0) {
            const double fs = fe * m.moe.shared_experts;
            k.linear(d.Ng, d.h, (d.c - 1) * fs / d.t, 1, lt.f, lt.b, lt.w);
            k.linear(d.Ng, fs / d.t, d.h, 1, lt.f, lt.b, lt.w);
        }
        k.linear(d.Ng, d.h, E, 1, lt.f, lt.b, lt.w); // router
        elemFfn = 3 * (kk * kc.ep_load_imbalance + m.moe.shared_experts) * fe / d.t +
                  4 * kk * d.h / d.tsp; // permute / unpermute copies
    }
    // Element-wise traffic (norms, residuals, RoPE, activation function), 2-byte elements.
    const double elem = k.stream(2 * d.Ng * (14 * d.h / d.tsp + 2 * (d.q + d.kv) / d.t + elemFfn));
    lt.f += elem;
    lt.b += 2 * elem;
    if (tr.recompute == Recompute::Full)
        lt.recompute = lt.f;
    else if (tr.recompute == Recompute::Selective)
        lt.recompute = core;
    lt.b += lt.recompute;
    return lt;
}

// Parameter tensors of one layer (DeepSpeed fetches them one by one): the attention and MLP
// weight matrices, their biases in GPT-style models, and the norms' weights (and biases).
double tensorsPerLayer(const ModelSpec& m)
{
    const double linears = 4 + mlpMatrices(m);
    return m.gated_mlp ? linears + 2 : 2 * linears + 4;
}

} // namespace

double defaultGemmEfficiency(const GpuSpec& gpu, bool fp8)
{
    double e = 0.70;
    if (nameHas(gpu.name, "a100"))
        e = 0.75;
    else if (nameHas(gpu.name, "mi3"))
        e = 0.55;
    return fp8 ? 0.9 * e : e;
}

double rooflineSeconds(double flops, double peak_flops_per_s, double efficiency, double bytes,
                       double hbm_bytes_per_s)
{
    const double c =
        peak_flops_per_s > 0 && efficiency > 0 ? flops / (peak_flops_per_s * efficiency) : 0.0;
    const double mem = hbm_bytes_per_s > 0 ? bytes / hbm_bytes_per_s : 0.0;
    return std::max(c, mem);
}

void stepTime(const StepInputs& in, std::span<StageTimes> stage_times, std::span<double> inflight,
              Estimate& est)
{
    const Scenario& sc = *in.scenario;
    const ModelSpec& m = sc.model;
    const ParallelPlan& pl = sc.parallel;
    const TrainingSettings& tr = sc.training;
    const FrameworkConventions& fw = *in.framework;
    const ModelConstants& kc = *in.constants;
    const Topology& topo = *in.topology;
    const ClusterSpec& cl = sc.cluster;
    const int p = std::max(1, pl.pp);
    const int mb = std::max(1, safeMicrobatches(tr, pl));

    // ---- kernels ----
    Kernels k;
    k.fp8 = tr.precision == Precision::FP8 && cl.gpu.fp8_tflops > 0;
    k.peak_bf16 = cl.gpu.bf16_tflops * 1e12;
    k.peak_lin = k.fp8 ? cl.gpu.fp8_tflops * 1e12 : k.peak_bf16;
    k.eff_bf16 = kc.gemm_efficiency > 0 ? kc.gemm_efficiency : defaultGemmEfficiency(cl.gpu, false);
    k.eff_lin =
        k.fp8 ? (kc.gemm_efficiency > 0 ? kc.gemm_efficiency : defaultGemmEfficiency(cl.gpu, true))
              : k.eff_bf16;
    k.attn_ratio = kc.attention_efficiency_ratio;
    k.half = kc.gemm_half_size;
    double hbm = cl.gpu.hbm_gbps * 1e9 * kc.hbm_efficiency;
    if (in.measured)
        if (auto g = in.measured->hbmGbps())
            hbm = *g * 1e9;
    k.hbm = hbm > 0 ? hbm : 1e12;
    k.measured = in.measured;

    Shape d;
    d.s = tr.seq_len;
    d.b = tr.micro_batch;
    d.cp = std::max(1, pl.cp);
    d.t = std::max(1, pl.tp);
    d.tsp = pl.sequence_parallel ? d.t : 1.0;
    d.Ng = d.b * d.s / d.cp;
    d.h = double(m.hidden);
    d.q = double(m.heads) * double(m.headDim());
    d.kv = double(m.kv_heads > 0 ? m.kv_heads : m.heads) * double(m.headDim());
    d.c = mlpMatrices(m);
    const double ep = std::max(1, pl.ep);
    d.ep = ep;

    const LayerTimes dense = layerTimes(m, d, k, tr, kc, false);
    const LayerTimes moe = m.isMoe() ? layerTimes(m, d, k, tr, kc, true) : dense;

    // ---- communication per layer per micro-batch ----
    const MeasuredPerformance* meas = in.measured;
    const LinkModel tpL = linkFor(topo.tp, cl, kc), cpL = linkFor(topo.cp, cl, kc);
    const LinkModel epL = linkFor(topo.ep, cl, kc), ppL = linkFor(topo.pp, cl, kc);
    const double S = d.b * d.s * d.h * 2 / d.cp; // one activation tensor, bytes
    double tpF = 0, tpB = 0, tpHidden = 0;
    if (pl.tp > 1) {
        if (pl.sequence_parallel) {
            const double pair = collectiveSeconds(Collective::AllGather, tpL, S, meas) +
                                collectiveSeconds(Collective::ReduceScatter, tpL, S, meas);
            tpF = 2 * pair;
            tpB = 2 * pair;
            tpHidden = 2 * collectiveSeconds(Collective::AllGather, tpL, S, meas);
        } else {
            tpF = 2 * collectiveSeconds(Collective::AllReduce, tpL, S, meas);
            tpB = tpF;
        }
        if (tr.recompute == Recompute::Full)
            tpB += tpF;
    }
    double cpF = 0, cpB = 0, cpHidden = 0;
    if (pl.cp > 1) {
        const double chunk = 2 * (d.s / d.cp) * d.b * (d.kv / d.t) * 2;
        const double step = collectiveSeconds(Collective::SendRecv, cpL, chunk, meas);
        const double fwd = (d.cp - 1) * step, bwd = 2 * (d.cp - 1) * step;
        const double window = (d.cp - 1) / d.cp;
        cpF = std::max(0.0, fwd - dense.core_f * window);
        cpB = std::max(0.0, bwd - 2 * dense.core_f * window);
        cpHidden = fwd + bwd - cpF - cpB;
        if (tr.recompute == Recompute::Full) { // the recomputed forward runs the ring again
            cpB += cpF;
            cpHidden += fwd - cpF;
        }
    }
    double epF = 0, epB = 0, epHidden = 0;
    if (m.isMoe() && pl.ep > 1) {
        const double bytes = d.Ng / d.t * m.moe.top_k * d.h * 2;
        const double a2a =
            collectiveSeconds(Collective::AllToAll, epL, bytes, meas) * kc.ep_load_imbalance;
        epF = 2 * a2a;
        epB = 2 * a2a + (tr.recompute == Recompute::Full ? 2 * a2a : 0);
        if (traitsOf(pl.schedule).pairs_forward_backward) {
            // DualPipe pairs a forward and a backward chunk so all-to-alls run under compute.
            const double f = std::max(0.0, epF - moe.f), b = std::max(0.0, epB - moe.b - moe.w);
            epHidden = epF + epB - f - b;
            epF = f;
            epB = b;
        }
    }
    const double p2pBytes = S / d.t;
    const double p2p = p > 1 ? collectiveSeconds(Collective::SendRecv, ppL, p2pBytes, meas) : 0;

    // ---- LM head on the last stage ----
    const std::int64_t vpad = paddedVocab(m.vocab, pl.tp, kc.vocab_divisible_by);
    double headF = 0, headB = 0, headW = 0;
    k.linear(d.Ng, d.h, double(vpad) / d.t, 1, headF, headB, headW);
    const double ce = k.stream(3 * 4 * d.Ng * double(vpad) / d.t); // fp32 logits, softmax, grad
    headF += ce / 3;
    headB += 2 * ce / 3;

    // ---- DP collectives (per stage) ----
    const double grb = fw.grad_reduce_bytes, wb = fw.weight_bytes;
    const int sg = std::max(1, std::min(pl.shardGroup(), pl.dp));
    const bool hybrid = pl.zero >= 1 && sg < pl.dp;
    const LinkModel dpL =
        linkFor(hybrid ? placeGroup(sg * int(d.cp), int(d.t), pl.gpus(), cl) : topo.dp_cp, cl, kc);
    const LinkModel edpL = linkFor(topo.edp, cl, kc);
    const LinkModel repL =
        linkFor(placeGroup(pl.dp / sg, int(d.t * d.cp) * sg, pl.gpus(), cl), cl, kc);

    double slackB = 0, slackF = 0;
    int slow = 0;
    double dpExposed = 0, dpTotalSlow = 0;
    double optimizer = 0, offload = 0;
    double slowComm[3] = {0, 0, 0};
    struct DpCosts
    {
        double dense = 0, expert = 0, units = 0;
        double gradTail = 0, paramTail = 0, perMbF = 0, perMbB = 0, hideF = 0, hideB = 0;
    } dpMemo;
    for (int r = 0; r < p; ++r) {
        const StageLayers& st = in.layers[std::size_t(r)];
        const StageParams& sp = in.params[std::size_t(r)];
        const double nd = st.layers - st.moe_layers, nm = st.moe_layers;
        StageTimes t;
        t.forward_seconds = nd * dense.f + nm * moe.f;
        t.backward_seconds = nd * dense.b + nm * moe.b;
        t.weight_seconds = nd * dense.w + nm * moe.w;
        if (st.last) {
            t.forward_seconds += headF;
            t.backward_seconds += headB;
            t.weight_seconds += headW;
        }
        const double layers = st.layers;
        t.forward_seconds += layers * (tpF + cpF) + nm * epF;
        t.backward_seconds += layers * (tpB + cpB) + nm * epB;

        // DP traffic: dense over DP×CP (or the shard group), experts over EDP.
        auto coll = [&](Collective c, double denseBytes, double expertBytes) {
            return collectiveSeconds(c, dpL, denseBytes, meas) +
                   collectiveSeconds(c, edpL, expertBytes, meas);
        };
        // Stages with the same parameters and layers (most middle stages) cost the same.
        const double units = std::max(1, st.layers) + (st.first || st.last ? 1 : 0);
        if (r == 0 || sp.dense != dpMemo.dense || sp.expert != dpMemo.expert ||
            units != dpMemo.units) {
            dpMemo = DpCosts{};
            dpMemo.dense = sp.dense;
            dpMemo.expert = sp.expert;
            dpMemo.units = units;
            double& gradTail = dpMemo.gradTail;
            double& paramTail = dpMemo.paramTail;
            double& perMbF = dpMemo.perMbF;
            double& perMbB = dpMemo.perMbB;
            double& hideF = dpMemo.hideF;
            double& hideB = dpMemo.hideB;
            double prefetch = 1;
            switch (pl.zero) {
            case 0:
                gradTail = coll(Collective::AllReduce, sp.dense * grb, sp.expert * grb);
                break;
            case 1:
                gradTail = coll(Collective::ReduceScatter, sp.dense * grb, sp.expert * grb);
                paramTail = coll(Collective::AllGather, sp.dense * wb, sp.expert * wb);
                break;
            case 2:
                perMbB = coll(Collective::ReduceScatter, sp.dense * grb, sp.expert * grb);
                hideB = perMbB;
                paramTail = coll(Collective::AllGather, sp.dense * wb, sp.expert * wb);
                break;
            default: {
                // ZeRO-3 / FSDP: gathered unit by unit (a layer, plus the embedding / head), or
                // tensor by tensor (DeepSpeed); each collective pays its own ring latency.
                const double n = units * (fw.zero3_per_tensor ? tensorsPerLayer(m) : 1.0);
                const double ag =
                    n * coll(Collective::AllGather, sp.dense * wb / n, sp.expert * wb / n);
                const double rs = units * coll(Collective::ReduceScatter, sp.dense * grb / units,
                                               sp.expert * grb / units);
                perMbF = ag;
                perMbB = ag * (tr.recompute == Recompute::Full ? 2 : 1) + rs;
                // Only what the prefetch covers can run ahead of compute.
                if (fw.zero3_prefetch_params > 0)
                    prefetch = std::min(1.0, fw.zero3_prefetch_params / (sp.total() / n));
                hideF = prefetch * perMbF;
                hideB = prefetch * (perMbB - rs) + rs;
                break;
            }
            }
            if (hybrid)
                gradTail +=
                    collectiveSeconds(Collective::AllReduce, repL, sp.total() / sg * grb, meas);
        }
        const double gradTail = dpMemo.gradTail, paramTail = dpMemo.paramTail;
        const double perMbF = dpMemo.perMbF, perMbB = dpMemo.perMbB;
        const double hideF = dpMemo.hideF, hideB = dpMemo.hideB;
        // Per-micro-batch ZeRO-2/3 collectives overlap that micro-batch's compute.
        const double hiddenF = std::min(hideF, t.forward_seconds);
        const double hiddenB = std::min(hideB, t.backward_seconds + t.weight_seconds);
        t.forward_seconds += perMbF - hiddenF;
        t.backward_seconds += perMbB - hiddenB;

        // Once-per-step collectives: stage r finishes its last backward Σ_{j<r} B_j earlier
        // than stage 0, and starts its first forward Σ_{j<r} F_j later.
        const double bw = t.backward_seconds + t.weight_seconds;
        const double gradWindow = slackB + (fw.overlap_grad_reduce ? bw : 0.0);
        const double paramWindow = slackF + (fw.overlap_param_gather ? t.forward_seconds : 0.0);
        const double exposed =
            std::max(0.0, gradTail - gradWindow) + std::max(0.0, paramTail - paramWindow);
        dpExposed = std::max(dpExposed, exposed);
        slackB += bw;
        slackF += t.forward_seconds;

        // Optimizer step on the local shard.
        const double shardD = pl.zero >= 1 ? double(sg) * d.cp : 1.0;
        const double shardE = pl.zero >= 1 ? std::max(1.0, double(sg) * d.cp / ep) : 1.0;
        const double local = sp.dense / shardD + sp.expert / shardE;
        if (pl.offload_optimizer) {
            const double pcie = std::max(1e9, cl.pcie_gbps * 1e9);
            offload = std::max(offload, local * (fw.grad_bytes + fw.weight_bytes) / pcie +
                                            local / kc.cpu_adam_params_per_second);
        } else {
            optimizer = std::max(optimizer, local * kc.adam_bytes_per_param / k.hbm);
        }

        stage_times[std::size_t(r)] = t;
        if (r == 0 || t.total() > stage_times[std::size_t(slow)].total()) {
            slow = r;
            dpTotalSlow = gradTail + paramTail + mb * (perMbF + perMbB);
            slowComm[0] = layers * (tpF + tpB);
            slowComm[1] = layers * (cpF + cpB);
            slowComm[2] = nm * (epF + epB);
        }
    }

    const PipelineCost pc =
        kc.simulate_pipeline || in.timeline
            ? pipelineCost(pl.schedule, mb, pl.virtual_stages, stage_times.first(std::size_t(p)),
                           p2p, inflight, in.timeline)
            : closedFormPipelineCost(pl.schedule, mb, pl.virtual_stages,
                                     stage_times.first(std::size_t(p)), p2p, inflight);
    // Tied embeddings on p > 1: the two copies' gradients are all-reduced once per step.
    double tied = 0;
    if (m.tied_embeddings && p > 1) {
        LinkModel pair = ppL;
        pair.ranks = 2;
        tied = collectiveSeconds(Collective::AllReduce, pair,
                                 double(vpad) * d.h / d.t * fw.grad_reduce_bytes, meas);
    }

    TimeBreakdown& tb = est.time;
    tb = TimeBreakdown{};
    tb.step_seconds = pc.step_seconds + dpExposed + tied + optimizer + offload;
    const StageTimes& ss = stage_times[std::size_t(slow)];
    const double commSlow = slowComm[0] + slowComm[1] + slowComm[2];
    tb.compute_seconds = std::max(0.0, mb * (ss.total() - commSlow));
    tb.bubble_seconds = pc.bubble_seconds;
    tb.bubble_fraction = pc.bubble_fraction;
    tb.bubble_overhead = pc.bubble_overhead;
    tb.exposed.tp = mb * slowComm[0];
    tb.exposed.cp = mb * slowComm[1];
    tb.exposed.ep = mb * slowComm[2];
    tb.exposed.pp = pc.p2p_exposed_seconds + tied;
    tb.exposed.dp = dpExposed;
    const StageLayers& sl = in.layers[std::size_t(slow)];
    // In double: m (up to 1e9) times the layers overflows int (found by test_limits).
    tb.overlapped.tp = double(mb) * sl.layers * tpHidden;
    tb.overlapped.cp = double(mb) * sl.layers * cpHidden;
    tb.overlapped.ep = double(mb) * sl.moe_layers * epHidden;
    const double vhops = p2pHopsPerMicrobatch(pl.schedule, pl.virtual_stages);
    tb.overlapped.pp = std::max(0.0, 2.0 * mb * vhops * p2p - pc.p2p_exposed_seconds);
    tb.overlapped.dp = std::max(0.0, dpTotalSlow - dpExposed);
    tb.optimizer_seconds = optimizer;
    tb.offload_seconds = offload;
    tb.critical_stage = slow;
}

} // namespace paralens
