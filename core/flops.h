// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/model_spec.h"
#include "core/plan.h"

#include <cstdint>

namespace paralens {

/// Forward FLOPs of one transformer layer for `tokens` tokens of sequences of length `seq`,
/// from the matrix shapes (docs/formulas.md §2.1, full s² convention: a matmul of (m×k)·(k×n) costs
/// 2mnk; the causal mask is not subtracted).
struct LayerFlops
{
    double qkv = 0;            ///< 2·N·h·(q + 2kv); MLA: down- and up-projections
    double attention_core = 0; ///< scores + attention·V: 4·N·s·q; MLA 2·N·s·n_h·(d_qk + d_v)
    double out_proj = 0;       ///< 2·N·q·h; MLA 2·N·n_h·d_v·h
    double mlp = 0; ///< dense MLP 2·c·N·h·ffn, or routed experts 2·c·N·k·h·ffn_e
    double shared_experts = 0; ///< 2·c·N·h·ffn_sh
    double router = 0;         ///< 2·N·h·E (left out of model FLOPs, as Megatron does)
    double up_proj = 0;        ///< MLA's up-projections from the latents (part of qkv)

    double gemm() const { return qkv + out_proj + mlp + shared_experts + router; }
    double total() const { return gemm() + attention_core; }
};

LayerFlops denseLayerFlops(const ModelSpec& m, double tokens, double seq);
LayerFlops moeLayerFlops(const ModelSpec& m, double tokens, double seq);
/// Forward FLOPs of the LM head (logits) for `tokens` tokens: 2·N·h·vocab. Inline: the search's
/// evaluation counts it per plan.
inline double lmHeadFlops(const ModelSpec& m, double tokens, double vocab)
{
    return 2 * tokens * double(m.hidden) * vocab;
}

/// Forward FLOPs of one multi-token-prediction module for `tokens` tokens (DeepSeek-V3
/// Technical Report §2.2, Fig. 3): its Transformer block (ModelSpec::mtpIsMoe()), the projection
/// M_k, 2·N·2h·h, and one more pass of the shared LM head, 2·N·h·vocab. The norms and the
/// cross-entropy are element-wise (no FLOPs counted, as for the main model's).
struct MtpFlops
{
    LayerFlops block;
    double projection = 0;
    double head = 0;
    double total() const { return block.total() + projection + head; }
};
MtpFlops mtpModuleFlops(const ModelSpec& m, double tokens, double seq, double vocab);

/// Model FLOPs per optimizer step (PaLM / Korthikanti §6.3 definition): one forward and one
/// backward (= 2× forward) of every layer and the LM head, no recomputation, full s², the
/// unpadded vocabulary, router excluded. For GPT shapes this is Korthikanti Eq. 7,
/// 72·B·L·s·h²·(1 + s/(6h) + V/(12hL)); in general
///   F = 6·T·(weights a token passes through) + 12·T·s·q·L  (T = B·s tokens),
/// which generalises Narayanan's 6·T·P to GQA, gated MLPs and MoE (k routed + shared experts).
/// MTP modules count (three times mtpModuleFlops() each) as Megatron-LM's
/// num_floating_point_operations() counts them (training.py: the MTP layers, their projection
/// and one more logits pass per module).
double modelFlopsPerStep(const ModelSpec& m, double global_batch, double seq);

/// Hardware FLOPs per step: model FLOPs with the padded vocabulary and the router, plus
/// recomputation: full adds one forward of every transformer layer (so for GPT shapes this is
/// Narayanan Eq. 3), selective adds one forward of the attention core, 4·T·s·q per layer
/// (docs/formulas.md §2.1). Korthikanti's Eq. 8 adds three times that (12·T·s·h per layer); we
/// count the work actually repeated, and FlashAttention's own tile recomputation is not counted.
/// MTP modules as in modelFlopsPerStep(), their blocks recomputed like the layers. Selective
/// recompute with Megatron's `modules` (TrainingSettings::recompute_modules) adds what they
/// repeat: MLA's up-projections, a dense layer's MLP, an MoE layer's experts and router, its
/// shared experts. `op_sac`: selective is torchtitan's per-op SAC instead, which repeats K, O and
/// the MLP's second matmul (w3, or a plain MLP's fc2) of a dense layer and half the matmuls of
/// an MoE or MLA layer, and not the attention core (kernel_time.cpp opSacRecomputeSeconds()).
double hardwareFlopsPerStep(const ModelSpec& m, double global_batch, double seq, Recompute r,
                            std::int64_t vocab_pad, std::uint8_t modules = kRecomputeCoreAttn,
                            bool op_sac = false);

/// Forward FLOPs per step of `dense` dense and `moe` MoE layers, router included: what full
/// recompute does not repeat of the layers a layer count leaves stored (recompute_num_layers).
double layersForwardFlopsPerStep(const ModelSpec& m, double global_batch, double seq, int dense,
                                 int moe);

/// Both of the above, their layers' FLOPs computed once (evaluate() wants both).
struct StepFlops
{
    double model = 0;    ///< modelFlopsPerStep()
    double hardware = 0; ///< hardwareFlopsPerStep()
};
StepFlops stepFlops(const ModelSpec& m, double global_batch, double seq, Recompute r,
                    std::int64_t vocab_pad, std::uint8_t modules = kRecomputeCoreAttn,
                    bool op_sac = false);

} // namespace paralens
