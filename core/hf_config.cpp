// SPDX-License-Identifier: GPL-3.0-or-later
// Hugging Face config.json -> ModelSpec. The key names and the defaults used when a key is
// absent are those of the transformers configuration classes (configuration_<family>.py);
// docs/cli.md (import-model) lists what each family reads.
#include "core/hf_config.h"

#include "core/error.h"
#include "core/input_file.h"
#include "core/json_reader.h"
#include "core/params.h"
#include "core/spec_io.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>

namespace paralens {
namespace {

using nlohmann::json;

enum class Kind
{
    Llama,
    Mistral,
    Mixtral,
    Qwen2,
    Qwen2Moe,
    Qwen3,
    Qwen3Moe,
    DeepseekV2,
    DeepseekV3,
    Gemma,
    Gemma2,
    Gemma3,
    Gemma3Multimodal,
    Phi3,
    Olmo2,
    GptNeox
};

struct Family
{
    const char* architecture;
    const char* model_type;
    const char* name;
    Kind kind;
};

constexpr Family kFamilies[] = {
    {"LlamaForCausalLM", "llama", "Llama", Kind::Llama},
    {"MistralForCausalLM", "mistral", "Mistral", Kind::Mistral},
    {"MixtralForCausalLM", "mixtral", "Mixtral", Kind::Mixtral},
    {"Qwen2ForCausalLM", "qwen2", "Qwen2", Kind::Qwen2},
    {"Qwen2MoeForCausalLM", "qwen2_moe", "Qwen2-MoE", Kind::Qwen2Moe},
    {"Qwen3ForCausalLM", "qwen3", "Qwen3", Kind::Qwen3},
    {"Qwen3MoeForCausalLM", "qwen3_moe", "Qwen3-MoE", Kind::Qwen3Moe},
    {"DeepseekV2ForCausalLM", "deepseek_v2", "DeepSeek-V2", Kind::DeepseekV2},
    {"DeepseekV3ForCausalLM", "deepseek_v3", "DeepSeek-V3", Kind::DeepseekV3},
    {"GemmaForCausalLM", "gemma", "Gemma", Kind::Gemma},
    {"Gemma2ForCausalLM", "gemma2", "Gemma 2", Kind::Gemma2},
    {"Gemma3ForCausalLM", "gemma3_text", "Gemma 3", Kind::Gemma3},
    {"Gemma3ForConditionalGeneration", "gemma3", "Gemma 3", Kind::Gemma3Multimodal},
    {"Phi3ForCausalLM", "phi3", "Phi-3", Kind::Phi3},
    {"Olmo2ForCausalLM", "olmo2", "OLMo 2", Kind::Olmo2},
    {"GPTNeoXForCausalLM", "gpt_neox", "GPT-NeoX", Kind::GptNeox},
};

bool isMoeKind(Kind k)
{
    return k == Kind::Mixtral || k == Kind::Qwen2Moe || k == Kind::Qwen3Moe ||
           k == Kind::DeepseekV2 || k == Kind::DeepseekV3;
}

bool isGemma(Kind k)
{
    return k == Kind::Gemma || k == Kind::Gemma2 || k == Kind::Gemma3 ||
           k == Kind::Gemma3Multimodal;
}

std::string fmt(double v)
{
    return jsonio::number(v);
}

// One config object (the top level, or Gemma 3's text_config): typed reads with the bounds of
// spec_io.h, null read as absent (config.json writes unset options as null), and a record of
// the keys read so that the rest can be listed.
class Config
{
public:
    Config(const json& j, std::string path) : m_j(j), m_path(std::move(path))
    {
        if (!j.is_object())
            throw InputError(m_path, (m_path.empty() ? std::string("the file") : m_path) +
                                         ": expected a JSON object, got " + jsonio::typeName(j));
    }

    bool has(const std::string& key) const
    {
        const auto it = m_j.find(key);
        return it != m_j.end() && !it->is_null();
    }

    std::optional<std::int64_t> optInteger(const std::string& key, std::int64_t min,
                                           std::int64_t max)
    {
        m_read.insert(key);
        if (!has(key))
            return std::nullopt;
        jsonio::ObjectReader r(m_j, m_path);
        std::int64_t v = 0;
        r.readInt64(key, v, min, max);
        return v;
    }

