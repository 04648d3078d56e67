// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/gemm_shapes.h"

#include <algorithm>

namespace paralens {

std::vector<GemmShape> layerGemmShapes(const Scenario& sc)
{
    const auto& m = sc.model;
    const long long t = std::max(1, sc.parallel.tp);
    const long long tokens = static_cast<long long>(sc.training.micro_batch) * sc.training.seq_len /
                             std::max(1, sc.parallel.cp);
    const long long hd = m.headDim();
    const long long gate = m.gated_mlp ? 2 : 1;
    std::vector<GemmShape> s;
    auto add = [&](const char* label, long long rows, long long cols, long long inner) {
        if (rows > 0 && cols > 0 && inner > 0)
            s.push_back({label, rows, cols, inner});
    };
    if (m.isMla()) { // Megatron-Core MLA: down-projections whole on every rank, the rest by heads
        const MlaSpec& a = m.mla;
        const long long tsp = sc.parallel.sequence_parallel ? t : 1;
        add("mla_down", tokens / tsp, a.q_lora_rank + a.kv_lora_rank + a.qk_rope_head_dim,
            m.hidden);
        add("mla_q_up", tokens, m.heads * a.qkHeadDim() / t,
            a.q_lora_rank > 0 ? a.q_lora_rank : m.hidden);
        add("mla_kv_up", tokens, m.heads * (a.qk_nope_head_dim + a.v_head_dim) / t, a.kv_lora_rank);
        add("attn_out", tokens, m.hidden, m.heads * a.v_head_dim / t);
    } else {
        add("qkv", tokens, (m.heads + 2LL * m.kv_heads) * hd / t, m.hidden);
        add("attn_out", tokens, m.hidden, m.heads * hd / t);
    }
    bool dense = !m.isMoe();
    for (int i = 0; i < m.layers && !dense; ++i)
        dense = !m.isMoeLayer(i);
    if (dense) {
        add("mlp_up", tokens, gate * m.ffn_hidden / t, m.hidden);
        add("mlp_down", tokens, m.hidden, m.ffn_hidden / t);
    }
    if (m.isMoe()) {
        // The expert TP × EP group's N/t tokens per rank reach each expert, 1/etp of it here.
        const long long etp = sc.parallel.expertTp();
        const long long perExpert = std::max<long long>(
            1, tokens / t * etp * m.moe.top_k * std::max(1, sc.parallel.ep) / m.moe.experts);
        add("expert_up", perExpert, gate * m.moe.expert_ffn_hidden / etp, m.hidden);
        add("expert_down", perExpert, m.hidden, m.moe.expert_ffn_hidden / etp);
    }
    return s;
}

} // namespace paralens
