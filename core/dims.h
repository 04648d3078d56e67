// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/model_spec.h"
#include "core/params.h"
#include "core/plan.h"
#include "core/scenario.h"

#include <algorithm>

namespace paralens {

/// Shapes and settings that decide activation memory of one micro-batch.
struct ActivationShape
{
    double seq = 0;         ///< s, tokens per sequence
    double micro_batch = 1; ///< b
    int tp = 1;
    bool sequence_parallel = false;
    int cp = 1;
    Recompute recompute = Recompute::None;
    /// Megatron's selective recompute modules (TrainingSettings::recompute_modules).
    std::uint8_t recompute_modules = kRecomputeCoreAttn;
    bool flash_attention = false;
    bool dropout = true; ///< dropout masks are stored (Korthikanti et al. 2022 count them)
    SelectivePolicy selective = SelectivePolicy::AttentionCore; ///< what selective keeps
    bool tp_gathered_input = false; ///< SP: linears save their gathered input (DTensor TP)
    bool fp8_linear_inputs = false; ///< linears save their inputs in FP8 (Transformer Engine)
    /// FP8 linears whose bf16 input another op holds save that, no FP8 copy (Megatron, recipes
    /// other than delayed: FrameworkConventions::fp8_reuses_held_inputs).
    bool fp8_reuses_held_inputs = false;
    bool moe_combine_keeps_outputs = true; ///< FrameworkConventions::moe_combine_keeps_outputs
    /// From a scenario (its model is not needed here).
    static ActivationShape of(const Scenario& s);
    /// The same with a framework's selective policy and TP layout.
    static ActivationShape of(const Scenario& s, const FrameworkConventions& fw);
};

/// The sizes the memory and time formulas multiply and divide by, as doubles, in the notation of
/// docs/formulas.md: one micro-batch on one GPU. Degrees are at least 1.
struct Dims
{
    double s = 0;     ///< tokens per sequence
    double b = 1;     ///< micro-batch, sequences
    double h = 0;     ///< hidden width
    double heads = 0; ///< a, attention heads
    double q = 0;     ///< query width a·d_h
    double kv = 0;    ///< key/value width g·d_h (g = a without GQA); MLA n_h·(d_qk + d_v)/2
    double o = 0;     ///< attention output width (out-projection input): q, MLA n_h·d_v
    double core = 0;  ///< core attention FLOPs are 4·N·s·core: q, MLA n_h·(d_qk + d_v)/2
    /// MLA latents a layer stores per token for its backward (Megatron-Core, sequence-sharded
    /// with SP): both latents before and after their RMSNorm, 2·(d_c' + d_c); 0 without MLA.
    /// (the RoPE key part goes straight into K, which is counted with it).
    double latent = 0;
    double c = 2;      ///< matrices in the MLP: 2 plain, 3 gated (mlpMatrices())
    double t = 1;      ///< TP
    double tsp = 1;    ///< t with sequence parallelism, else 1: what replicated tensors divide by
    double cp = 1;     ///< CP
    double ep = 1;     ///< EP
    double etp = 1;    ///< expert TP (ParallelPlan::expertTp())
    double tokens = 0; ///< N = b·s/cp, tokens of one micro-batch on one CP rank