    std::int64_t integer(const std::string& key, std::int64_t min, std::int64_t max)
    {
        if (auto v = optInteger(key, min, max))
            return *v;
        const std::string p = jsonio::join(m_path, key);
        throw InputError(p, p + ": required key missing");
    }

    std::optional<bool> optFlag(const std::string& key)
    {
        m_read.insert(key);
        if (!has(key))
            return std::nullopt;
        jsonio::ObjectReader r(m_j, m_path);
        bool b = false;
        r.readBool(key, b);
        return b;
    }

    std::optional<std::string> optString(const std::string& key)
    {
        m_read.insert(key);
        if (!has(key))
            return std::nullopt;
        jsonio::ObjectReader r(m_j, m_path);
        std::string s;
        r.readString(key, s);
        return s;
    }

    // A list of integers (Qwen-MoE's mlp_only_layers), each within [min, max].
    std::vector<std::int64_t> integers(const std::string& key, std::int64_t min, std::int64_t max)
    {
        m_read.insert(key);
        std::vector<std::int64_t> out;
        if (!has(key))
            return out;
        const json& a = m_j.at(key);
        const std::string p = jsonio::join(m_path, key);
        if (!a.is_array())
            throw InputError(p, p + ": expected an array of layer numbers, got " +
                                    jsonio::typeName(a));
        for (std::size_t i = 0; i < a.size(); ++i) {
            const json& e = a[i];
            const std::string pi = p + "[" + std::to_string(i) + "]";
            if (!e.is_number_integer() && !e.is_number_unsigned())
                throw InputError(pi, pi + ": expected an integer, got " + jsonio::typeName(e));
            const std::int64_t v = e.is_number_unsigned() && e.get<std::uint64_t>() > 1ull << 62
                                       ? max + 1
                                       : e.get<std::int64_t>();
            if (v < min || v > max)
                throw InputError(pi, pi + ": " + std::to_string(v) + " is outside " +
                                         std::to_string(min) + " … " + std::to_string(max));
            out.push_back(v);
        }
        return out;
    }

    void markRead(std::initializer_list<const char*> keys)
    {
        for (const char* k : keys)
            m_read.insert(k);
    }

    std::vector<std::string> unread() const
    {
        std::vector<std::string> keys;
        for (const auto& [k, v] : m_j.items())
            if (!m_read.count(k))
                keys.push_back(jsonio::join(m_path, k));
        return keys;
    }

    const std::string& path() const { return m_path; }
    const json& raw() const { return m_j; }

private:
    const json& m_j;
    std::string m_path;
    std::set<std::string> m_read;
};

// The family a config.json declares: the first `architectures` entry we know, else its
// `model_type`. `declared` gets what it declares, for the message when nothing matches.
const Family* findFamily(const json& j, std::string& declared)
{
    if (const auto it = j.find("architectures"); it != j.end() && !it->is_null()) {
        if (!it->is_array())
            throw InputError("architectures", "architectures: expected an array of class names, "
                                              "got " +
                                                  jsonio::typeName(*it));
        for (const json& a : *it) {
            if (!a.is_string())
                throw InputError("architectures",
                                 "architectures: expected class names (strings), got " +
                                     jsonio::typeName(a));
            const std::string name = a.get<std::string>();
            if (declared.empty())
                declared = "'" + name.substr(0, 80) + "'";
            for (const Family& f : kFamilies)
                if (name == f.architecture)
                    return &f;
        }
    }
    if (const auto it = j.find("model_type"); it != j.end() && !it->is_null()) {
        if (!it->is_string())
            throw InputError("model_type",
                             "model_type: expected a string, got " + jsonio::typeName(*it));
        const std::string type = it->get<std::string>();
        declared += (declared.empty() ? "model_type '" : " (model_type '") + type.substr(0, 80) +
                    (declared.empty() ? "'" : "')");
        for (const Family& f : kFamilies)
            if (type == f.model_type)
                return &f;
    }
    return nullptr;
}

class Importer
{
public:
    Importer(const Family& f, HfImport& out) : m_f(f), m_out(out), m_m(out.model) {}

