// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/constants.h"
#include "core/dims.h"
#include "core/estimate.h"
#include "core/framework.h"
#include "core/params.h"
#include "core/scenario.h"

namespace paralens {

/// Bytes one dense transformer layer stores for one micro-batch (Korthikanti et al. 2022,
/// Table 2, generalised to GQA and gated MLPs as docs/formulas.md §3.2 does):
///   replicated-across-TP part  sbh·10 (two norm inputs 4, QKV input 2, fc1 input 2, two
///                              1-byte dropout masks), divided by t only with SP (the QKV and
///                              fc1 inputs whole when TP saves the gathered input);
///   TP-sharded part            sb·[2(q + 2kv) + 2q + (4 | 6)·ffn] / t (Q, K, V, out-proj input,
///                              GeLU input + fc2 input, or gate/up outputs + product);
///   score matrices             5·a·s²·b / t unless flash attention or selective recompute
///                              (2·a·s²·b without dropout: the softmax output alone);
///   full recompute             only the layer input, 2sbh (/t with SP);
///   per-op selective (torchtitan) the block input, Q, V, the first MLP matmul's output, the
///                              down projection's (gated), the SDPA output and its log-sum-exp;
/// and everything divided by CP. Without dropout the masks go. For GPT shapes with dropout this
/// is exactly Table 2.
double denseLayerActivationBytes(const ModelSpec& m, const ActivationShape& a);

/// Bytes one MoE layer stores for one micro-batch (docs/formulas.md §3.2 🔢): the attention and
/// norm part as dense, then per token on the rank router/MLP input 2h, k permuted copies
/// (2h + (4|6)·ffn_e/t each), a 2kh combine buffer, the shared experts and fp32 router logits.
double moeLayerActivationBytes(const ModelSpec& m, const ActivationShape& a);

/// Bytes for the stage-0 extras of one micro-batch: token ids (8sb) + the embedding dropout
/// mask (none without dropout).
double embeddingActivationBytes(const ModelSpec& m, const ActivationShape& a);
/// Last-stage extras of one micro-batch: final-norm input, LM-head input and fp32 logits.
double headActivationBytes(const ModelSpec& m, const ActivationShape& a, std::int64_t vocab_pad);

/// Model states of one GPU: parameters, gradients and optimizer states.
struct ModelStateBytes
{
    double parameters = 0;
    double gradients = 0;
    double optimizer_states = 0;
    double total() const { return parameters + gradients + optimizer_states; }
};

/// The parameters of a stage's layer linears (what FP8 GEMMs read): all but the embedding and
/// LM head; norms, biases and routers, well under 1 % of a layer, are counted with them.
double linearWeights(const StageParams& sp);

/// ZeRO semantics (Rajbhandari et al. 2020) with a framework's dtypes, for `params` parameters
/// replicated over a shard group of `shard` GPUs: stage 0 nothing sharded; 1 optimizer states
/// (Megatron's distributed optimizer); 2 + gradients; 3 (FSDP FULL_SHARD) + parameters.
/// `offload` moves the optimizer states to host memory. With FSDP2's conventions
/// (sharded_param_is_master) the parameters are the fp32 master shard, plus the bf16 compute
/// copy of the whole stage while it is kept gathered (stageKeptGathered()), and under PP the
/// unsharded gradient accumulator in the reduce dtype; offload moves all three to the host
/// (CPUOffloadPolicy).
ModelStateBytes modelStateBytes(double params, const FrameworkConventions& fw, int zero,
                                double shard, bool offload);

/// The stage's bf16 compute copy stays gathered across its forward and backward: FSDP2 with
/// ZeRO ≤ 2 (SHARD_GRAD_OP, or DDP's autocast copies), without reshard-after-forward, or under PP.
bool stageKeptGathered(const FrameworkConventions& fw, int zero);

/// Memory of every pipeline stage of a scenario into est.stages: model states, the activations
/// of the in-flight micro-batches (the head's extras for headInflightMicrobatches() of them on
/// the stage with the LM head: the last, or stage 0 under a V) plus the larger of the loss's
/// fp32 logits copies (that stage) and one layer's recompute working set, buffers, runtime
/// overhead, and the caching allocator's reserve beyond the live tensors
/// (StageMemory::allocator_cached). est.stages is resized to pp (no allocation when its capacity
/// suffices). `inflight` gives the micro-batches in flight per stage (pipelineCost()),
/// `layers`/`params` the split (splitLayers(), stageParameters()).
void stageMemory(const Scenario& s, const FrameworkConventions& fw, const ModelConstants& k,
                 std::span<const StageLayers> layers, std::span<const StageParams> params,
                 std::span<const double> inflight, Estimate& est);

} // namespace paralens
