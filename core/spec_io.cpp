// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/spec_io.h"

#include "core/json_reader.h"

#include <nlohmann/json.hpp>

namespace paralens {

using jsonio::ObjectReader;
using nlohmann::json;

namespace {

void readMoe(const json& j, const std::string& path, MoeSpec& moe)
{
    ObjectReader r(j, path);
    r.readInt("experts", moe.experts, 0, bounds::kMaxExperts);
    r.readInt("top_k", moe.top_k, 0, bounds::kMaxExperts);
    r.readInt64("expert_ffn_hidden", moe.expert_ffn_hidden, 0, bounds::kMaxFfnHidden);
    r.readInt("shared_experts", moe.shared_experts, 0, bounds::kMaxExperts);
    r.readInt("layer_frequency", moe.layer_frequency, 1, bounds::kMaxLayers);
    r.readInt("first_dense_layers", moe.first_dense_layers, 0, bounds::kMaxLayers);
    r.readInt("groups", moe.groups, 0, bounds::kMaxExperts);
    r.readInt("group_top_k", moe.group_top_k, 0, bounds::kMaxExperts);
    r.finish();
}

void readMla(const json& j, const std::string& path, MlaSpec& mla)
{
    ObjectReader r(j, path);
    r.readInt64("q_lora_rank", mla.q_lora_rank, 0, bounds::kMaxHidden);
    r.readInt64("kv_lora_rank", mla.kv_lora_rank, 1, bounds::kMaxHidden);
    r.readInt64("qk_nope_head_dim", mla.qk_nope_head_dim, 0, bounds::kMaxHidden);
    r.readInt64("qk_rope_head_dim", mla.qk_rope_head_dim, 0, bounds::kMaxHidden);
    r.readInt64("v_head_dim", mla.v_head_dim, 1, bounds::kMaxHidden);
    r.finish();
    for (auto key : {"kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"})
        r.require(key);
}

} // namespace

std::string_view toString(PositionEmbedding p)
{
    switch (p) {
    case PositionEmbedding::Rope:
        return "rope";
    case PositionEmbedding::Learned:
        return "learned";
    case PositionEmbedding::None:
        return "none";
    }
    return "rope";
}

std::string_view toString(NormType n)
{
    return n == NormType::LayerNorm ? "layernorm" : "rmsnorm";
}

std::optional<PositionEmbedding> parsePositionEmbedding(std::string_view s)
{
    for (auto p : {PositionEmbedding::Rope, PositionEmbedding::Learned, PositionEmbedding::None})
        if (s == toString(p))
            return p;
    return std::nullopt;
}

std::optional<NormType> parseNormType(std::string_view s)
{
    for (auto n : {NormType::RmsNorm, NormType::LayerNorm})
        if (s == toString(n))
            return n;
    return std::nullopt;
}

ModelSpec modelFromJson(const json& j, const std::string& path, bool preset)
{
    ObjectReader r(j, path);
    if (preset)
        r.allow({"id", "kind", "source", "sources", "notes"});
    ModelSpec m;
    m.name = "custom model";
    r.readString("name", m.name);
    r.readInt("layers", m.layers, 1, bounds::kMaxLayers);
    r.readInt64("hidden", m.hidden, 1, bounds::kMaxHidden);
    r.readInt("heads", m.heads, 1, bounds::kMaxHeads);
    m.kv_heads = m.heads;
    r.readInt("kv_heads", m.kv_heads, 1, bounds::kMaxHeads);
    r.readInt64("head_dim", m.head_dim, 0, bounds::kMaxHidden);
    r.readInt64("ffn_hidden", m.ffn_hidden, 1, bounds::kMaxFfnHidden);
    r.readInt64("vocab", m.vocab, 1, bounds::kMaxVocab);
    r.readBool("gated_mlp", m.gated_mlp);
    r.readBool("tied_embeddings", m.tied_embeddings);
    r.readBool("qk_norm", m.qk_norm);
    r.readInt("mtp_layers", m.mtp_layers, 0, bounds::kMaxLayers);
    if (const json* moe = r.child("moe"))
        readMoe(*moe, jsonio::join(path, "moe"), m.moe);
    if (const json* mla = r.child("mla"))
        readMla(*mla, jsonio::join(path, "mla"), m.mla);
    // Absent keys follow the convention of gated_mlp, so files written before them mean what
    // they meant (docs/scenario-format.md).
    m.position_embedding = conventionalPositionEmbedding(m.gated_mlp);
    m.norm = conventionalNorm(m.gated_mlp);
    r.readEnum("position_embedding", m.position_embedding, parsePositionEmbedding,
               "rope, learned, none");
    r.readEnum("norm", m.norm, parseNormType, "rmsnorm, layernorm");
    r.finish();
    for (auto key : {"layers", "hidden", "heads", "ffn_hidden", "vocab"})
        r.require(key);
    return m;
}

json modelToJson(const ModelSpec& m)
{
    json j = json::object();
    j["name"] = m.name;
    j["layers"] = m.layers;
    j["hidden"] = m.hidden;
    j["heads"] = m.heads;
    j["kv_heads"] = m.kv_heads;
    if (m.head_dim != 0)
        j["head_dim"] = m.head_dim;
    j["ffn_hidden"] = m.ffn_hidden;
    j["vocab"] = m.vocab;
    j["gated_mlp"] = m.gated_mlp;
    j["tied_embeddings"] = m.tied_embeddings;
    if (m.qk_norm)
        j["qk_norm"] = true;
    if (m.mtp_layers != 0) // written only when set
        j["mtp_layers"] = m.mtp_layers;
    if (!(m.moe == MoeSpec{})) {
        j["moe"] = {{"experts", m.moe.experts},
                    {"top_k", m.moe.top_k},
                    {"expert_ffn_hidden", m.moe.expert_ffn_hidden},
                    {"shared_experts", m.moe.shared_experts},
                    {"layer_frequency", m.moe.layer_frequency},
                    {"first_dense_layers", m.moe.first_dense_layers}};
        if (m.moe.groups > 0 || m.moe.group_top_k > 0) { // written only when set
            j["moe"]["groups"] = m.moe.groups;
            j["moe"]["group_top_k"] = m.moe.group_top_k;
        }
    }
    if (m.isMla()) {
        j["mla"] = {{"q_lora_rank", m.mla.q_lora_rank},
                    {"kv_lora_rank", m.mla.kv_lora_rank},
                    {"qk_nope_head_dim", m.mla.qk_nope_head_dim},
                    {"qk_rope_head_dim", m.mla.qk_rope_head_dim},
                    {"v_head_dim", m.mla.v_head_dim}};
    }
    if (m.position_embedding != conventionalPositionEmbedding(m.gated_mlp))
        j["position_embedding"] = std::string(toString(m.position_embedding));
    if (m.norm != conventionalNorm(m.gated_mlp))
        j["norm"] = std::string(toString(m.norm));
    return j;
}

ClusterSpec clusterFromJson(const json& j, const std::string& path, bool preset)
{
    ObjectReader r(j, path);
    if (preset)
        r.allow({"id", "kind", "source", "sources", "notes"});
    ClusterSpec c;
    r.require("gpu");
    const json* gpu = r.child("gpu");
    {
        ObjectReader g(*gpu, jsonio::join(path, "gpu"));
        c.gpu.name = "custom GPU";
        g.readString("name", c.gpu.name);
        g.readDouble("memory_gib", c.gpu.memory_gib, 0, bounds::kMaxMemoryGib, true);
        g.readDouble("hbm_gbps", c.gpu.hbm_gbps, 0, bounds::kMaxGbps, true);
        g.readDouble("bf16_tflops", c.gpu.bf16_tflops, 0, bounds::kMaxTflops, true);
        g.readDouble("fp8_tflops", c.gpu.fp8_tflops, 0, bounds::kMaxTflops);
        g.finish();
        for (auto key : {"memory_gib", "hbm_gbps", "bf16_tflops"})
            g.require(key);
    }
    c.name = c.gpu.name + " cluster";
    r.readString("name", c.name);
    r.readInt("gpus_per_node", c.gpus_per_node, 1, bounds::kMaxGpus);
    c.scale_up_domain = c.gpus_per_node;
    r.readInt("scale_up_domain", c.scale_up_domain, 1, bounds::kMaxGpus);
    r.readDouble("scale_up_gbps", c.scale_up_gbps, 0, bounds::kMaxGbps, true);
    r.readDouble("scale_out_gbps", c.scale_out_gbps, 0, bounds::kMaxGbps, true);
    r.readDouble("pcie_gbps", c.pcie_gbps, 0, bounds::kMaxGbps, true);
    if (const json* lat = r.child("latencies")) {
        ObjectReader l(*lat, jsonio::join(path, "latencies"));
        l.readDouble("scale_up_us", c.latencies.scale_up_us, 0, bounds::kMaxLatencyUs);
        l.readDouble("scale_out_us", c.latencies.scale_out_us, 0, bounds::kMaxLatencyUs);
        l.finish();
    }
    r.finish();
    r.require("scale_up_gbps");
    r.require("scale_out_gbps");
    return c;
}

json clusterToJson(const ClusterSpec& c)
{
    json j = json::object();
    j["name"] = c.name;
    j["gpu"] = {{"name", c.gpu.name},
                {"memory_gib", c.gpu.memory_gib},
                {"hbm_gbps", c.gpu.hbm_gbps},
                {"bf16_tflops", c.gpu.bf16_tflops},
                {"fp8_tflops", c.gpu.fp8_tflops}};
    j["gpus_per_node"] = c.gpus_per_node;
    j["scale_up_domain"] = c.scale_up_domain;
    j["scale_up_gbps"] = c.scale_up_gbps;
    j["scale_out_gbps"] = c.scale_out_gbps;
    j["pcie_gbps"] = c.pcie_gbps;
    j["latencies"] = {{"scale_up_us", c.latencies.scale_up_us},
                      {"scale_out_us", c.latencies.scale_out_us}};
    return j;
}

bool operator==(const MoeSpec& a, const MoeSpec& b)
{
    return a.experts == b.experts && a.top_k == b.top_k &&
           a.expert_ffn_hidden == b.expert_ffn_hidden && a.shared_experts == b.shared_experts &&
           a.layer_frequency == b.layer_frequency && a.first_dense_layers == b.first_dense_layers &&
           a.groups == b.groups && a.group_top_k == b.group_top_k;
}

bool operator==(const MlaSpec& a, const MlaSpec& b)
{
    return a.q_lora_rank == b.q_lora_rank && a.kv_lora_rank == b.kv_lora_rank &&
           a.qk_nope_head_dim == b.qk_nope_head_dim && a.qk_rope_head_dim == b.qk_rope_head_dim &&
           a.v_head_dim == b.v_head_dim;
}

bool operator==(const ModelSpec& a, const ModelSpec& b)
{
    if (a.position_embedding != b.position_embedding || a.norm != b.norm)
        return false;
    return a.name == b.name && a.layers == b.layers && a.hidden == b.hidden && a.heads == b.heads &&
           a.kv_heads == b.kv_heads && a.head_dim == b.head_dim && a.ffn_hidden == b.ffn_hidden &&
           a.vocab == b.vocab && a.gated_mlp == b.gated_mlp &&
           a.tied_embeddings == b.tied_embeddings && a.qk_norm == b.qk_norm &&
           a.mtp_layers == b.mtp_layers && a.moe == b.moe && a.mla == b.mla;
}

bool operator==(const GpuSpec& a, const GpuSpec& b)
{
    return a.name == b.name && a.memory_gib == b.memory_gib && a.hbm_gbps == b.hbm_gbps &&
           a.bf16_tflops == b.bf16_tflops && a.fp8_tflops == b.fp8_tflops;
}

bool operator==(const Latencies& a, const Latencies& b)
{
    return a.scale_up_us == b.scale_up_us && a.scale_out_us == b.scale_out_us;
}

bool operator==(const ClusterSpec& a, const ClusterSpec& b)
{
    return a.name == b.name && a.gpu == b.gpu && a.gpus_per_node == b.gpus_per_node &&
           a.scale_up_domain == b.scale_up_domain && a.scale_up_gbps == b.scale_up_gbps &&
           a.scale_out_gbps == b.scale_out_gbps && a.pcie_gbps == b.pcie_gbps &&
           a.latencies == b.latencies;
}

} // namespace paralens