    void run(Config& c)
    {
        readShape(c);
        if (isMoeKind(m_f.kind))
            readMoe(c);
        if (m_f.kind == Kind::DeepseekV2 || m_f.kind == Kind::DeepseekV3)
            readMla(c);
        else
            readHeadDim(c);
        checkShape(c);
        familyNotes(c);
    }

private:
    void source(const std::string& field, const Config& c, const std::string& key,
                const std::string& value)
    {
        m_out.sources[field] = "config.json " + jsonio::join(c.path(), key) + " " + value;
    }

    std::int64_t integer(Config& c, const std::string& field, const std::string& key,
                         std::int64_t min, std::int64_t max)
    {
        const std::int64_t v = c.integer(key, min, max);
        source(field, c, key, std::to_string(v));
        return v;
    }

    // An integer that may be absent; `fallback` is the transformers default, noted when used.
    std::int64_t integerOr(Config& c, const std::string& field, const std::string& key,
                           std::int64_t min, std::int64_t max, std::int64_t fallback,
                           const std::string& why)
    {
        if (auto v = c.optInteger(key, min, max)) {
            source(field, c, key, std::to_string(*v));
            return *v;
        }
        m_out.notes.push_back(jsonio::join(c.path(), key) + " absent: assumed " +
                              std::to_string(fallback) + " (" + why + ")");
        m_out.sources[field] = "assumed " + std::to_string(fallback) + " (" + why + ")";
        return fallback;
    }

    void readShape(Config& c)
    {
        using namespace bounds;
        m_m.layers = int(integer(c, "layers", "num_hidden_layers", 1, kMaxLayers));
        m_m.hidden = integer(c, "hidden", "hidden_size", 1, kMaxHidden);
        m_m.heads = int(integer(c, "heads", "num_attention_heads", 1, kMaxHeads));
        // Gemma 3's text_config may leave the vocabulary at the Gemma3TextConfig default.
        m_m.vocab = m_f.kind == Kind::Gemma3 || m_f.kind == Kind::Gemma3Multimodal
                        ? integerOr(c, "vocab", "vocab_size", 1, kMaxVocab, 262208,
                                    "the Gemma3TextConfig default")
                        : integer(c, "vocab", "vocab_size", 1, kMaxVocab);
        m_m.ffn_hidden = integer(c, "ffn_hidden", "intermediate_size", 1, kMaxFfnHidden);
        if (auto kv = c.optInteger("num_key_value_heads", 1, kMaxHeads)) {
            m_m.kv_heads = int(*kv);
            source("kv_heads", c, "num_key_value_heads", std::to_string(*kv));
        } else {
            m_m.kv_heads = m_m.heads;
            if (m_f.kind != Kind::DeepseekV2 && m_f.kind != Kind::DeepseekV3)
                m_out.notes.push_back(jsonio::join(c.path(), "num_key_value_heads") +
                                      " absent: assumed num_attention_heads (multi-head "
                                      "attention, the transformers default)");
            m_out.sources["kv_heads"] = "num_attention_heads (no num_key_value_heads)";
        }
        // Every family but GPT-NeoX has a gated MLP (SwiGLU; GeGLU for Gemma) and no biases.
        m_m.gated_mlp = m_f.kind != Kind::GptNeox;
        const auto act = c.optString(
            isGemma(m_f.kind) && c.has("hidden_activation") ? "hidden_activation" : "hidden_act");
        c.markRead({"hidden_act", "hidden_activation"});
        m_out.sources["gated_mlp"] =
            std::string(m_f.name) + " architecture" + (act ? " (activation " + *act + ")" : "") +
            (m_m.gated_mlp ? ": gated MLP, three matrices"
                           : ": plain MLP (two matrices), LayerNorm and linear biases");
        positionsAndNorm(c);
        // transformers: Gemma configs tie the embeddings by default, the others do not.
        const bool tiedDefault = isGemma(m_f.kind);
        if (auto t = c.optFlag("tie_word_embeddings")) {
            m_m.tied_embeddings = *t;
            source("tied_embeddings", c, "tie_word_embeddings", *t ? "true" : "false");
        } else {
            m_m.tied_embeddings = tiedDefault;
            m_out.notes.push_back(std::string("tie_word_embeddings absent: assumed ") +
                                  (tiedDefault ? "true" : "false") + " (the " + m_f.name +
                                  " configuration default)");
            m_out.sources["tied_embeddings"] =
                std::string("assumed ") + (tiedDefault ? "true" : "false") + " (default)";
        }
    }

