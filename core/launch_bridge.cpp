// SPDX-License-Identifier: GPL-3.0-or-later
// Megatron-Bridge: scripts/training/run_recipe.py with a recipe and Hydra-style overrides
// (section.field=value) of its ConfigContainer. Names: Megatron-Bridge v0.3.1 and the
// Megatron-Core it pins (docs/launch-config.md).
#include "core/launch_bridge.h"
#include "core/constants.h"
#include "core/launch_common.h"
#include "core/launch_megatron.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace paralens {
namespace launch {

const char* const kBridgeVersion = "Megatron-Bridge v0.3.1";

const std::vector<std::pair<std::string, std::string>>& bridgeRecipes()
{
    // Preset id -> the recipe of the same model (src/megatron/bridge/recipes/).
    static const std::vector<std::pair<std::string, std::string>> recipes{
        {"llama2-7b", "llama2_7b_pretrain_config"},
        {"llama3-8b", "llama3_8b_pretrain_config"},
        {"llama3-70b", "llama3_70b_pretrain_config"},
        {"llama3-405b", "llama31_405b_pretrain_config"},
        {"deepseek-v3", "deepseek_v3_pretrain_config"},
    };
    return recipes;
}

bool bridgeRecipeIsMla(std::string_view recipe)
{
    // deepseek_v3_pretrain_config: AutoBridge's provider for DeepSeek-V3 is MLAModelProvider.
    return recipe.rfind("deepseek_", 0) == 0;
}

namespace {

class Overrides
{
public:
    void set(const std::string& key, const std::string& value) { m_items.push_back({key, value}); }
    void set(const std::string& key, long long value) { set(key, std::to_string(value)); }
    void setBool(const std::string& key, bool value) { set(key, value ? "true" : "false"); }
    std::string lines() const
    {
        std::string out;
        for (std::size_t i = 0; i < m_items.size(); ++i)
            out += "    " + m_items[i].first + "=" + m_items[i].second +
                   (i + 1 < m_items.size() ? " \\\n" : "\n");
        return out;
    }

private:
    std::vector<std::pair<std::string, std::string>> m_items;
};

// The recipe of the model, else a base of its kind (MLA, MoE or dense) whose every shape field
// the overrides replace; *note says so. An MLA model needs an MLA provider (the model.q_lora_rank
// ... fields exist only on MLAModelProvider), so its base is the DeepSeek-V3 recipe.
std::string recipeFor(const Scenario& s, std::string* note)
{
    for (const auto& [id, recipe] : bridgeRecipes())
        if (id == s.model_id && bridgeRecipeIsMla(recipe) == s.model.isMla())
            return recipe;
    const std::string base = s.model.isMla()   ? "deepseek_v3_pretrain_config"
                             : s.model.isMoe() ? "qwen3_30b_a3b_pretrain_config"
                                               : "llama3_8b_pretrain_config";
    *note = "# Megatron-Bridge has no recipe for " + s.model.name + ": " + base +
            " is the base, every shape field overridden.\n";
    return base;
}

void parallel(const Scenario& s, Overrides& o, Warnings& w)
{
    const ParallelPlan& p = s.parallel;
    o.set("model.tensor_model_parallel_size", p.tp);
    o.set("model.pipeline_model_parallel_size", p.pp);
    o.set("model.virtual_pipeline_model_parallel_size",
          p.virtual_stages > 1 ? std::to_string(p.virtual_stages) : "null");
    const Schedule runs = p.virtual_stages > 1 ? Schedule::Interleaved1F1B : Schedule::OneF1B;
    if (p.schedule != runs)
        w.add("schedule_unsupported", "parallel.schedule " + std::string(toString(p.schedule)) +
                                          " is not a Megatron-Core schedule; it runs " +
                                          std::string(toString(runs)));
    o.set("model.num_layers_in_first_pipeline_stage",
          p.first_stage_layers > 0 ? std::to_string(p.first_stage_layers) : "null");
    o.set("model.num_layers_in_last_pipeline_stage",
          p.last_stage_layers > 0 ? std::to_string(p.last_stage_layers) : "null");
    o.setBool("model.sequence_parallel", p.sequence_parallel);
    o.set("model.context_parallel_size", p.cp);
    if (p.cp_comm != CpComm::Default)
        o.set("model.cp_comm_type", megatronCpComm(p.cp_comm));
    o.set("model.expert_model_parallel_size", p.ep);
    o.set("model.expert_tensor_parallel_size",
          p.expert_tp > 0 ? std::to_string(p.expert_tp) : "null");
    o.setBool("comm_overlap.tp_comm_overlap", p.tp_comm_overlap);
    o.setBool("ddp.use_distributed_optimizer", p.zero >= 1);
    o.setBool("optimizer.use_distributed_optimizer", p.zero >= 1);
    o.setBool("ddp.use_megatron_fsdp", p.zero >= 2);
    o.set("ddp.data_parallel_sharding_strategy", p.zero == 3   ? "optim_grads_params"
                                                 : p.zero == 2 ? "optim_grads"
                                                               : "no_shard");
    o.set("ddp.num_distributed_optimizer_instances",
          p.zero >= 1 && p.shard_group > 0 && p.shard_group < p.dp ? p.dp / p.shard_group : 1);
    o.setBool("optimizer.optimizer_cpu_offload", p.offload_optimizer);
    if (p.offload_optimizer) // Megatron-Core's hybrid CPU optimizer runs on this path only
        o.setBool("optimizer.use_precision_aware_optimizer", true);
    // Megatron-Core's DDP grad_reduce_in_fp32, which the mixed-precision recipe's own field
    // overrides at setup (MixedPrecisionConfig.setup): both, when the scenario names a dtype.
    if (s.training.grad_reduce_dtype != GradReduceDtype::Default) {
        const bool fp32 = s.training.grad_reduce_dtype == GradReduceDtype::Fp32;
        o.setBool("ddp.grad_reduce_in_fp32", fp32);
        o.setBool("mixed_precision.grad_reduce_in_fp32", fp32);
    }
    o.setBool("ddp.overlap_grad_reduce", s.training.overlap_grad_reduce);
    o.setBool("ddp.overlap_param_gather", s.training.overlap_grad_reduce && p.zero >= 1);
}

void model(const ModelSpec& m, Overrides& o)
{
    o.set("model.num_layers", m.layers);
    o.set("model.hidden_size", m.hidden);
    o.set("model.num_attention_heads", m.heads);
    o.set("model.num_query_groups", m.kv_heads);
    o.set("model.kv_channels", m.headDim());
    o.set("model.ffn_hidden_size", m.ffn_hidden);
    o.setBool("model.gated_linear_unit", m.gated_mlp);
    o.set("model.normalization", std::string(megatronNormalization(m.norm)));
    o.set("model.position_embedding_type", std::string(megatronPositionType(m.position_embedding)));
    o.setBool("model.share_embeddings_and_output_weights", m.tied_embeddings);
    if (m.qk_norm)
        o.setBool("model.qk_layernorm", true);
    if (m.mtp_layers > 0)
        o.set("model.mtp_num_layers", m.mtp_layers);
    o.set("model.vocab_size", m.vocab);
    if (m.isMla()) { // MLATransformerConfig: qk_head_dim is the no-RoPE part of a head
        o.setBool("model.multi_latent_attention", true);
        o.set("model.q_lora_rank",
              m.mla.q_lora_rank > 0 ? std::to_string(m.mla.q_lora_rank) : "null");
        o.set("model.kv_lora_rank", m.mla.kv_lora_rank);
        o.set("model.qk_head_dim", m.mla.qk_nope_head_dim);
        o.set("model.qk_pos_emb_head_dim", m.mla.qk_rope_head_dim);
        o.set("model.v_head_dim", m.mla.v_head_dim);
    }
    if (!m.isMoe()) {
        o.set("model.num_moe_experts", "null");
        return;
    }
    o.set("model.num_moe_experts", m.moe.experts);
    o.set("model.moe_router_topk", m.moe.top_k);
    o.set("model.moe_ffn_hidden_size", m.moe.expert_ffn_hidden);
    o.set("model.moe_shared_expert_intermediate_size",
          m.moe.shared_experts > 0 ? std::to_string(m.moe.shared_experts * m.moe.expert_ffn_hidden)
                                   : "null");
    // Hydra reads a list literal; Megatron-Core takes an int or the per-layer list.
    std::string freq = std::to_string(std::max(1, m.moe.layer_frequency));
    if (m.moe.first_dense_layers > 0) {
        freq = "[";
        for (int i = 0; i < m.layers; ++i)
            freq += std::string(i ? "," : "") + (m.isMoeLayer(i) ? "1" : "0");
        freq += "]";
    }
    o.set("model.moe_layer_freq", freq);
    o.set("model.moe_router_num_groups", m.moe.groups > 0 ? std::to_string(m.moe.groups) : "null");
    o.set("model.moe_router_group_topk",
          m.moe.group_top_k > 0 ? std::to_string(m.moe.group_top_k) : "null");
}

void moe(const Scenario& s, Overrides& o, Warnings& w)
{
    const ParallelPlan& p = s.parallel;
    switch (p.moe_dispatcher) {
    case MoeDispatcher::Default:
        break;
    case MoeDispatcher::AllGather:
    case MoeDispatcher::AllToAll:
        o.set("model.moe_token_dispatcher_type",
              p.moe_dispatcher == MoeDispatcher::AllGather ? "allgather" : "alltoall");
        break;
    case MoeDispatcher::DeepEP:
    case MoeDispatcher::HybridEP:
        o.set("model.moe_token_dispatcher_type", "flex");
        o.set("model.moe_flex_dispatcher_backend",
              p.moe_dispatcher == MoeDispatcher::DeepEP ? "deepep" : "hybridep");
        break;
    }
    if (p.moe_overlap)
        o.setBool("model.overlap_moe_expert_parallel_comm", true);
    const double imbalance = s.training.moe_load_imbalance;
    if (imbalance == 1.0)
        o.setBool("model.moe_router_force_load_balancing", true);
    else if (imbalance > 0)
        w.add("moe_load_imbalance_not_a_setting",
              "training.moe_load_imbalance " + formatNumber(imbalance) +
                  " is a measured property of the routing; not written");
}

void training(const Scenario& s, Overrides& o, Warnings& w)
{
    const TrainingSettings& t = s.training;
    o.set("train.micro_batch_size", t.micro_batch);
    o.set("train.global_batch_size", t.global_batch);
    o.set("train.train_iters", kLaunchTrainIters);
    o.set("model.seq_length", t.seq_len);
    o.set("dataset.sequence_length", t.seq_len);
    o.set("mixed_precision", t.precision == Precision::FP8 ? "bf16_with_fp8_delayed_scaling_mixed"
                             : t.precision == Precision::FP16 ? "fp16_mixed"
                                                              : "bf16_mixed");
    // Bridge's FP8 recipes turn FP8 parameters on (training/mixed_precision.py): say which.
    if (t.precision == Precision::FP8)
        o.setBool("mixed_precision.fp8_param_gather", t.fp8_param_gather);
    o.set("model.recompute_granularity",
          t.recompute == Recompute::None ? "null" : std::string(toString(t.recompute)));
    if (t.recompute == Recompute::Selective && t.recompute_modules != kRecomputeCoreAttn)
        o.set("model.recompute_modules", "[" + recomputeModuleList(t.recompute_modules, ",") + "]");
    const bool block = t.recompute == Recompute::Full && t.recompute_num_layers > 0;
    o.set("model.recompute_method", block                            ? "block"
                                    : t.recompute == Recompute::Full ? "uniform"
                                                                     : "null");
    o.set("model.recompute_num_layers", block ? std::to_string(t.recompute_num_layers)
                                        : t.recompute == Recompute::Full ? "1"
                                                                         : "null");
    if (const std::string backend = megatronAttentionBackend(t, w); !backend.empty())
        o.set("model.attention_backend", backend);
    o.set("optimizer.optimizer", std::string(toString(t.optimizer)));
    if (t.adam_moments_dtype == AdamMomentsDtype::Bf16) { // str_to_dtype reads "bf16"
        o.setBool("optimizer.use_precision_aware_optimizer", true);
        o.set("optimizer.exp_avg_dtype", "bf16");
        o.set("optimizer.exp_avg_sq_dtype", "bf16");
    }
    if (t.dropout) {
        const std::string d = *t.dropout ? formatNumber(kMegatronDefaultDropout) : "0.0";
        o.set("model.hidden_dropout", d);
        o.set("model.attention_dropout", d);
    }
    if (t.compile)
        w.add("compile_not_applicable",
              "training.compile: Megatron-Core runs without torch.compile");
    if (t.fsdp_reshard_after_forward != ReshardAfterForward::Default)
        w.add("fsdp_reshard_not_applicable",
              "training.fsdp_reshard_after_forward is a torchtitan FSDP2 policy; not written");
}

} // namespace
} // namespace launch

LaunchConfig bridgeLaunch(const Scenario& s)
{
    using namespace launch;
    LaunchConfig cfg;
    cfg.framework = LaunchFramework::MegatronBridge;
    Warnings w(cfg.warnings);
    commonWarnings(s, LaunchFramework::MegatronBridge, w);
    std::string note;
    const std::string recipe = recipeFor(s, &note);
    Overrides o;
    parallel(s, o, w);
    model(s.model, o);
    moe(s, o, w);
    training(s, o, w);
    std::string text = "#!/bin/bash\n" + headerComment(s, kBridgeVersion, "# ");
    text += warningComments(cfg.warnings, "# ") + note;
    text += slurmComment(s);
    text += "set -euo pipefail\n";
    text += torchrunLine(s, "scripts/training/run_recipe.py") + " \\\n    --recipe " + recipe +
            " \\\n" + o.lines();
    cfg.files.push_back({"launch.sh", text});
    return cfg;
}

} // namespace paralens
