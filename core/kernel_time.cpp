// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/kernel_time.h"
#include "core/params.h"

#include <algorithm>
#include <string_view>

namespace paralens {
namespace {

// Default GEMM efficiencies, 🔢 from public cuBLAS / hipBLASLt figures (defaultGemmEfficiency()).
constexpr double kGemmEfficiency = 0.70; // H100, H200, B200 and any GPU not matched below
constexpr double kGemmEfficiencyA100 = 0.75;
constexpr double kGemmEfficiencyMi300 = 0.55;
constexpr double kFp8GemmShare = 0.9; // of the BF16 share, against the FP8 peak

// The cross-entropy streams the fp32 logits three times (4 bytes each): written by the LM head,
// read by the softmax, gradient written; one third in forward, two in backward.
constexpr double kCrossEntropyBytesPerLogit = 3 * 4;

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

// Forward seconds of the attention core, 4·N·s·q/t FLOPs (scores and attention·V).
double attentionCoreSeconds(const Dims& d, const KernelModel& k, const TrainingSettings& tr,
                            const ModelConstants& kc)
{
    // Flash kernels skip the masked half of a causal score matrix.
    const double coreFlops = 4 * d.tokens * d.s * d.q / d.t * (tr.flash_attention ? 0.5 : 1.0);
    if (tr.flash_attention)
        return rooflineSeconds(coreFlops, k.peak_bf16, k.eff_bf16 * k.attn_ratio, 0, k.hbm);
    // Batched GEMMs plus the softmax / dropout kernels streaming the a·s² score tensors.
    const double scores = d.heads / d.t * (d.s / d.cp) * d.s * d.b;
    return rooflineSeconds(coreFlops, k.peak_bf16, k.eff_bf16, 0, k.hbm) +
           k.stream(kc.score_bytes_per_element * scores);
}

// Adds the MLP (or the experts, shared experts and router) of one layer to lt; returns the
// elements per token its element-wise kernels stream (activation function, MoE permutes).
double addFeedForward(const ModelSpec& m, const Dims& d, const KernelModel& k,
                      const ModelConstants& kc, bool moe, LayerTimes& lt)
{
    if (!moe || !m.isMoe()) {
        const double ffn = double(m.ffn_hidden);
        k.linear(d.tokens, d.h, (d.c - 1) * ffn / d.t, 1, lt.f, lt.b, lt.w);
        k.linear(d.tokens, ffn / d.t, d.h, 1, lt.f, lt.b, lt.w);
        return 3 * ffn / d.t;
    }
    const double fe = double(m.moe.expert_ffn_hidden);
    const double E = m.moe.experts, kk = m.moe.top_k;
    // Each GPU holds E/ep experts (1/t of each); the EP group's tokens arrive there, so a local
    // expert sees N·ep·k/E rows, times the straggler factor.
    const double rows = d.tokens * d.ep * kk / std::max(1.0, E) * kc.ep_load_imbalance;
    const double local = std::max(1.0, E / d.ep);
    k.linear(rows, d.h, (d.c - 1) * fe / d.t, local, lt.f, lt.b, lt.w);
    k.linear(rows, fe / d.t, d.h, local, lt.f, lt.b, lt.w);
    if (m.moe.shared_experts > 0) {
        const double fs = fe * m.moe.shared_experts;
        k.linear(d.tokens, d.h, (d.c - 1) * fs / d.t, 1, lt.f, lt.b, lt.w);
        k.linear(d.tokens, fs / d.t, d.h, 1, lt.f, lt.b, lt.w);
    }
    k.linear(d.tokens, d.h, E, 1, lt.f, lt.b, lt.w); // router
    return 3 * (kk * kc.ep_load_imbalance + m.moe.shared_experts) * fe / d.t +
           4 * kk * d.h / d.tsp; // permute / unpermute copies
}

} // namespace

double defaultGemmEfficiency(const GpuSpec& gpu, bool fp8)
{
    double e = kGemmEfficiency;
    if (nameHas(gpu.name, "a100"))
        e = kGemmEfficiencyA100;
    else if (nameHas(gpu.name, "mi3"))
        e = kGemmEfficiencyMi300;
    return fp8 ? kFp8GemmShare * e : e;
}

double rooflineSeconds(double flops, double peak_flops_per_s, double efficiency, double bytes,
                       double hbm_bytes_per_s)
{
    const double c =
        peak_flops_per_s > 0 && efficiency > 0 ? flops / (peak_flops_per_s * efficiency) : 0.0;
    const double mem = hbm_bytes_per_s > 0 ? bytes / hbm_bytes_per_s : 0.0;
    return std::max(c, mem);
}

double KernelModel::gemm(double M, double K, double N, bool linear) const
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
    // 1-byte FP8 or 2-byte inputs, 2-byte output.
    const double bytes = (f8 ? 1.0 : 2.0) * (M * K + K * N) + 2.0 * M * N;
    return rooflineSeconds(2 * M * K * N, f8 ? peak_lin : peak_bf16, eff, bytes, hbm);
}