    void readHeadDim(Config& c)
    {
        // Gemma and Qwen3 configs default head_dim to 256 and 128 (configuration classes).
        std::optional<std::int64_t> dflt;
        if (isGemma(m_f.kind))
            dflt = 256;
        else if (m_f.kind == Kind::Qwen3 || m_f.kind == Kind::Qwen3Moe)
            dflt = 128;
        std::int64_t d = 0;
        if (auto v = c.optInteger("head_dim", 1, bounds::kMaxHidden)) {
            d = *v;
            source("head_dim", c, "head_dim", std::to_string(d));
        } else if (dflt) {
            d = integerOr(c, "head_dim", "head_dim", 1, bounds::kMaxHidden, *dflt,
                          std::string("the ") + m_f.name + " configuration default");
        } else if (m_m.hidden % m_m.heads != 0) {
            throw InputError("head_dim", "hidden_size " + std::to_string(m_m.hidden) +
                                             " is not a multiple of num_attention_heads " +
                                             std::to_string(m_m.heads) + " and head_dim is absent");
        }
        // Stored only when it is not hidden / heads, as in the built-in presets.
        m_m.head_dim =
            d > 0 && !(m_m.hidden % m_m.heads == 0 && d == m_m.hidden / m_m.heads) ? d : 0;
        if (m_m.head_dim == 0)
            m_out.sources.erase("head_dim");
    }

    void readMla(Config& c)
    {
        using bounds::kMaxHidden;
        MlaSpec& a = m_m.mla;
        if (auto q = c.optInteger("q_lora_rank", 1, kMaxHidden)) {
            a.q_lora_rank = *q;
            source("mla.q_lora_rank", c, "q_lora_rank", std::to_string(*q));
        } else {
            m_out.sources["mla.q_lora_rank"] = "config.json q_lora_rank null: queries projected "
                                               "from the hidden state";
        }
        a.kv_lora_rank = integer(c, "mla.kv_lora_rank", "kv_lora_rank", 1, kMaxHidden);
        a.qk_nope_head_dim = integer(c, "mla.qk_nope_head_dim", "qk_nope_head_dim", 0, kMaxHidden);
        a.qk_rope_head_dim = integer(c, "mla.qk_rope_head_dim", "qk_rope_head_dim", 0, kMaxHidden);
        a.v_head_dim = integer(c, "mla.v_head_dim", "v_head_dim", 1, kMaxHidden);
        if (a.qkHeadDim() < 1)
            throw InputError("qk_nope_head_dim",
                             "qk_nope_head_dim + qk_rope_head_dim must be at least 1");
        // MLA gives every head its own key and value (DeepSeek-V2 §2.1).
        if (m_m.kv_heads != m_m.heads)
            m_out.notes.push_back("num_key_value_heads " + std::to_string(m_m.kv_heads) +
                                  " not used: multi-head latent attention gives every head its "
                                  "own key and value");
        m_m.kv_heads = m_m.heads;
        m_out.sources["kv_heads"] = "multi-head latent attention: one key and value per head";
        c.markRead({"head_dim"});
        // head_dim plays no part with MLA; set only to keep hidden / heads rules satisfied.
        m_m.head_dim = m_m.hidden % m_m.heads == 0 ? 0 : a.qkHeadDim();
    }

