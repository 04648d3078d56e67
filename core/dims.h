// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/model_spec.h"
#include "core/plan.h"
#include "core/scenario.h"

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
    bool flash_attention = false;
    /// From a scenario (its model is not needed here).
    static ActivationShape of(const Scenario& s);
};

/// The sizes the memory and time formulas multiply and divide by, as doubles, in the notation of
/// docs/formulas.md: one micro-batch on one GPU. Degrees are at least 1.
struct Dims
{
    double s = 0;      ///< tokens per sequence
    double b = 1;      ///< micro-batch, sequences
    double h = 0;      ///< hidden width
    double heads = 0;  ///< a, attention heads
    double q = 0;      ///< query width a·d_h
    double kv = 0;     ///< key/value width g·d_h (g = a without GQA)
    double c = 2;      ///< matrices in the MLP: 2 plain, 3 gated (mlpMatrices())
    double t = 1;      ///< TP
    double tsp = 1;    ///< t with sequence parallelism, else 1: what replicated tensors divide by
    double cp = 1;     ///< CP
    double ep = 1;     ///< EP
    double tokens = 0; ///< N = b·s/cp, tokens of one micro-batch on one CP rank

    /// Bytes per token per MLP hidden unit that the MLP stores for its backward: 2 bytes for
    /// each of the c − 1 matrix outputs and the fc2 input, i.e. 4 plain (GeLU input and fc2
    /// input, Korthikanti et al. 2022 §4.1), 6 gated (gate and up outputs and their product).
    double mlpStoredBytes() const { return 2 * c; }
};

/// `ep` is the plan's expert-parallel degree (activation memory does not depend on it).
Dims dimsOf(const ModelSpec& m, const ActivationShape& a, int ep = 1);

/// What ZeRO divides a stage's model states by (Rajbhandari et al. 2020): dense parameters are
/// sharded over the shard group × CP (the gradient-reduction group, Megatron
/// param_and_grad_buffer.py), routed experts over that group ÷ EP (at least 1).
struct ZeroShards
{
    double dense = 1;
    double expert = 1;
};
ZeroShards zeroShards(const ParallelPlan& p);

} // namespace paralens
