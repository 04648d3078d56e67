// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/framework.h"
#include "core/model_spec.h"
#include "core/plan.h"

#include <cstdint>
#include <span>

namespace paralens {

/// Parameters of one transformer layer, whole (before any sharding), docs/formulas.md §1.
struct LayerParams
{
    double attention = 0; ///< Q, K, V, O weights (TP-sharded; with MLA the up-projections and O)
    /// MLA's down-projections and latent norms, which every TP rank holds whole (Megatron-Core
    /// builds linear_q_down_proj / linear_kv_down_proj "duplicated"); 0 without MLA.
    double attention_replicated = 0;
    double mlp = 0;            ///< dense MLP (TP-sharded); 0 in an MoE layer
    double shared_experts = 0; ///< always-active experts (TP-sharded like a dense MLP)
    double routed_experts = 0; ///< all E routed experts (sharded over TP × EP)
    double router = 0;         ///< h·E, replicated
    double norms = 0;          ///< two RMSNorms (h each), replicated

    double tpSharded() const { return attention + mlp + shared_experts; }
    double replicated() const { return router + norms + attention_replicated; }
    double total() const { return tpSharded() + replicated() + routed_experts; }
};

/// Matrices in an MLP: 3 for gated (SwiGLU), 2 for plain GeLU.
inline int mlpMatrices(const ModelSpec& m)
{
    return m.gated_mlp ? 3 : 2;
}

LayerParams denseLayerParams(const ModelSpec& m);
LayerParams moeLayerParams(const ModelSpec& m);

/// Megatron's padded vocabulary: ceil(V / (divisible_by·tp))·divisible_by·tp.
std::int64_t paddedVocab(std::int64_t vocab, int tp, int divisible_by = 128);

/// Number of MoE layers among layers [first, last).
int moeLayersIn(const ModelSpec& m, int first, int last);

/// Total parameters of the model with the unpadded vocabulary (what model cards quote):
/// layers + embedding (+ LM head when untied) + final norm.
double totalParameters(const ModelSpec& m);
/// Parameters one token passes through: MoE layers count k routed + shared experts.
double activeParameters(const ModelSpec& m);

/// Parameters of one multi-token-prediction module besides the shared embedding and output
/// head (DeepSeek-V3 Technical Report §2.2, Fig. 3): its Transformer block (the kind of the main
/// model's last layer, ModelSpec::mtpIsMoe()), the projection M_k (h × 2h, TP-sharded like a
/// column-parallel linear) and three norms (the RMSNorms of the hidden state and of the
/// embedding, and the block's output norm before the shared head; DeepSeek-V3's enorm, hnorm and
/// shared_head.norm, Megatron-LM's "MTP eh norm + final norm").
struct MtpModuleParams
{
    LayerParams block;
    double projection = 0; ///< 2h·h
    double norms = 0;      ///< 3 norms of h (LayerNorm: weight + bias)
    double total() const { return block.total() + projection + norms; }
};
MtpModuleParams mtpModuleParams(const ModelSpec& m);
/// All m.mtp_layers modules' own parameters (not counted in totalParameters(), which is the
/// main model's, as model cards quote it: DeepSeek-V3's 671 B without its MTP module).
double mtpParameters(const ModelSpec& m);

/// The layers one pipeline stage holds (all its virtual chunks).
struct StageLayers
{
    int layers = 0;
    int moe_layers = 0;
    bool first = false; ///< holds the embedding (the model's first chunk): stage 0
    /// holds the final norm and the LM head (the model's last chunk): stage p − 1, or stage 0
    /// under a V schedule (headDeviceOf), which then holds both ends
    bool last = false;
    /// multi-token-prediction modules it runs after the LM head (ModelSpec::mtp_layers on the
    /// stage with `last`, 0 elsewhere)
    int mtp = 0;
    /// of `layers` (and of `moe_layers`), those full recompute leaves alone under a layer count
    /// (TrainingSettings::recompute_num_layers): they keep all their activations. 0 otherwise.
    int stored = 0, stored_moe = 0;
    bool operator==(const StageLayers&) const = default;
};

/// A model chunk's layers on average, rounded down: m.layers over plan.pp · virtual_stages
/// (what torchtitan's every-k-th-block counter sees of each chunk).
inline int layersPerChunk(const ModelSpec& m, const ParallelPlan& plan)
{
    const int v = plan.virtual_stages > 1 ? plan.virtual_stages : 1;
    const int chunks = plan.pp * v;
    return m.layers / (chunks > 1 ? chunks : 1);
}

/// Splits m.layers over plan.pp stages × plan.virtual_stages chunks into `out` (size pp).
/// Explicit first/last_stage_layers (the layers of pipeline rank 0 and p − 1, Megatron's
/// decoder_first/last_pipeline_num_layers) win; otherwise as even as possible by `rule` over
/// the model chunks in model order (see LayerSplit). Layers of model chunk c are contiguous;
/// stage r holds chunks r, r + p, r + 2p, ... (looped), or r and 2p − 1 − r under a V schedule
/// (deviceOfChunk). With `recompute_per_chunk` > 0 (TrainingSettings::recomputedPerChunk()) a
/// chunk's layers after its first that many are counted as stored. Returns false (out untouched
/// beyond size) if the plan cannot be split.
bool splitLayers(const ModelSpec& m, const ParallelPlan& plan, LayerSplit rule,
                 std::span<StageLayers> out, int recompute_per_chunk = 0);
/// Layers of each model chunk in the order the model runs them (local chunk j of stage r is
/// out[modelChunkOf(layout, pp, r, j)]: j·pp + r looped), by the same split as splitLayers(). False
/// when out holds fewer than pp·v entries or the split does not add up to the layers.
bool splitChunks(const ModelSpec& m, const ParallelPlan& plan, LayerSplit rule, std::span<int> out);

/// Parameter tensors of one layer as the frameworks build it: one per weight matrix (q, k, v
/// and the output projection; with MLA the down- and up-projections, the latent norms and the
/// output projection), the MLP's matrices, the linears' biases in GPT-style (non-gated) models,
/// and the two norms' weights (and LayerNorm biases). An MoE layer (`moe`, on an MoE model) has
/// the router, one tensor per routed-expert matrix (torchtitan's GroupedExperts keeps a rank's
/// local experts in one 3-D tensor per matrix; Megatron's TEGroupedMLP one per expert, which
/// only changes the launches of a fused optimizer) and the shared experts' matrices in place of
/// the MLP. DeepSpeed's ZeRO-3 gathers them one by one; torch's foreach and for-loop optimizers
/// dispatch per tensor (optimizer_time.h).
double parameterTensorsPerLayer(const ModelSpec& m, bool moe = false);

/// Parameter tensors one GPU of a stage holds (under TP and FSDP2 each is a shard of the model's
/// tensor, so every rank holds all of them): its layers' and MTP modules', the word embedding
/// (and a learned position table) on the first stage, the final norm and the LM head (one
/// tensor with the embedding when tied on the same stage) on the stage with the head, and the
/// embedding copy an MTP stage keeps when it does not hold the embedding.
double stageParameterTensors(const ModelSpec& m, const StageLayers& st);

/// The counts stageParameterTensors() adds up, once per model (evaluate() counts every stage).
struct StageTensorCounts
{
    double dense_layer = 0, moe_layer = 0;
    double mtp_module = 0; ///< its block, the projection M_k and three norms
    double embedding = 0;  ///< the word embedding and a learned position table
    double head = 0;       ///< the final norm and the LM head
    bool tied = false;     ///< the LM head is the embedding where a stage holds both
};
StageTensorCounts stageTensorCounts(const ModelSpec& m);
inline double stageParameterTensors(const StageTensorCounts& c, const StageLayers& st)
{
    double t =
        double(st.layers - st.moe_layers) * c.dense_layer + double(st.moe_layers) * c.moe_layer;
    if (st.mtp > 0) // with the embedding copy of an MTP stage that lacks it
        t += st.mtp * c.mtp_module + (st.first ? 0 : 1);
    if (st.first)
        t += c.embedding;
    if (st.last)
        t += c.head - (c.tied && st.first ? 1 : 0);
    return t;
}

/// Parameters held by one GPU of a stage after TP / EP / PP sharding (before ZeRO).
struct StageParams
{
    double dense = 0;     ///< non-expert parameters on this GPU (TP-sharded part / t + replicated)
    double expert = 0;    ///< routed-expert parameters on this GPU (/ (t·ep))
    double embedding = 0; ///< word embedding and/or LM head on this GPU (included in dense)
    double largest_layer = 0; ///< the biggest layer on this GPU (ZeRO-3 gather unit)
    double total() const { return dense + expert; }
    bool operator==(const StageParams&) const = default;
};

StageParams stageParameters(const ModelSpec& m, const ParallelPlan& plan, const StageLayers& st,
                            int vocab_divisible_by = 128);
/// The same with the layer counts precomputed (denseLayerParams(m), moeLayerParams(m)).
StageParams stageParameters(const ModelSpec& m, const ParallelPlan& plan, const StageLayers& st,
                            const LayerParams& dense, const LayerParams& moe,
                            int vocab_divisible_by = 128);

} // namespace paralens