    void readMoe(Config& c)
    {
        using namespace bounds;
        MoeSpec& e = m_m.moe;
        const Kind k = m_f.kind;
        const char* experts = k == Kind::Mixtral                           ? "num_local_experts"
                              : k == Kind::Qwen2Moe || k == Kind::Qwen3Moe ? "num_experts"
                                                                           : "n_routed_experts";
        e.experts = int(integer(c, "moe.experts", experts, 1, kMaxExperts));
        e.top_k = int(integer(c, "moe.top_k", "num_experts_per_tok", 1, kMaxExperts));
        if (e.top_k > e.experts)
            throw InputError("num_experts_per_tok",
                             "num_experts_per_tok " + std::to_string(e.top_k) +
                                 " exceeds the number of experts " + std::to_string(e.experts));
        if (k == Kind::Mixtral) {
            e.expert_ffn_hidden = m_m.ffn_hidden; // each expert is a full-size MLP
            m_out.sources["moe.expert_ffn_hidden"] = m_out.sources["ffn_hidden"];
        } else {
            e.expert_ffn_hidden =
                integer(c, "moe.expert_ffn_hidden", "moe_intermediate_size", 1, kMaxFfnHidden);
        }
        if (k == Kind::Qwen2Moe || k == Kind::Qwen3Moe)
            readQwenMoe(c);
        else if (k == Kind::DeepseekV2 || k == Kind::DeepseekV3)
            readDeepseekMoe(c);
        else
            m_out.sources["moe.layer_frequency"] = "every layer (Mixtral)";
    }

    void readQwenMoe(Config& c)
    {
        MoeSpec& e = m_m.moe;
        if (auto sh = c.optInteger("shared_expert_intermediate_size", 0, bounds::kMaxFfnHidden);
            sh && *sh > 0) {
            if (*sh % e.expert_ffn_hidden != 0)
                throw InputError("shared_expert_intermediate_size",
                                 "shared_expert_intermediate_size " + std::to_string(*sh) +
                                     " is not a multiple of moe_intermediate_size " +
                                     std::to_string(e.expert_ffn_hidden) +
                                     " (ParaLens models shared experts of the routed size)");
            e.shared_experts = int(*sh / e.expert_ffn_hidden);
            source("moe.shared_experts", c, "shared_expert_intermediate_size",
                   std::to_string(*sh) + " = " + std::to_string(e.shared_experts) + " x " +
                       std::to_string(e.expert_ffn_hidden));
            m_out.notes.push_back("the shared expert's sigmoid gate (hidden_size weights per "
                                  "layer) is not counted");
        }
        // transformers: layer i is sparse when (i + 1) % decoder_sparse_step == 0 and i is not
        // in mlp_only_layers.
        const std::int64_t step = integerOr(c, "moe.layer_frequency", "decoder_sparse_step", 1,
                                            bounds::kMaxLayers, 1, "every layer sparse");
        const auto dense = c.integers("mlp_only_layers", 0, m_m.layers - 1);
        int lead = 0;
        for (std::int64_t i : dense)
            lead += i == lead ? 1 : 0;
        if (lead != int(dense.size()) || (step > 1 && !dense.empty()))
            throw InputError("mlp_only_layers",
                             "mlp_only_layers must be the leading layers 0, 1, ... (with "
                             "decoder_sparse_step 1): ParaLens models dense layers only as a "
                             "leading block");
        e.layer_frequency = int(step);
        e.first_dense_layers = dense.empty() ? int(step - 1) : lead;
        if (e.first_dense_layers >= m_m.layers)
            throw InputError("decoder_sparse_step",
                             "decoder_sparse_step / mlp_only_layers leave no sparse layer among " +
                                 std::to_string(m_m.layers));
        m_out.sources["moe.first_dense_layers"] =
            dense.empty() ? "decoder_sparse_step " + std::to_string(step) +
                                ": layers step-1, 2·step-1, ... sparse"
                          : "mlp_only_layers (" + std::to_string(lead) + " leading layers)";
        c.markRead({"norm_topk_prob", "router_aux_loss_coef", "output_router_logits"});
    }