void KernelModel::linear(double M, double K, double N, double count, double& f, double& b,
                         double& w) const
{
    f += count * gemm(M, K, N, true);
    b += count * gemm(M, N, K, true);
    w += count * gemm(K, M, N, true);
}

KernelModel kernelModel(const Scenario& s, const ModelConstants& kc,
                        const MeasuredPerformance* measured)
{
    const GpuSpec& gpu = s.cluster.gpu;
    KernelModel k;
    k.fp8 = s.training.precision == Precision::FP8 && gpu.fp8_tflops > 0;
    k.peak_bf16 = gpu.bf16_tflops * kFlopsPerTflop;
    k.peak_lin = k.fp8 ? gpu.fp8_tflops * kFlopsPerTflop : k.peak_bf16;
    k.eff_bf16 = kc.gemm_efficiency > 0 ? kc.gemm_efficiency : defaultGemmEfficiency(gpu, false);
    k.eff_lin =
        k.fp8 ? (kc.gemm_efficiency > 0 ? kc.gemm_efficiency : defaultGemmEfficiency(gpu, true))
              : k.eff_bf16;
    k.attn_ratio = kc.attention_efficiency_ratio;
    k.half = kc.gemm_half_size;
    double hbm = gpu.hbm_gbps * kBytesPerGB * kc.hbm_efficiency;
    if (measured)
        if (auto g = measured->hbmGbps())
            hbm = *g * kBytesPerGB;
    k.hbm = hbm > 0 ? hbm : kFallbackHbmBytesPerSecond;
    k.measured = measured;
    return k;
}

LayerTimes layerTimes(const ModelSpec& m, const Dims& d, const KernelModel& k,
                      const TrainingSettings& tr, const ModelConstants& kc, bool moe)
{
    LayerTimes lt;
    // Attention projections.
    k.linear(d.tokens, d.h, (d.q + 2 * d.kv) / d.t, 1, lt.f, lt.b, lt.w);
    k.linear(d.tokens, d.q / d.t, d.h, 1, lt.f, lt.b, lt.w);
    const double core = attentionCoreSeconds(d, k, tr, kc);
    lt.core_f = core;
    lt.f += core;
    lt.b += 2 * core;
    const double elemFfn = addFeedForward(m, d, k, kc, moe, lt);
    // Element-wise traffic (norms, residuals, RoPE, activation function), 2-byte elements.
    const double elem =
        k.stream(2 * d.tokens *
                 (kc.elementwise_hidden_elements * d.h / d.tsp + 2 * (d.q + d.kv) / d.t + elemFfn));
    lt.f += elem;
    lt.b += 2 * elem;
    if (tr.recompute == Recompute::Full)
        lt.recompute = lt.f;
    else if (tr.recompute == Recompute::Selective)
        lt.recompute = core;
    lt.b += lt.recompute;
    return lt;
}

StageTimes headTimes(const Dims& d, const KernelModel& k, std::int64_t vocab_pad)
{
    StageTimes t;
    k.linear(d.tokens, d.h, double(vocab_pad) / d.t, 1, t.forward_seconds, t.backward_seconds,
             t.weight_seconds);
    const double ce = k.stream(kCrossEntropyBytesPerLogit * d.tokens * double(vocab_pad) / d.t);
    t.forward_seconds += ce / 3;
    t.backward_seconds += 2 * ce / 3;
    return t;
}

} // namespace paralens
