// SPDX-License-Identifier: GPL-3.0-or-later
// DeepSpeed: the JSON config (keys of DeepSpeed v0.16.4) and the launch script that starts
// Megatron-DeepSpeed's pretrain_gpt.py with it (its megatron/arguments.py names).
#include "core/launch_deepspeed.h"
#include "core/constants.h"
#include "core/launch_common.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

namespace paralens {
namespace launch {

const char* const kDeepSpeedVersion = "DeepSpeed v0.16.4 / Megatron-DeepSpeed f4157be";

namespace {

using ojson = nlohmann::ordered_json;

ojson zeroSection(const Scenario& s, Warnings& w)
{
    const ParallelPlan& p = s.parallel;
    ojson z = ojson::object();
    z["stage"] = p.zero;
    z["overlap_comm"] = s.training.overlap_grad_reduce;
    z["contiguous_gradients"] = true;
    if (p.offload_optimizer)
        z["offload_optimizer"] = {{"device", "cpu"}, {"pin_memory", true}};
    if (p.shard_group > 0 && p.shard_group < p.dp) {
        if (p.zero == 3)
            z["mics_shard_size"] = p.shard_group; // MiCS: shard inside groups, replicate across
        else
            w.add("shard_group_unsupported",
                  "DeepSpeed shards in groups (MiCS, mics_shard_size) at ZeRO-3 only; "
                  "parallel.shard_group not written");
    }
    if (p.zero >= 2 && p.pp > 1)
        w.add("zero_with_pipeline", "DeepSpeed's pipeline engine refuses ZeRO-2 and ZeRO-3 "
                                    "(\"incompatible with pipeline parallelism\"); written as "
                                    "it is");
    return z;
}

std::string configJson(const Scenario& s, Warnings& w)
{
    const TrainingSettings& t = s.training;
    const ParallelPlan& p = s.parallel;
    ojson j = ojson::object();
    j["train_batch_size"] = t.global_batch;
    j["train_micro_batch_size_per_gpu"] = t.micro_batch;
    j["gradient_accumulation_steps"] = t.microbatches(std::max(1, p.dp));
    j["gradient_clipping"] = 1.0;
    j["steps_per_print"] = 10;
    // fp16 with loss_scale 0: DeepSpeed's dynamic loss scaling (its default).
    if (t.precision == Precision::FP16)
        j["fp16"] = {{"enabled", true}, {"loss_scale", 0}};
    else
        j["bf16"] = {{"enabled", true}};
    if (t.precision == Precision::FP8)
        w.add("fp8_unsupported", "DeepSpeed's config has no FP8 training setting (nor "
                                 "Megatron-DeepSpeed a flag); written as bf16");
    // The gradients' accumulation and communication dtype, when not DeepSpeed's (the training
    // dtype): data_types.grad_accum_dtype and communication_data_type.
    if (t.grad_reduce_dtype != GradReduceDtype::Default) {
        const char* dt = t.grad_reduce_dtype == GradReduceDtype::Bf16 ? "bf16" : "fp32";
        j["communication_data_type"] = dt;
        j["data_types"] = {{"grad_accum_dtype", dt}};
    }
    j["zero_optimization"] = zeroSection(s, w);
    j["activation_checkpointing"] = {{"partition_activations", false},
                                     {"contiguous_memory_optimization", false},
                                     {"cpu_checkpointing", false}};
    if (p.pp > 1)
        j["pipeline"] = {{"stages", p.pp}};
    j["wall_clock_breakdown"] = false;
    return j.dump(2) + "\n";
}

void parallelArgs(const Scenario& s, ArgList& a, Warnings& w)
{
    const ParallelPlan& p = s.parallel;
    a.opt("--tensor-model-parallel-size", p.tp);
    if (p.pp > 1)
        a.opt("--pipeline-model-parallel-size", p.pp);
    else
        a.flag("--no-pipeline-parallel");
    if (p.schedule != Schedule::OneF1B || p.virtual_stages > 1)
        w.add("schedule_unsupported", "DeepSpeed's pipeline engine runs 1F1B (TrainSchedule) "
                                      "with one chunk per GPU; parallel.schedule " +
                                          std::string(toString(p.schedule)) + " and " +
                                          std::to_string(p.virtual_stages) +
                                          " virtual stages not written");
    if (p.first_stage_layers > 0 || p.last_stage_layers > 0)
        w.add("stage_layers_unsupported",
              "Megatron-DeepSpeed partitions layers by its own method; "
              "parallel.first_stage_layers / last_stage_layers not written");
    if (p.sequence_parallel && p.cp > 1)
        w.add("sp_with_ulysses", "Megatron-DeepSpeed's --ds-sequence-parallel-size cannot be "
                                 "combined with --sequence-parallel; both written");
    if (p.sequence_parallel)
        a.flag("--sequence-parallel");
    if (p.cp > 1) {
        a.opt("--ds-sequence-parallel-size", p.cp);
        if (p.cp_comm == CpComm::P2P || p.cp_comm == CpComm::AllGather)
            w.add("cp_comm_unsupported", "DeepSpeed's sequence parallelism is Ulysses "
                                         "(all-to-all); parallel.cp_comm " +
                                             std::string(toString(p.cp_comm)) + " not written");
    }
    if (p.tp_comm_overlap)
        w.add("tp_comm_overlap_unsupported",
              "Megatron-DeepSpeed has no TP communication overlap flag; not written");
    if (p.expert_tp > 0 && p.expert_tp != p.tp)
        w.add("expert_tp_unsupported", "DeepSpeed-MoE has no expert TP degree; not written");
    if (p.moe_dispatcher != MoeDispatcher::Default && p.moe_dispatcher != MoeDispatcher::AllToAll)
        w.add("moe_dispatcher_unsupported",
              "DeepSpeed-MoE dispatches by all-to-all; parallel.moe_dispatcher " +
                  std::string(toString(p.moe_dispatcher)) + " not written");
    if (p.moe_overlap)
        w.add("moe_overlap_unsupported", "DeepSpeed-MoE has no EP overlap setting; not written");
}

void modelArgs(const Scenario& s, ArgList& a, Warnings& w)
{
    const ModelSpec& m = s.model;
    a.opt("--num-layers", m.layers);
    a.opt("--hidden-size", m.hidden);
    a.opt("--num-attention-heads", m.heads);
    if (m.kv_heads != m.heads)
        a.opt("--num-key-value-heads", m.kv_heads);
    if (m.head_dim > 0)
        a.opt("--kv-channels", m.head_dim);
    if (m.isMla())
        w.add("mla_unsupported",
              "Megatron-DeepSpeed has no multi-head latent attention (no --q-lora-rank, "
              "--kv-lora-rank or head-width arguments); the model is written as multi-head "
              "attention of " +
                  std::to_string(m.heads) + " heads, its MLA widths not written");
    if (m.qk_norm)
        w.add("qk_norm_unsupported",
              "Megatron-DeepSpeed has no norm of q and k (no --qk-layernorm); the model is "
              "written without it");
    a.opt("--ffn-hidden-size", m.ffn_hidden);
    if (m.gated_mlp)
        a.flag("--swiglu");
    // Megatron-DeepSpeed's defaults are layernorm and learned absolute positions.
    if (m.norm == NormType::RmsNorm)
        a.opt("--normalization", "rmsnorm");
    if (m.position_embedding == PositionEmbedding::Rope)
        a.flag("--use-rotary-position-embeddings");
    else if (m.position_embedding == PositionEmbedding::None)
        a.flag("--no-position-embedding");
    if (m.gated_mlp)
        a.flag("--disable-bias-linear");
    if (!m.tied_embeddings)
        a.flag("--untie-embeddings-and-output-weights");
    a.opt("--vocab-size", m.vocab - 1); // "before EOD": the tokenizer adds it
    if (!m.isMoe())
        return;
    a.opt("--num-experts", m.moe.experts);
    a.opt("--topk", m.moe.top_k);
    a.opt("--moe-expert-parallel-size", s.parallel.ep);
    a.opt("--expert-interval", std::max(1, m.moe.layer_frequency));
    if (m.moe.expert_ffn_hidden != m.ffn_hidden)
        w.add("expert_ffn_unsupported", "DeepSpeed-MoE experts take --ffn-hidden-size; "
                                        "model.moe.expert_ffn_hidden not written");
    if (m.moe.shared_experts > 0 || m.moe.first_dense_layers > 0 || m.moe.groups > 0)
        w.add("moe_shape_unsupported",
              "Megatron-DeepSpeed has no shared experts, leading dense layers or group-limited "
              "routing; not written");
}

void trainingArgs(const Scenario& s, ArgList& a, Warnings& w)
{
    const TrainingSettings& t = s.training;
    a.opt("--seq-length", t.seq_len);
    a.opt("--max-position-embeddings", t.seq_len);
    a.opt("--micro-batch-size", t.micro_batch);
    a.opt("--global-batch-size", t.global_batch);
    a.flag(std::string(megatronPrecisionFlag(t.precision)));
    if (t.recompute != Recompute::None)
        a.opt("--recompute-granularity", std::string(toString(t.recompute)));
    if (t.recompute == Recompute::Full) {
        // block: the first N layers of each chunk; uniform with 1: every layer on its own.
        a.opt("--recompute-method", t.recompute_num_layers > 0 ? "block" : "uniform");
        a.opt("--recompute-num-layers", std::max(1, t.recompute_num_layers));
    }
    if (t.flash_attention)
        a.flag("--use-flash-attn-v2");
    a.opt("--optimizer", std::string(toString(t.optimizer)));
    if (t.dropout) {
        const std::string d = *t.dropout ? formatNumber(kMegatronDefaultDropout) : "0";
        a.opt("--hidden-dropout", d);
        a.opt("--attention-dropout", d);
    }
    if (t.compile)
        w.add("compile_not_applicable",
              "training.compile: Megatron-DeepSpeed runs no torch.compile");
    if (t.moe_load_imbalance > 0)
        w.add("moe_load_imbalance_not_a_setting",
              "training.moe_load_imbalance is a property of the routing; not written");
    if (t.fsdp_reshard_after_forward != ReshardAfterForward::Default)
        w.add("fsdp_reshard_not_applicable",
              "training.fsdp_reshard_after_forward is a torchtitan FSDP2 policy; not written");
    a.opt("--zero-stage", s.parallel.zero);
    a.flag("--deepspeed");
    a.opt("--deepspeed_config", kDeepSpeedConfigName);
    a.opt("--tokenizer-type", "NullTokenizer");
    a.opt("--data-path", "\"${DATA_PATH}\"");
    a.opt("--train-iters", kLaunchTrainIters);
    a.opt("--lr", formatNumber(kLaunchPeakLr));
}

} // namespace

const char* const kDeepSpeedConfigName = "ds_config.json";

} // namespace launch

LaunchConfig deepspeedLaunch(const Scenario& s)
{
    using namespace launch;
    LaunchConfig cfg;
    cfg.framework = LaunchFramework::DeepSpeed;
    Warnings w(cfg.warnings);
    commonWarnings(s, LaunchFramework::DeepSpeed, w);
    const std::string json = configJson(s, w);
    ArgList a;
    parallelArgs(s, a, w);
    modelArgs(s, a, w);
    trainingArgs(s, a, w);
    const Nodes n = nodesOf(s);
    std::string sh = "#!/bin/bash\n" + headerComment(s, kDeepSpeedVersion, "# ");
    sh += warningComments(cfg.warnings, "# ");
    sh += "# DATA_PATH: a Megatron-DeepSpeed indexed dataset; the hostfile lists the nodes.\n";
    sh += "set -euo pipefail\n";
    sh += "deepspeed --num_nodes " + std::to_string(n.nodes) + " --num_gpus " +
          std::to_string(n.per_node) + " --hostfile hostfile pretrain_gpt.py \\\n" +
          a.lines("    ");
    cfg.files.push_back({kDeepSpeedConfigName, json});
    cfg.files.push_back({"launch.sh", sh});
    return cfg;
}

} // namespace paralens
