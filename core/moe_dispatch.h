// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/constants.h"
#include "core/model_spec.h"
#include "core/plan.h"

namespace paralens {

/// The token dispatcher a plan uses: its own choice, or the framework's default when it says
/// "default": Megatron-Core allgather (TransformerConfig.moe_token_dispatcher_type), DeepSpeed-MoE
/// and torchtitan an all-to-all over the EP group (DeepEP / HybridEP are opt-in in both
/// Megatron-Core and torchtitan).
MoeDispatcher moeDispatcher(const ParallelPlan& plan, Framework framework);

/// Tokens on the busiest EP rank over the mean: the scenario's setting, else the framework's
/// default: DeepSpeed-MoE drops what exceeds capacity_factor = 1.0 and pads the rest to it
/// (deepspeed/moe/layer.py defaults), so every expert computes exactly the mean; Megatron-Core
/// and torchtitan are dropless (moe_expert_capacity_factor None), so the busiest rank carries
/// ModelConstants::ep_load_imbalance.
double moeLoadImbalance(const TrainingSettings& training, const ModelConstants& k);

/// Expected number of distinct units (GPUs, nodes) that one token's k routed experts land on,
/// the E experts split evenly into units of `per_unit` experts, with routing uniform over the
/// experts or, with group-limited routing, over the experts of group_top_k uniformly chosen
/// groups (Megatron-Core --moe-router-num-groups / --moe-router-group-topk). This is how many
/// copies of a token a dispatcher that sends one copy per destination (DeepEP) moves.
double expectedDestinations(const MoeSpec& moe, double per_unit);

} // namespace paralens