    void readDeepseekMoe(Config& c)
    {
        MoeSpec& e = m_m.moe;
        if (auto sh = c.optInteger("n_shared_experts", 0, bounds::kMaxExperts)) {
            e.shared_experts = int(*sh);
            source("moe.shared_experts", c, "n_shared_experts", std::to_string(*sh));
        }
        const std::int64_t fd = integerOr(c, "moe.first_dense_layers", "first_k_dense_replace", 0,
                                          m_m.layers - 1, 0, "no leading dense layers");
        const std::int64_t f = integerOr(c, "moe.layer_frequency", "moe_layer_freq", 1,
                                         bounds::kMaxLayers, 1, "every layer sparse");
        // transformers: layer i is MoE when i >= first_k_dense_replace and i % moe_layer_freq
        // == 0, i.e. from the first multiple of the frequency at or after the dense block.
        e.first_dense_layers = int((fd + f - 1) / f * f);
        e.layer_frequency = int(f);
        if (e.first_dense_layers >= m_m.layers)
            throw InputError("first_k_dense_replace",
                             "first_k_dense_replace " + std::to_string(fd) +
                                 " with moe_layer_freq " + std::to_string(f) +
                                 " leaves no MoE layer among " + std::to_string(m_m.layers));
        const auto groups = c.optInteger("n_group", 1, bounds::kMaxExperts);
        const auto groupTopK = c.optInteger("topk_group", 1, bounds::kMaxExperts);
        if (groups && *groups > 1) { // one group is routing over all experts
            if (e.experts % *groups != 0 || !groupTopK || *groupTopK > *groups)
                throw InputError("n_group", "n_group " + std::to_string(*groups) +
                                                " must divide the experts and be at least "
                                                "topk_group");
            e.groups = int(*groups);
            e.group_top_k = int(*groupTopK);
            source("moe.groups", c, "n_group", std::to_string(*groups));
            source("moe.group_top_k", c, "topk_group", std::to_string(*groupTopK));
        }
        // DeepSeek-V3's multi-token-prediction modules (Technical Report §2.2): config.json
        // counts them apart from num_hidden_layers.
        if (auto mtp = c.optInteger("num_nextn_predict_layers", 0, bounds::kMaxLayers);
            mtp && *mtp > 0) {
            m_m.mtp_layers = int(*mtp);
            source("mtp_layers", c, "num_nextn_predict_layers", std::to_string(*mtp));
        }
        c.markRead({"topk_method", "scoring_func", "routed_scaling_factor", "norm_topk_prob",
                    "aux_loss_alpha", "seq_aux", "ep_size"});
    }

    void checkShape(const Config& c)
    {
        if (m_m.heads % m_m.kv_heads != 0)
            throw InputError("num_key_value_heads", jsonio::join(c.path(), "num_key_value_heads") +
                                                        " " + std::to_string(m_m.kv_heads) +
                                                        " must divide num_attention_heads " +
                                                        std::to_string(m_m.heads));
    }

    // Positions and norm (transformers modeling_<family>.py): every supported family rotates q
    // and k (RoPE); GPT-NeoX normalises with nn.LayerNorm (weight and bias), the others with
    // RMSNorm (LlamaRMSNorm and its copies; Gemma's scales by 1 + weight, the same traffic).
    void positionsAndNorm(Config& c)
    {
        const bool neox = m_f.kind == Kind::GptNeox;
        m_m.position_embedding = PositionEmbedding::Rope;
        m_m.norm = neox ? NormType::LayerNorm : NormType::RmsNorm;
        m_out.sources["position_embedding"] =
            std::string(m_f.name) + " architecture: rotary (RoPE)";
        m_out.sources["norm"] = std::string(m_f.name) +
                                " architecture: " + (neox ? "LayerNorm (nn.LayerNorm)" : "RMSNorm");
        if (!neox)
            return;
        c.markRead({"rotary_pct", "rotary_emb_base"});
        const auto it = c.raw().find("rotary_pct");
        const double pct = it != c.raw().end() && it->is_number() ? it->get<double>() : 0.25;
        if (pct < 1) // rotary_pct absent: GPTNeoXConfig's default 0.25
            m_out.notes.push_back(
                "rotary_pct " + fmt(pct) +
                ": RoPE rotates that share of each head; the RoPE traffic is counted over the "
                "whole of q and k (eager RoPE slices and concatenates the full tensors)");
    }

