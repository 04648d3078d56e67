// SPDX-License-Identifier: GPL-3.0-or-later
// Model shapes used by several core tests, typed in from the papers (not from presets), so a
// preset edit cannot move a test's oracle.
#pragma once
#include "core/model_spec.h"

namespace paralens::testmodels {

/// Llama 3 paper Table 3; V = 128,256 (released tokenizer); RMSNorm, SwiGLU, untied, 8 KV heads.
inline ModelSpec llama3(int layers, std::int64_t h, int heads, std::int64_t ffn)
{
    ModelSpec m;
    m.name = "llama3";
    m.layers = layers;
    m.hidden = h;
    m.heads = heads;
    m.kv_heads = 8;
    m.ffn_hidden = ffn;
    m.vocab = 128256;
    m.gated_mlp = true;
    m.tied_embeddings = false;
    return m;
}
inline ModelSpec llama3_8b()
{
    return llama3(32, 4096, 32, 14336);
}
inline ModelSpec llama3_70b()
{
    return llama3(80, 8192, 64, 28672);
}
inline ModelSpec llama3_405b()
{
    return llama3(126, 16384, 128, 53248);
}

/// GPT as in Narayanan et al. 2021 Table 1 (V = 51,200, ffn = 4h, LayerNorm, biases, tied,
/// learned positions).
inline ModelSpec gpt(int layers, std::int64_t h, int heads)
{
    ModelSpec m;
    m.name = "gpt";
    m.layers = layers;
    m.hidden = h;
    m.heads = heads;
    m.kv_heads = heads;
    m.ffn_hidden = 4 * h;
    m.vocab = 51200;
    m.gated_mlp = false;
    m.position_embedding = PositionEmbedding::Learned;
    m.norm = NormType::LayerNorm;
    m.tied_embeddings = true;
    return m;
}
inline ModelSpec gpt3_175b()
{
    return gpt(96, 12288, 96);
}

/// Mixtral-8x7B shapes (model card): 32 layers, h 4096, 32 heads, 8 KV, 8 experts top-2.
inline ModelSpec mixtral8x7b()
{
    ModelSpec m = llama3(32, 4096, 32, 14336);
    m.vocab = 32000;
    m.moe.experts = 8;
    m.moe.top_k = 2;
    m.moe.expert_ffn_hidden = 14336;
    return m;
}

} // namespace paralens::testmodels
