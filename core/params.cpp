// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/params.h"
#include "core/plan_options.h"

#include <algorithm>

namespace paralens {
namespace {

// LayerNorm has a weight and a bias, RMSNorm a weight (docs/formulas.md §1). Linear biases go
// with the MLP type: GPT-style (plain GeLU) models have them, gated (Llama-style) models do not.
double normParams(const ModelSpec& m)
{
    return m.norm == NormType::LayerNorm ? 2.0 * double(m.hidden) : double(m.hidden);
}

// MLA (DeepSeek-V2 §2.1, Eq. 9-19): W^DQ h×d_c' and W^DKV + W^KR h×(d_c + d_R) replicated over
// TP with the RMSNorms of both latents; W^UQ (+ W^QR) d_c'×n_h·(d_nope + d_R), W^UK + W^UV
// d_c×n_h·(d_nope + d_v) and W^O n_h·d_v×h split by heads. No biases.
struct MlaParams
{
    double sharded = 0, replicated = 0;
};

MlaParams mlaParams(const ModelSpec& m)
{
    const MlaSpec& a = m.mla;
    const double h = double(m.hidden), n = double(m.heads);
    const double q = n * double(a.qkHeadDim());
    MlaParams p;
    const double qProj = a.q_lora_rank > 0 ? double(a.q_lora_rank) * q : h * q;
    p.sharded = qProj + double(a.kv_lora_rank) * n * double(a.qk_nope_head_dim + a.v_head_dim) +
                n * double(a.v_head_dim) * h;
    p.replicated = h * double(a.kv_lora_rank + a.qk_rope_head_dim) + double(a.kv_lora_rank);
    if (a.q_lora_rank > 0)
        p.replicated += h * double(a.q_lora_rank) + double(a.q_lora_rank);
    return p;
}

double attentionParams(const ModelSpec& m)
{
    if (m.isMla())
        return mlaParams(m).sharded;
    const double h = double(m.hidden);
    const double q = double(m.heads) * double(m.headDim());
    const double kv = double(m.kv_heads > 0 ? m.kv_heads : m.heads) * double(m.headDim());
    const double biases = m.gated_mlp ? 0.0 : q + 2 * kv + h;
    return 2 * h * q + 2 * h * kv + biases;
}

double mlpParams(const ModelSpec& m, double ffn)
{
    const double h = double(m.hidden);
    const double biases = m.gated_mlp ? 0.0 : ffn + h;
    return mlpMatrices(m) * h * ffn + biases;
}

} // namespace

double parameterTensorsPerLayer(const ModelSpec& m, bool moe)
{
    // MLA: q_down, q_norm, q_up (or one q projection without a q latent), kv_down, kv_norm,
    // kv_up and the output projection (torchtitan deepseek_v3 Attention: wq_a, q_norm, wq_b,
    // wkv_a, kv_norm, wkv_b, wo).
    const double attention = m.isMla() ? (m.mla.q_lora_rank > 0 ? 7 : 5) : 4;
    double mlp = mlpMatrices(m);
    if (moe && m.isMoe())
        mlp = 1 + mlpMatrices(m) + (m.moe.shared_experts > 0 ? mlpMatrices(m) : 0);
    const double linears = attention + mlp;
    const double norms = m.norm == NormType::LayerNorm ? 4 : 2; // two norms: weight (+ bias)
    return (m.gated_mlp ? linears : 2 * linears) + norms;
}

StageTensorCounts stageTensorCounts(const ModelSpec& m)
{
    StageTensorCounts c;
    const double norm = m.norm == NormType::LayerNorm ? 2 : 1;
    c.dense_layer = parameterTensorsPerLayer(m);
    c.moe_layer = m.isMoe() ? parameterTensorsPerLayer(m, true) : c.dense_layer;
    // Each MTP module: its block, the projection M_k and three norms.
    c.mtp_module = (m.mtpIsMoe() ? c.moe_layer : c.dense_layer) + 1 + 3 * norm;
    c.embedding = 1 + (m.position_embedding == PositionEmbedding::Learned ? 1 : 0);
    c.head = norm + 1;
    c.tied = m.tied_embeddings;
    return c;
}

double stageParameterTensors(const ModelSpec& m, const StageLayers& st)
{
    return stageParameterTensors(stageTensorCounts(m), st);
}

LayerParams denseLayerParams(const ModelSpec& m)
{
    LayerParams p;
    p.attention = attentionParams(m);
    p.attention_replicated = m.isMla() ? mlaParams(m).replicated : 0.0;
    p.mlp = mlpParams(m, double(m.ffn_hidden));
    p.norms = 2 * normParams(m);
    return p;
}

LayerParams moeLayerParams(const ModelSpec& m)
{
    if (!m.isMoe())
        return denseLayerParams(m);
    LayerParams p;
    p.attention = attentionParams(m);
    p.attention_replicated = m.isMla() ? mlaParams(m).replicated : 0.0;
    const double fe = double(m.moe.expert_ffn_hidden);
    p.shared_experts = m.moe.shared_experts * mlpParams(m, fe);
    p.routed_experts = m.moe.experts * mlpParams(m, fe);
    p.router = double(m.hidden) * m.moe.experts;
    p.norms = 2 * normParams(m);
    return p;
}

std::int64_t paddedVocab(std::int64_t vocab, int tp, int divisible_by)
{
    const std::int64_t unit = std::int64_t(std::max(1, divisible_by)) * std::max(1, tp);
    return (vocab + unit - 1) / unit * unit;
}

int moeLayersIn(const ModelSpec& m, int first, int last)
{
    if (!m.isMoe() || last <= first)
        return 0;
    const int fd = m.moe.first_dense_layers;
    const int f = m.moe.layer_frequency > 0 ? m.moe.layer_frequency : 1;
    auto below = [&](int x) { return x <= fd ? 0 : (x - fd + f - 1) / f; };
    return below(last) - below(first);
}

double totalParameters(const ModelSpec& m)
{
    const int moe = moeLayersIn(m, 0, m.layers);
    const double layers =
        (m.layers - moe) * denseLayerParams(m).total() + moe * moeLayerParams(m).total();
    const double emb = double(m.vocab) * double(m.hidden);
    return layers + emb * (m.tied_embeddings ? 1 : 2) + normParams(m);
}

double activeParameters(const ModelSpec& m)
{
    const double total = totalParameters(m);
    if (!m.isMoe())
        return total;
    const LayerParams l = moeLayerParams(m);
    const double inactive =
        l.routed_experts * double(m.moe.experts - m.moe.top_k) / double(std::max(1, m.moe.experts));
    return total - moeLayersIn(m, 0, m.layers) * inactive;
}

MtpModuleParams mtpModuleParams(const ModelSpec& m)
{
    MtpModuleParams p;
    p.block = m.mtpIsMoe() ? moeLayerParams(m) : denseLayerParams(m);
    p.projection = 2.0 * double(m.hidden) * double(m.hidden);
    p.norms = 3 * normParams(m);
    return p;
}

double mtpParameters(const ModelSpec& m)
{
    return m.mtp_layers > 0 ? m.mtp_layers * mtpModuleParams(m).total() : 0.0;
}

namespace {

// Layers of stage-level split: count for stage r when explicit first/last counts are set.
int explicitStageLayers(const ModelSpec& m, const ParallelPlan& plan, int r)
{
    const int p = plan.pp;
    if (p == 1)
        return m.layers;
    int rest = m.layers;
    int restStages = p;
    if (plan.first_stage_layers > 0) {
        rest -= plan.first_stage_layers;
        --restStages;
    }
    if (plan.last_stage_layers > 0) {
        rest -= plan.last_stage_layers;
        --restStages;
    }
    if (r == 0 && plan.first_stage_layers > 0)
        return plan.first_stage_layers;
    if (r == p - 1 && plan.last_stage_layers > 0)
        return plan.last_stage_layers;
    // Index among the remaining stages; extras go to the earliest of them.
    const int idx = r - (plan.first_stage_layers > 0 ? 1 : 0);
    const int q = restStages > 0 ? rest / restStages : 0;
    const int rem = restStages > 0 ? rest % restStages : 0;
    return q + (idx < rem ? 1 : 0);
}

// The automatic split of `layers` over C chunks by `rule`; the quotient and remainder once
// per split, not per chunk (this runs per evaluation).
struct AutoSplit
{
    int layers, C, q, rem;
    LayerSplit rule;
    AutoSplit(int layers_, int C_, LayerSplit rule_)
        : layers(layers_), C(C_), q(layers_ / C_), rem(layers_ % C_), rule(rule_)
    {
    }
    int chunk(int c) const; ///< layers of chunk c (global order)
};

int AutoSplit::chunk(int c) const
{
    if (rule == LayerSplit::ExtraFirst)
        return q + (c < rem ? 1 : 0);
    if (rule == LayerSplit::ExtraMiddle) {
        // Chunk 0 the base, chunks 1, 2, ... one extra while they last, the last chunk the rest
        // (which is the base whenever rem < C - 1; with rem = C - 1 it takes the last extra).
        if (c == 0 || C == 1)
            return c == 0 && C == 1 ? layers : q;
        if (c < C - 1)
            return q + (c <= rem ? 1 : 0);
        return layers - q - (C - 2) * q - std::min(rem, C - 2);
    }
    // ShortEnds: C - rem chunks are short; hand them out from both ends inward:
    // position of c in the order 0, C-1, 1, C-2, ...
    const int shorts = C - rem;
    const int fromEnd = std::min(c, C - 1 - c);
    const int order = 2 * fromEnd + (c > C - 1 - c ? 1 : 0);
    return q + (order < shorts ? 0 : 1);
}

// Layers of model chunk c (model order) among C = pp·v; it is local chunk j of device r
// (deviceOfChunk / localChunkOf: looped or a V).
int chunkLayers(const ModelSpec& m, const ParallelPlan& plan, const AutoSplit& split,
                bool explicitSplit, int c, int r, int j)
{
    if (!explicitSplit)
        return split.chunk(c);
    const int v = std::max(1, plan.virtual_stages);
    const int stageN = explicitStageLayers(m, plan, r);
    return stageN / v + (j < stageN % v ? 1 : 0);
}

ChunkLayout layoutOf(const ParallelPlan& plan)
{
    return chunkLayoutOf(plan.schedule, plan.virtual_stages);
}

// The layers each stage leaves stored under full recompute of `n` layers per chunk: Megatron's
// block method recomputes a chunk's first layers (TransformerBlock._checkpointed_forward: the
// layers from recompute_num_layers on run without a checkpoint). A second pass over the chunks,
// so the usual split does not branch on it.
[[gnu::noinline]] void countStoredLayers(const ModelSpec& m, const ParallelPlan& plan,
                                         const AutoSplit& split, bool explicitSplit, int n,
                                         std::span<StageLayers> out)
{
    const int p = plan.pp;
    const int C = p * std::max(1, plan.virtual_stages);
    const ChunkLayout layout = layoutOf(plan);
    int start = 0;
    for (int c = 0; c < C; ++c) {
        const int r = deviceOfChunk(layout, p, c);
        const int size =
            chunkLayers(m, plan, split, explicitSplit, c, r, localChunkOf(layout, p, c));
        if (size > n) {
            out[r].stored += size - n;
            out[r].stored_moe += moeLayersIn(m, start + n, start + size);
        }
        start += size;
    }
}

} // namespace

bool splitChunks(const ModelSpec& m, const ParallelPlan& plan, LayerSplit rule, std::span<int> out)
{
    const int v = std::max(1, plan.virtual_stages);
    if (plan.pp < 1 || m.layers < 1 || std::int64_t{plan.pp} * v > std::int64_t(out.size()))
        return false;
    const int C = plan.pp * v;
    const ChunkLayout layout = layoutOf(plan);
    const bool explicitSplit = plan.first_stage_layers > 0 || plan.last_stage_layers > 0;
    const AutoSplit split(m.layers, C, rule);
    int total = 0;
    for (int c = 0; c < C; ++c) {
        out[c] = chunkLayers(m, plan, split, explicitSplit, c, deviceOfChunk(layout, plan.pp, c),
                             localChunkOf(layout, plan.pp, c));
        if (out[c] < 0)
            return false;
        total += out[c];
    }
    return total == m.layers;
}

bool splitLayers(const ModelSpec& m, const ParallelPlan& plan, LayerSplit rule,
                 std::span<StageLayers> out, int recompute_per_chunk)
{
    const int p = plan.pp;
    const int v = std::max(1, plan.virtual_stages);
    if (p < 1 || int(out.size()) < p || m.layers < 1)
        return false;
    const int C = p * v;
    const ChunkLayout layout = layoutOf(plan);
    const bool explicitSplit = plan.first_stage_layers > 0 || plan.last_stage_layers > 0;
    // The embedding goes with the model's first chunk, the final norm and the LM head with its
    // last: device 0 and p − 1, or both on device 0 in a V (its chunks 0 and 2p − 1).
    const int head = headDeviceOf(layout, p);
    for (int r = 0; r < p; ++r)
        out[r] = StageLayers{0, 0, r == 0, r == head, r == head ? std::max(0, m.mtp_layers) : 0};
    const AutoSplit split(m.layers, C, rule);
    int start = 0;
    for (int c = 0; c < C; ++c) {
        const int r = deviceOfChunk(layout, p, c);
        const int n = chunkLayers(m, plan, split, explicitSplit, c, r, localChunkOf(layout, p, c));
        if (n < 0)
            return false;
        out[r].layers += n;
        out[r].moe_layers += moeLayersIn(m, start, start + n);
        start += n;
    }
    if (recompute_per_chunk > 0 && start == m.layers) [[unlikely]]
        countStoredLayers(m, plan, split, explicitSplit, recompute_per_chunk, out);
    return start == m.layers;
}

StageParams stageParameters(const ModelSpec& m, const ParallelPlan& plan, const StageLayers& st,
                            int vocab_divisible_by)
{
    return stageParameters(m, plan, st, denseLayerParams(m), moeLayerParams(m), vocab_divisible_by);
}

StageParams stageParameters(const ModelSpec& m, const ParallelPlan& plan, const StageLayers& st,
                            const LayerParams& dl, const LayerParams& ml, int vocab_divisible_by)
{
    const double t = std::max(1, plan.tp);
    // Routed experts are split over expert TP × EP (Megatron-Core expert_tensor_parallel_size).
    const double expertShards = double(plan.expertTp()) * std::max(1, plan.ep);
    const int dense = st.layers - st.moe_layers;
    StageParams s;
    s.dense = dense * (dl.tpSharded() / t + dl.replicated()) +
              st.moe_layers * (ml.tpSharded() / t + ml.replicated());
    s.expert = st.moe_layers * ml.routed_experts / expertShards;
    const double embShard =
        double(paddedVocab(m.vocab, plan.tp, vocab_divisible_by)) * double(m.hidden) / t;
    // Stage 0 holds the word embedding; the stage with the model's last chunk (the last stage,
    // device 0 in a V) the final norm and the LM head: a second copy of the embedding when
    // tied, unless the same stage holds both (p = 1, or a V; docs/formulas.md §1, placement).
    if (st.first)
        s.embedding += embShard;
    if (st.last) {
        if (!m.tied_embeddings || !st.first)
            s.embedding += embShard;
        s.dense += normParams(m);
    }
    // MTP modules (DeepSeek-V3 §2.2) on the head's stage: each its block, projection and norms;
    // they look up the embedding of token i + k, so that stage holds the word embedding too
    // (Megatron-Core builds it on the last stage when MTP is on): a copy unless the stage holds
    // it already (stage 0) or the head is that same matrix (tied).
    double mtpLayer = 0;
    if (st.mtp > 0) {
        const MtpModuleParams mp = mtpModuleParams(m);
        const LayerParams& b = mp.block;
        mtpLayer = b.tpSharded() / t + mp.projection / t + b.replicated() + mp.norms;
        s.dense += st.mtp * mtpLayer;
        s.expert += st.mtp * b.routed_experts / expertShards;
        mtpLayer += b.routed_experts / expertShards;
        if (!st.first && !m.tied_embeddings)
            s.embedding += embShard;
    }
    s.dense += s.embedding;
    s.largest_layer = std::max(
        {dense > 0 ? dl.tpSharded() / t + dl.replicated() : 0.0,
         st.moe_layers > 0 ? ml.tpSharded() / t + ml.replicated() + ml.routed_experts / expertShards
                           : 0.0,
         mtpLayer});
    return s;
}

} // namespace paralens