    // What the config describes that ParaLens does not count; each is small (a note says how
    // small) or changes only what attention costs.
    void familyNotes(Config& c)
    {
        const Kind k = m_f.kind;
        const double hd = double(m_m.headDim());
        const double q = m_m.heads * hd, kv = m_m.kv_heads * hd;
        const bool qkvBias = k == Kind::Qwen2 || k == Kind::Qwen2Moe ||
                             ((k == Kind::Llama || k == Kind::Mistral || k == Kind::Olmo2 ||
                               k == Kind::Qwen3 || k == Kind::Qwen3Moe) &&
                              c.optFlag("attention_bias").value_or(false));
        c.markRead({"attention_bias"});
        if (qkvBias)
            perLayerNote("q/k/v projection biases", q + 2 * kv);
        if (c.optFlag("mlp_bias").value_or(false))
            perLayerNote("MLP biases",
                         double(m_m.ffn_hidden) * (m_m.gated_mlp ? 2 : 1) + double(m_m.hidden));
        if (k == Kind::Qwen3 || k == Kind::Qwen3Moe || k == Kind::Olmo2 || k == Kind::Gemma3 ||
            k == Kind::Gemma3Multimodal) {
            // transformers' Qwen3Attention, Gemma3Attention (q_norm / k_norm per head) and
            // Olmo2Attention (over the whole projection): the kernels are priced, the weights not.
            m_m.qk_norm = true;
            m_out.sources["qk_norm"] = std::string(m_f.name) + " architecture: q_norm and k_norm";
            perLayerNote(k == Kind::Olmo2 ? "q/k RMSNorm weights" : "per-head q/k RMSNorm weights",
                         k == Kind::Olmo2 ? q + kv : 2 * hd);
        }
        if (k == Kind::Gemma2 || k == Kind::Gemma3 || k == Kind::Gemma3Multimodal)
            perLayerNote("post-attention and post-feed-forward norms", 2.0 * double(m_m.hidden));
        const bool sliding =
            c.has("sliding_window") &&
            (k == Kind::Mistral || k == Kind::Mixtral || k == Kind::Phi3 || k == Kind::Gemma2 ||
             k == Kind::Gemma3 || k == Kind::Gemma3Multimodal ||
             c.optFlag("use_sliding_window").value_or(false));
        c.markRead({"use_sliding_window"});
        if (sliding) {
            const auto w = c.optInteger("sliding_window", 0, std::int64_t(1) << 40);
            m_out.notes.push_back("sliding-window attention (window " +
                                  (w ? std::to_string(*w) : std::string("?")) +
                                  ") is priced as full causal attention: core attention is "
                                  "overestimated for sequences longer than the window");
        }
    }

    void perLayerNote(const std::string& what, double perLayer)
    {
        m_deferred.push_back({what, perLayer});
    }

public:
    // Notes that quote a share of the total, once the model is complete.
    void finishNotes()
    {
        const double total = totalParameters(m_m);
        for (const auto& [what, perLayer] : m_deferred) {
            const double all = perLayer * m_m.layers;
            char share[32];
            std::snprintf(share, sizeof share, "%.3f", total > 0 ? 100 * all / total : 0.0);
            m_out.notes.push_back(what + " (" + fmt(perLayer) + " per layer, " + share +
                                  " % of the total) are not counted");
        }
    }

private:
    const Family& m_f;
    HfImport& m_out;
    ModelSpec& m_m;
    std::vector<std::pair<std::string, double>> m_deferred;
};

// The last part of `_name_or_path` ("meta-llama/Llama-3.1-8B" -> "Llama-3.1-8B"), or "".
std::string nameOrPath(const json& j)
{
    if (const auto it = j.find("_name_or_path"); it != j.end() && it->is_string()) {
        std::string s = it->get<std::string>();
        const auto slash = s.find_last_of("/\\");
        if (slash != std::string::npos)
            s = s.substr(slash + 1);
        s.erase(std::remove_if(s.begin(), s.end(),
                               [](char c) { return static_cast<unsigned char>(c) < 0x20; }),
                s.end());
        if (s.size() <= 128)
            return s;
    }
    return "";
}

} // namespace

std::string supportedHfArchitectures()
{
    std::string s;
    for (const Family& f : kFamilies)
        s += (s.empty() ? "" : ", ") + std::string(f.architecture) + " (" + f.model_type + ")";
    return s;
}

HfImport importHfConfig(std::string_view text, const std::string& source)
{
    const json j = jsonio::parseText(text, source);
    try {
        if (!j.is_object())
            throw InputError("",
                             "expected a JSON object (a config.json), got " + jsonio::typeName(j));
        std::string declared;
        const Family* f = findFamily(j, declared);
        if (!f)
            throw InputError("architectures",
                             "unsupported architecture " +
                                 (declared.empty() ? std::string("(no architectures or model_type)")
                                                   : declared) +
                                 "; supported: " + supportedHfArchitectures());
        HfImport out;
        out.family = f->name;
        out.architecture = f->architecture;
        out.name_or_path = nameOrPath(j);
        out.model.name =
            out.name_or_path.empty() ? std::string(f->name) + " (imported)" : out.name_or_path;
        Config top(j, "");
        top.markRead({"architectures", "model_type", "_name_or_path"});
        Importer imp(*f, out);
        if (f->kind == Kind::Gemma3Multimodal) {
            if (!top.has("text_config"))
                throw InputError("text_config", "text_config: required key missing (a "
                                                "Gemma3ForConditionalGeneration config.json has "
                                                "the language model there)");
            top.markRead({"text_config", "vision_config"});
            Config textConfig(j.at("text_config"), "text_config");
            imp.run(textConfig);
            out.notes.push_back("the vision tower (vision_config) and its projector are not "
                                "modelled: the preset is the language model");
            imp.finishNotes();
            auto rest = top.unread();
            for (auto& k : textConfig.unread())
                rest.push_back(k);
            if (!rest.empty())
                out.notes.push_back("not read (no part in parameters, FLOPs or memory): " + [&] {
                    std::string s;
                    for (const auto& k : rest)
                        s += (s.empty() ? "" : ", ") + k;
                    return s;
                }());
            return out;
        }
        imp.run(top);
        imp.finishNotes();
        std::string rest;
        for (const auto& k : top.unread())
            rest += (rest.empty() ? "" : ", ") + k;
        if (!rest.empty())
            out.notes.push_back("not read (no part in parameters, FLOPs or memory): " + rest);
        return out;
    } catch (const InputError& e) {
        throw InputError(e.field(), source + ": " + e.what());
    } catch (const json::exception& e) { // a guard: every access above is type-checked
        throw InputError("", source + ": unexpected JSON content: " + e.what());
    }
}

bool looksLikeHfConfig(std::string_view text)
{
    const json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || j.contains("model") || j.contains("kind"))
        return false;
    return j.contains("architectures") || j.contains("model_type");
}

