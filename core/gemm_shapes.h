// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/scenario.h"

#include <string>
#include <vector>

namespace paralens {

/// One matmul (m×k)·(k×n): 2·m·n·k FLOPs.
struct GemmShape
{
    std::string label;
    long long m = 0, n = 0, k = 0;
};

/// The GEMMs of one transformer layer for one micro-batch on one GPU (forward): tokens m =
/// micro_batch · seq_len / cp; weights split by tp. qkv (n = (heads + 2·kv_heads)·head_dim/tp),
/// attn_out (k = heads·head_dim/tp), mlp_up (n = (2 if gated else 1)·ffn/tp) and mlp_down when
/// the model has dense layers, and expert_up / expert_down for MoE models with
/// tokens·top_k·ep/experts tokens per expert (expert tensor parallelism 1). With MLA, qkv is
/// replaced by mla_down (both down-projections, whole, on the rank's tokens: ÷ tp with SP),
/// mla_q_up and mla_kv_up (÷ tp), and attn_out's k is heads·v_head_dim/tp. Shapes with a zero
/// dimension are left out.
std::vector<GemmShape> layerGemmShapes(const Scenario& s);

} // namespace paralens
