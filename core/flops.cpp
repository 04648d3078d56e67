// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/flops.h"
#include "core/params.h"

#include <algorithm>

namespace paralens {
namespace {

struct Widths
{
    double h, q, kv;
};

Widths widths(const ModelSpec& m)
{
    return {double(m.hidden), double(m.heads) * double(m.headDim()),
            double(m.kv_heads > 0 ? m.kv_heads : m.heads) * double(m.headDim())};
}

// MLA (DeepSeek-V2 §2.1): the down-projections to the latents, the up-projections from them,
// then the core on n_h heads of d_nope + d_R (scores) and d_v (attention x V) dims.
LayerFlops mlaAttention(const ModelSpec& m, double N, double seq)
{
    const MlaSpec& a = m.mla;
    const double h = double(m.hidden), n = double(m.heads);
    const double q = n * double(a.qkHeadDim()), o = n * double(a.v_head_dim);
    const double qProj = a.q_lora_rank > 0 ? double(a.q_lora_rank) * (h + q) : h * q;
    const double kvProj = h * double(a.kv_lora_rank + a.qk_rope_head_dim) +
                          double(a.kv_lora_rank) * n * double(a.qk_nope_head_dim + a.v_head_dim);
    LayerFlops f;
    f.qkv = 2 * N * (qProj + kvProj);
    f.up_proj = 2 * N *
                ((a.q_lora_rank > 0 ? double(a.q_lora_rank) : h) * q +
                 double(a.kv_lora_rank) * n * double(a.qk_nope_head_dim + a.v_head_dim));
    f.attention_core = 2 * N * seq * (q + o);
    f.out_proj = 2 * N * o * h;
    return f;
}

LayerFlops attention(const ModelSpec& m, double N, double seq)
{
    if (m.isMla())
        return mlaAttention(m, N, seq);
    const Widths w = widths(m);
    LayerFlops f;
    f.qkv = 2 * N * w.h * (w.q + 2 * w.kv);
    f.attention_core = 4 * N * seq * w.q;
    f.out_proj = 2 * N * w.q * w.h;
    return f;
}

} // namespace

LayerFlops denseLayerFlops(const ModelSpec& m, double tokens, double seq)
{
    LayerFlops f = attention(m, tokens, seq);
    f.mlp = 2.0 * mlpMatrices(m) * tokens * double(m.hidden) * double(m.ffn_hidden);
    return f;
}

LayerFlops moeLayerFlops(const ModelSpec& m, double tokens, double seq)
{
    if (!m.isMoe())
        return denseLayerFlops(m, tokens, seq);
    LayerFlops f = attention(m, tokens, seq);
    const double c = mlpMatrices(m), h = double(m.hidden), fe = double(m.moe.expert_ffn_hidden);
    f.mlp = 2 * c * tokens * m.moe.top_k * h * fe;
    f.shared_experts = 2 * c * tokens * h * fe * m.moe.shared_experts;
    f.router = 2 * tokens * h * m.moe.experts;
    return f;
}

MtpFlops mtpModuleFlops(const ModelSpec& m, double tokens, double seq, double vocab)
{
    MtpFlops f;
    f.block = m.mtpIsMoe() ? moeLayerFlops(m, tokens, seq) : denseLayerFlops(m, tokens, seq);
    f.projection = 2 * tokens * 2.0 * double(m.hidden) * double(m.hidden);
    f.head = lmHeadFlops(m, tokens, vocab);
    return f;
}

namespace {

// The layer FLOPs both step counts are built from, computed once for the two.
struct StepLayers
{
    double T = 0, seq = 0; ///< tokens per step, sequence length
    int moe = 0;           ///< MoE layers
    LayerFlops dense, moe_layer;
};

StepLayers stepLayers(const ModelSpec& m, double global_batch, double seq)
{
    const double T = global_batch * seq;
    return {T, seq, moeLayersIn(m, 0, m.layers), denseLayerFlops(m, T, seq),
            moeLayerFlops(m, T, seq)};
}

double layersForward(const ModelSpec& m, const StepLayers& l, bool withRouter)
{
    LayerFlops e = l.moe_layer;
    if (!withRouter)
        e.router = 0;
    return (m.layers - l.moe) * l.dense.total() + l.moe * e.total();
}

// mtpModuleFlops() on the layer FLOPs already computed.
MtpFlops mtpFlops(const ModelSpec& m, const StepLayers& l, double vocab)
{
    MtpFlops f;
    f.block = m.mtpIsMoe() ? l.moe_layer : l.dense;
    f.projection = 2 * l.T * 2.0 * double(m.hidden) * double(m.hidden);
    f.head = lmHeadFlops(m, l.T, vocab);
    return f;
}

double modelFlops(const ModelSpec& m, const StepLayers& l)
{
    double f = layersForward(m, l, false) + lmHeadFlops(m, l.T, double(m.vocab));
    if (m.mtp_layers > 0) {
        MtpFlops mtp = mtpFlops(m, l, double(m.vocab));
        mtp.block.router = 0;
        f += m.mtp_layers * mtp.total();
    }
    return 3 * f;
}

// One layer's FLOPs Megatron's selective recompute modules repeat (kernel_time.cpp prices the
// same parts). Kept out of line: the search's plans take hardwareFlops()'s default branch.
[[gnu::noinline]] double selectiveFlops(const LayerFlops& x, bool moeLayer, std::uint8_t modules)
{
    double f = (modules & kRecomputeCoreAttn) ? x.attention_core : 0.0;
    if (modules & kRecomputeMlaUpProj)
        f += x.up_proj;
    if (!moeLayer)
        return f + ((modules & kRecomputeMlp) ? x.mlp : 0.0);
    if (modules & kRecomputeMoe)
        return f + x.mlp + x.shared_experts + x.router;
    return f + ((modules & kRecomputeSharedExperts) ? x.shared_experts : 0.0);
}

// One layer's FLOPs torchtitan's per-op SAC repeats (kernel_time.cpp opSacRecomputeSeconds()).
[[gnu::noinline]] double opSacFlops(const ModelSpec& m, const LayerFlops& x, bool moeLayer)
{
    if (moeLayer || m.isMla())
        return 0.5 * x.gemm();
    const double g = std::max(1, m.kv_heads), a = std::max(1, m.heads);
    return x.qkv * g / (a + 2 * g) + x.out_proj + x.mlp / mlpMatrices(m);
}

// Inlined into stepFlops(): the search evaluates it per plan.
[[gnu::always_inline]] inline double hardwareFlops(const ModelSpec& m, const StepLayers& l,
                                                   Recompute r, std::int64_t vocab_pad,
                                                   std::uint8_t modules, bool op_sac)
{
    const double layers = layersForward(m, l, true);
    double f = 3 * (layers + lmHeadFlops(m, l.T, double(vocab_pad)));
    const int mtpLayers = std::max(0, m.mtp_layers);
    const MtpFlops mtp = mtpFlops(m, l, double(vocab_pad));
    f += 3 * mtpLayers * mtp.total();
    if (r == Recompute::Full)
        f += layers + mtpLayers * mtp.block.total();
    else if (r == Recompute::Selective && op_sac)
        f += (m.layers - l.moe) * opSacFlops(m, l.dense, false) +
             l.moe * opSacFlops(m, l.moe_layer, true) +
             mtpLayers * opSacFlops(m, mtp.block, m.mtpIsMoe());
    else if (r == Recompute::Selective && modules == kRecomputeCoreAttn) // the default, fast
        f += (m.layers + mtpLayers) * l.dense.attention_core;
    else if (r == Recompute::Selective)
        f += (m.layers - l.moe) * selectiveFlops(l.dense, false, modules) +
             l.moe * selectiveFlops(l.moe_layer, true, modules) +
             mtpLayers * selectiveFlops(mtp.block, m.mtpIsMoe(), modules);
    return f;
}

} // namespace

double modelFlopsPerStep(const ModelSpec& m, double global_batch, double seq)
{
    return modelFlops(m, stepLayers(m, global_batch, seq));
}

double hardwareFlopsPerStep(const ModelSpec& m, double global_batch, double seq, Recompute r,
                            std::int64_t vocab_pad, std::uint8_t modules, bool op_sac)
{
    return hardwareFlops(m, stepLayers(m, global_batch, seq), r, vocab_pad, modules, op_sac);
}

double layersForwardFlopsPerStep(const ModelSpec& m, double global_batch, double seq, int dense,
                                 int moe)
{
    const StepLayers l = stepLayers(m, global_batch, seq);
    return dense * l.dense.total() + moe * l.moe_layer.total();
}

StepFlops stepFlops(const ModelSpec& m, double global_batch, double seq, Recompute r,
                    std::int64_t vocab_pad, std::uint8_t modules, bool op_sac)
{
    const StepLayers l = stepLayers(m, global_batch, seq);
    return {modelFlops(m, l), hardwareFlops(m, l, r, vocab_pad, modules, op_sac)};
}

} // namespace paralens