HfImport importHfConfigFile(const std::string& path)
{
    return importHfConfig(readInputFile(path, kMaxHfConfigFileBytes, "config.json", "config"),
                          path);
}

std::string presetIdFrom(std::string_view text)
{
    const auto slash = text.find_last_of("/\\");
    if (slash != std::string_view::npos)
        text = text.substr(slash + 1);
    std::string id;
    for (char c : text) {
        if (c >= 'A' && c <= 'Z')
            c = char(c - 'A' + 'a');
        const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
        if (ok)
            id += c;
        else if (!id.empty() && id.back() != '-')
            id += '-';
        if (id.size() >= 64)
            break;
    }
    while (!id.empty() && (id.back() == '-' || id.back() == '.'))
        id.pop_back();
    while (!id.empty() && (id.front() == '-' || id.front() == '.'))
        id.erase(id.begin());
    return id;
}

nlohmann::ordered_json hfPresetJson(const HfImport& imp, const std::string& id,
                                    const std::string& file)
{
    const json spec = modelToJson(imp.model);
    nlohmann::ordered_json p;
    p["id"] = id;
    p["kind"] = "model";
    p["name"] = imp.model.name;
    p["source"] = "Hugging Face config.json (" + file + ", " + imp.architecture +
                  "), read by paralens import-model";
    for (const char* key :
         {"layers", "hidden", "heads", "kv_heads", "head_dim", "ffn_hidden", "vocab", "gated_mlp",
          "tied_embeddings", "qk_norm", "mtp_layers", "moe", "mla"})
        if (spec.contains(key))
            p[key] = spec[key];
    for (const char* key : {"position_embedding", "norm"}) // written only off the convention
        if (spec.contains(key))
            p[key] = spec[key];
    nlohmann::ordered_json sources = nlohmann::ordered_json::object();
    for (const auto& [field, text] : imp.sources)
        sources[field] = text;
    p["sources"] = sources;
    std::string notes;
    for (const auto& n : imp.notes)
        notes += (notes.empty() ? "" : "; ") + n;
    if (!notes.empty())
        p["notes"] = notes + ".";
    return p;
}

} // namespace paralens