    /// Bytes per token per MLP hidden unit that the MLP stores for its backward: 2 bytes for
    /// each of the c − 1 matrix outputs and the fc2 input, i.e. 4 plain (GeLU input and fc2
    /// input, Korthikanti et al. 2022 §4.1), 6 gated (gate and up outputs and their product).
    double mlpStoredBytes() const { return 2 * c; }
};

/// `ep` and `etp` are the plan's expert-parallel and expert-TP degrees (activation memory does
/// not depend on them; etp 0 = TP). Inline: the memory formulas build one per call and use a
/// few of its fields.
Dims dimsOf(const ModelSpec& m, const ActivationShape& a, int ep = 1, int etp = 0);

/// What ZeRO divides a stage's model states by (Rajbhandari et al. 2020): dense parameters are
/// sharded over the shard group × CP (the gradient-reduction group, Megatron
/// param_and_grad_buffer.py), routed experts over the expert-data-parallel group, that group
/// × TP ÷ (expert TP × EP) (MoE parallel folding; at least 1).
struct ZeroShards
{
    double dense = 1;
    double expert = 1;
};
ZeroShards zeroShards(const ParallelPlan& p);

inline ActivationShape ActivationShape::of(const Scenario& s)
{
    ActivationShape a;
    a.seq = s.training.seq_len;
    a.micro_batch = s.training.micro_batch;
    a.tp = s.parallel.tp;
    a.sequence_parallel = s.parallel.sequence_parallel;
    a.cp = s.parallel.cp;
    a.recompute = s.training.recompute;
    a.recompute_modules = s.training.recompute_modules;
    a.flash_attention = s.training.flash_attention;
    a.dropout = s.training.dropoutOn();
    return a;
}

inline ActivationShape ActivationShape::of(const Scenario& s, const FrameworkConventions& fw)
{
    ActivationShape a = of(s);
    a.selective = fw.selective;
    a.tp_gathered_input = fw.tp_saves_gathered_input && a.sequence_parallel && a.tp > 1;
    a.fp8_linear_inputs = fw.fp8_saves_quantized_inputs;
    a.fp8_reuses_held_inputs = fw.fp8_reuses_held_inputs;
    a.moe_combine_keeps_outputs = fw.moe_combine_keeps_outputs;
    return a;
}

/// The modules Megatron's selective recompute repeats (0 under none, full, or a framework's own
/// selective policy, SelectivePolicy::SaveMatmuls): one test, then bit tests.
inline std::uint8_t recomputedModules(const ActivationShape& a)
{
    return a.recompute == Recompute::Selective && a.selective != SelectivePolicy::SaveMatmuls
               ? a.recompute_modules
               : std::uint8_t{0};
}

/// Whether selective recompute repeats module `m` under Megatron's module list.
inline bool recomputes(const ActivationShape& a, RecomputeModule m)
{
    return (recomputedModules(a) & m) != 0;
}

inline Dims dimsOf(const ModelSpec& m, const ActivationShape& a, int ep, int etp)
{
    Dims d;
    d.s = a.seq;
    d.b = a.micro_batch;
    d.h = double(m.hidden);
    d.heads = m.heads;
    if (m.isMla()) {
        const double n = m.heads;
        d.q = n * double(m.mla.qkHeadDim());
        d.o = n * double(m.mla.v_head_dim);
        d.kv = (d.q + d.o) / 2;
        d.core = d.kv;
        d.latent = 2.0 * double(m.mla.q_lora_rank + m.mla.kv_lora_rank);
    } else {
        d.q = double(m.heads) * double(m.headDim());
        d.kv = double(m.kv_heads > 0 ? m.kv_heads : m.heads) * double(m.headDim());
        d.o = d.q;
        d.core = d.q;
    }
    d.c = mlpMatrices(m);
    d.t = std::max(1, a.tp);
    d.tsp = a.sequence_parallel ? d.t : 1.0;
    d.cp = std::max(1, a.cp);
    d.ep = std::max(1, ep);
    d.etp = etp > 0 ? etp : d.t;
    d.tokens = d.b * d.s / d.cp;
    return d;
}

inline ZeroShards zeroShards(const ParallelPlan& p)
{
    ZeroShards z;
    z.dense = double(p.shardGroup()) * std::max(1, p.cp);
    // Expert DP group = tp·cp·dp / (etp·ep); with etp = tp that is dp·cp/ep.
    z.expert =
        std::max(1.0, z.dense * std::max(1, p.tp) / (double(p.expertTp()) * std::max(1, p.ep)));
    return z;
}

} // namespace paralens
