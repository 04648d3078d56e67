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
///                              1-byte dropout masks), divided by t only with SP;
///   TP-sharded part            sb·[2(q + 2kv) + 2q + (4 | 6)·ffn] / t (Q, K, V, out-proj input,
///                              GeLU input + fc2 input, or gate/up outputs + product);
///   score matrices             5·a·s²·b / t unless flash attention or selective recompute;
///   full recompute             only the layer input, 2sbh (/t with SP);
/// and everything divided by CP. For GPT shapes this is exactly Table 2.
double denseLayerActivationBytes(const ModelSpec& m, const ActivationShape& a);

/// Bytes one MoE layer stores for one micro-batch (docs/formulas.md §3.2 🔢): the attention and
/// norm part as dense, then per token on the rank router/MLP input 2h, k permuted copies
/// (2h + (4|6)·ffn_e/t each), a 2kh combine buffer, the shared experts and fp32 router logits.
double moeLayerActivationBytes(const ModelSpec& m, const ActivationShape& a);

/// Bytes for the stage-0 extras of one micro-batch: token ids (8sb) + embedding dropout mask.
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

/// ZeRO semantics (Rajbhandari et al. 2020) with a framework's dtypes, for `params` parameters
/// replicated over a shard group of `shard` GPUs: stage 0 nothing sharded; 1 optimizer states
/// (Megatron's distributed optimizer); 2 + gradients; 3 (FSDP FULL_SHARD) + parameters.
/// `offload` moves the optimizer states to host memory.
ModelStateBytes modelStateBytes(double params, const FrameworkConventions& fw, int zero,
                                double shard, bool offload);

/// Memory of every pipeline stage of a scenario into est.stages (resized to pp; no allocation
/// when its capacity suffices). `inflight` gives the micro-batches in flight per stage
/// (pipelineCost()), `layers`/`params` the split (splitLayers(), stageParameters()).
void stageMemory(const Scenario& s, const FrameworkConventions& fw, const ModelConstants& k,
                 std::span<const StageLayers> layers, std::span<const StageParams> params,
                 std::span<const double> inflight, Estimate& est);

} // namespace paralens
