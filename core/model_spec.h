// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include <cstdint>
#include <string>

namespace paralens {

/// Mixture-of-experts part of a transformer. experts == 0 means a dense model.
struct MoeSpec
{
    int experts = 0;                    ///< routed experts per MoE layer (E)
    int top_k = 0;                      ///< routed experts per token (k)
    std::int64_t expert_ffn_hidden = 0; ///< hidden size of one routed expert's MLP (ffn_e)
    int shared_experts = 0;             ///< always-active experts, each of expert_ffn_hidden
    int layer_frequency = 1;            ///< every n-th layer is MoE (1 = all layers)
    int first_dense_layers = 0;         ///< leading layers that stay dense (DeepSeek-V3: 3)
    /// Group-limited routing (Megatron-Core --moe-router-num-groups / --moe-router-group-topk,
    /// DeepSeek-V3 §2.1.2 node-limited routing): the experts form `groups` equal groups and a
    /// token picks its k experts inside `group_top_k` of them. 0 = routing over all experts.
    int groups = 0;
    int group_top_k = 0;
};

/// Multi-head latent attention (DeepSeek-AI 2024, "DeepSeek-V2", arXiv:2405.04434, §2.1;
/// Megatron-Core transformer/multi_latent_attention.py). Keys and values are up-projected from
/// a kv_lora_rank-wide latent, queries from a q_lora_rank-wide one; each head's query and key are
/// qk_nope_head_dim + qk_rope_head_dim wide (the RoPE part of the key is one shared
/// qk_rope_head_dim vector per token), its value v_head_dim. kv_lora_rank == 0 means no MLA.
struct MlaSpec
{
    std::int64_t q_lora_rank = 0;  ///< d_c' (0: queries projected straight from h, V2-Lite)
    std::int64_t kv_lora_rank = 0; ///< d_c
    std::int64_t qk_nope_head_dim = 0;
    std::int64_t qk_rope_head_dim = 0;
    std::int64_t v_head_dim = 0;

    bool enabled() const { return kv_lora_rank > 0; }
    std::int64_t qkHeadDim() const { return qk_nope_head_dim + qk_rope_head_dim; }
};

/// How a model gives its layers token positions: rotary embeddings applied to q and k in every
/// layer (RoPE, Su et al. 2021, arXiv:2104.09864), a learned absolute table added to the token
/// embeddings once (GPT-2/GPT-3; Megatron's learned_absolute), or nothing in the layers (ALiBi's
/// attention biases, Press et al. 2021, or no positions at all).
enum class PositionEmbedding
{
    Rope,
    Learned,
    None
};

/// The layers' normalisation: RMSNorm (Zhang & Sennrich 2019; one weight vector) or LayerNorm
/// (Ba et al. 2016; weight and bias).
enum class NormType
{
    RmsNorm,
    LayerNorm
};

/// The convention for a model that does not name its positions or norm: gated (Llama-style)
/// models use RoPE and RMSNorm, plain GeLU (GPT-style) models learned positions and LayerNorm.
constexpr PositionEmbedding conventionalPositionEmbedding(bool gated_mlp)
{
    return gated_mlp ? PositionEmbedding::Rope : PositionEmbedding::Learned;
}
constexpr NormType conventionalNorm(bool gated_mlp)
{
    return gated_mlp ? NormType::RmsNorm : NormType::LayerNorm;
}

/// A decoder-only transformer, in the notation of docs/formulas.md.
struct ModelSpec
{
    std::string name;
    int layers = 0;              ///< L
    std::int64_t hidden = 0;     ///< h
    int heads = 0;               ///< a
    int kv_heads = 0;            ///< g (query groups); == heads for MHA
    std::int64_t head_dim = 0;   ///< d_h; 0 means hidden / heads
    std::int64_t ffn_hidden = 0; ///< dense MLP hidden size
    std::int64_t vocab = 0;      ///< V (unpadded)
    bool gated_mlp = true;       ///< SwiGLU (3 matrices) or plain GeLU MLP (2)
    /// Set both with the convention of gated_mlp (conventionalPositionEmbedding()) unless the
    /// source names them; the defaults here are gated_mlp's default's.
    PositionEmbedding position_embedding = PositionEmbedding::Rope;
    NormType norm = NormType::RmsNorm;
    bool tied_embeddings = false;
    /// A norm (model.norm's kind) of q and of k before attention: Qwen3, Gemma 3 and OLMo 2,
    /// Megatron-Core --qk-layernorm. Two more norm kernels per layer over the q and kv
    /// elements, and their inputs kept for the backward; their weights (2·d_h per layer, q + kv
    /// in OLMo 2) are not counted.
    bool qk_norm = false;
    MoeSpec moe;
    MlaSpec mla; ///< attention is MLA (heads = n_h, kv_heads = heads) when mla.enabled()
    /// Multi-token-prediction modules (DeepSeek-AI 2024, "DeepSeek-V3 Technical Report",
    /// arXiv:2412.19437, §2.2, Fig. 3: depth D; §4.2 sets D = 1). Module k takes the previous
    /// depth's hidden state and the embedding of token i + k, RMSNorms both, projects their
    /// concatenation with M_k (h × 2h) and runs one Transformer block, then the shared output
    /// head and its cross-entropy. Embedding and head are the main model's (no new parameters).
    /// They run after the last layer, on the stage that holds the LM head. 0 = no MTP.
    int mtp_layers = 0;

    bool isMoe() const { return moe.experts > 0; }
    bool isMla() const { return mla.enabled(); }
    std::int64_t headDim() const
    {
        return head_dim > 0 ? head_dim : (heads > 0 ? hidden / heads : 0);
    }
    /// True when an MTP module's Transformer block is an MoE block: it has the main model's last
    /// layer's kind (DeepSeek-V3's model.layers.61 is an MoE layer, README_WEIGHTS.md of
    /// deepseek-ai/DeepSeek-V3; Megatron-Core builds its MTP block from the decoder layer spec).
    bool mtpIsMoe() const { return isMoeLayer(layers - 1); }
    /// True when layer i (0-based) is an MoE layer.
    bool isMoeLayer(int i) const
    {
        if (!isMoe() || i < moe.first_dense_layers)
            return false;
        const int f = moe.layer_frequency > 0 ? moe.layer_frequency : 1;
        return (i - moe.first_dense_layers) % f == 0;
    }
};

} // namespace paralens
