// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/memory.h"

#include <algorithm>

namespace paralens {
namespace {

// Attention block of one layer per micro-batch, before the division by CP: norm input 2,
// QKV input 2, dropout mask 1 (replicated), Q/K/V and out-proj input (sharded), scores.
double attentionBlockBytes(const Dims& d, const ActivationShape& a)
{
    const double sb = d.s * d.b;
    double bytes = 5 * sb * d.h / d.tsp + sb * (2 * (d.q + 2 * d.kv) + 2 * d.q) / d.t;
    if (a.flash_attention)
        bytes += 4 * d.heads * sb / d.t; // fp32 log-sum-exp per row (Dao et al. 2022)
    else if (a.recompute != Recompute::Selective)
        bytes += 5 * d.heads * d.s * sb / d.t; // softmax out 2, mask 1, dropout out 2
    return bytes;
}

// Communication buffers of one GPU: NCCL's per process group (`groups` of them), then under
// ZeRO-3 the gathered layers (current + prefetch) and one layer's unsharded gradient, and with
// a sharded optimizer the framework's reduce and all-gather buckets.
double commBufferBytes(const ParallelPlan& pl, const FrameworkConventions& fw,
                       const ModelConstants& k, const StageParams& sp, int groups)
{
    double buffers = groups * k.nccl_bytes_per_group;
    if (pl.zero >= 3) {
        double live = fw.zero3_live_layers * sp.largest_layer;
        if (fw.zero3_max_live_params > 0)
            live = std::min(live, fw.zero3_max_live_params);
        buffers += live * fw.weight_bytes;
        if (fw.zero3_layer_grads)
            buffers += sp.largest_layer * fw.grad_bytes;
    }
    if (pl.zero >= 1 && pl.dp > 1) {
        buffers += std::min(fw.reduce_bucket_elements, sp.total()) * fw.grad_bytes;
        if (pl.zero <= 2)
            buffers += std::min(fw.allgather_bucket_elements, sp.total()) * fw.weight_bytes;
    }
    return buffers;
}

} // namespace

double denseLayerActivationBytes(const ModelSpec& m, const ActivationShape& a)
{
    const Dims d = dimsOf(m, a);
    const double sb = d.s * d.b;
    if (a.recompute == Recompute::Full)
        return 2 * sb * d.h / d.tsp / d.cp;
    // MLP block: norm input 2, fc1 input 2, dropout mask 1 (replicated) + GeLU/SwiGLU tensors.
    const double mlp = 5 * sb * d.h / d.tsp + sb * d.mlpStoredBytes() * double(m.ffn_hidden) / d.t;
    return (attentionBlockBytes(d, a) + mlp) / d.cp;
}

double moeLayerActivationBytes(const ModelSpec& m, const ActivationShape& a)
{
    if (!m.isMoe())
        return denseLayerActivationBytes(m, a);
    const Dims d = dimsOf(m, a);
    const double sb = d.s * d.b;
    if (a.recompute == Recompute::Full)
        return 2 * sb * d.h / d.tsp / d.cp;
    const double k = m.moe.top_k;
    const double fe = double(m.moe.expert_ffn_hidden);
    // Norm input 2h + mask 1h + router input 2h + permuted copies 2kh + combine 2kh + logits 4E.
    const double replicated = (5 * d.h + 4 * k * d.h + 4.0 * m.moe.experts) / d.tsp;
    const double stored = d.mlpStoredBytes();
    const double experts = (k * stored * fe + m.moe.shared_experts * stored * fe) / d.t;
    return (attentionBlockBytes(d, a) + sb * (replicated + experts)) / d.cp;
}

double embeddingActivationBytes(const ModelSpec& m, const ActivationShape& a)
{
    const Dims d = dimsOf(m, a);
    return (8 * d.s * d.b + d.s * d.b * d.h / d.tsp) / d.cp;
}

double headActivationBytes(const ModelSpec& m, const ActivationShape& a, std::int64_t vocab_pad)
{
    const Dims d = dimsOf(m, a);
    const double sb = d.s * d.b;
    return (4 * sb * d.h / d.tsp + 4 * sb * double(vocab_pad) / d.t) / d.cp;
}

ModelStateBytes modelStateBytes(double params, const FrameworkConventions& fw, int zero,
                                double shard, bool offload)
{
    shard = std::max(1.0, shard);
    ModelStateBytes b;
    b.parameters = params * fw.weight_bytes / (zero >= 3 ? shard : 1.0);
    b.gradients = params * fw.grad_bytes / (zero >= 2 ? shard : 1.0);
    b.optimizer_states = offload ? 0.0 : params * fw.optimizerBytes() / (zero >= 1 ? shard : 1.0);
    return b;
}

void stageMemory(const Scenario& s, const FrameworkConventions& fw, const ModelConstants& k,
                 std::span<const StageLayers> layers, std::span<const StageParams> params,
                 std::span<const double> inflight, Estimate& est)
{
    const ParallelPlan& pl = s.parallel;
    const ModelSpec& m = s.model;
    const int p = std::max(1, pl.pp);
    est.stages.resize(std::size_t(p));

    const ActivationShape shape = ActivationShape::of(s);
    const double denseAct = denseLayerActivationBytes(m, shape);
    const double moeAct = moeLayerActivationBytes(m, shape);
    const std::int64_t vpad = paddedVocab(m.vocab, pl.tp, k.vocab_divisible_by);
    const double embAct = embeddingActivationBytes(m, shape);
    const double headAct = headActivationBytes(m, shape, vpad);
    const Dims d = dimsOf(m, shape);
    const double logitGrad = 4 * d.s * d.b * double(vpad) / d.t / d.cp;
    // Full recompute rebuilds one layer's activations during its backward.
    double recomputeLayer = 0;
    if (shape.recompute == Recompute::Full) {
        ActivationShape none = shape;
        none.recompute = Recompute::None;
        recomputeLayer = std::max(denseLayerActivationBytes(m, none),
                                  m.isMoe() ? moeLayerActivationBytes(m, none) : 0.0);
    }

    const ZeroShards shards = zeroShards(pl);
    int groups = 0;
    for (int g : {pl.tp, pl.cp, pl.dp, pl.ep, pl.pp})
        groups += g > 1 ? 1 : 0;

    for (int r = 0; r < p; ++r) {
        const StageLayers& st = layers[std::size_t(r)];
        const StageParams& sp = params[std::size_t(r)];
        StageMemory& out = est.stages[std::size_t(r)];
        out = StageMemory{};
        out.stage = r;
        out.layers = st.layers;
        out.inflight_microbatches = inflight[std::size_t(r)];

        const ModelStateBytes dense =
            modelStateBytes(sp.dense, fw, pl.zero, shards.dense, pl.offload_optimizer);
        const ModelStateBytes expert =
            modelStateBytes(sp.expert, fw, pl.zero, shards.expert, pl.offload_optimizer);
        out.parameters = dense.parameters + expert.parameters;
        out.gradients = dense.gradients + expert.gradients;
        out.optimizer_states = dense.optimizer_states + expert.optimizer_states;

        double perMb = (st.layers - st.moe_layers) * denseAct + st.moe_layers * moeAct;
        if (st.first)
            perMb += embAct;
        if (st.last)
            perMb += headAct;
        double act = perMb * out.inflight_microbatches;
        if (st.last)
            act += logitGrad;
        if (st.layers > 0)
            act += recomputeLayer;
        out.activations = act;

        out.comm_buffers = commBufferBytes(pl, fw, k, sp, groups);
        out.runtime_overhead = k.cuda_context_bytes + k.activation_temporaries_fraction * act;
    }
}

} // namespace paralens
