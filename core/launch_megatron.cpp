// SPDX-License-Identifier: GPL-3.0-or-later
// Megatron-LM: a launch script running pretrain_gpt.py under torchrun with the plan's arguments.
// Names: megatron/training/arguments.py of Megatron-LM core_v0.15.0 (docs/launch-config.md).
#include "core/launch_megatron.h"
#include "core/constants.h"
#include "core/kernel_time.h"
#include "core/launch_common.h"

#include <algorithm>
#include <string>

namespace paralens {
namespace launch {

const char* const kMegatronVersion = "Megatron-LM core_v0.15.0";

const char* megatronCpComm(CpComm c)
{
    switch (c) {
    case CpComm::P2P:
        return "p2p";
    case CpComm::AllGather:
        return "allgather";
    case CpComm::AllToAll:
        return "a2a";
    case CpComm::Default:
        break;
    }
    return "";
}

namespace {

// The schedule Megatron-LM runs for the plan: interleaved 1F1B with virtual stages, else 1F1B.
void checkSchedule(const ParallelPlan& p, Warnings& w)
{
    const Schedule runs = p.virtual_stages > 1 ? Schedule::Interleaved1F1B : Schedule::OneF1B;
    if (p.schedule != runs)
        w.add("schedule_unsupported",
              "parallel.schedule " + std::string(toString(p.schedule)) + " is not a " +
                  kMegatronVersion + " schedule; it runs " + std::string(toString(runs)) +
                  (p.pp > 1 ? "" : " (no pipeline: the schedule has no effect)"));
}

void parallelArgs(const Scenario& s, ArgList& a, Warnings& w)
{
    const ParallelPlan& p = s.parallel;
    a.opt("--tensor-model-parallel-size", p.tp);
    a.opt("--pipeline-model-parallel-size", p.pp);
    if (p.virtual_stages > 1)
        a.opt("--num-virtual-stages-per-pipeline-rank", p.virtual_stages);
    checkSchedule(p, w);
    if (p.first_stage_layers > 0)
        a.opt("--decoder-first-pipeline-num-layers", p.first_stage_layers);
    if (p.last_stage_layers > 0)
        a.opt("--decoder-last-pipeline-num-layers", p.last_stage_layers);
    if (p.sequence_parallel)
        a.flag("--sequence-parallel");
    if (p.cp > 1)
        a.opt("--context-parallel-size", p.cp);
    if (p.cp_comm != CpComm::Default)
        a.opt("--cp-comm-type", megatronCpComm(p.cp_comm));
    if (p.ep > 1)
        a.opt("--expert-model-parallel-size", p.ep);
    if (p.expert_tp > 0)
        a.opt("--expert-tensor-parallel-size", p.expert_tp);
    if (p.tp_comm_overlap)
        a.flag("--tp-comm-overlap");
}

void shardingArgs(const Scenario& s, ArgList& a, Warnings& w)
{
    const ParallelPlan& p = s.parallel;
    if (p.zero == 1)
        a.flag("--use-distributed-optimizer");
    if (p.zero >= 2) {
        // Megatron-FSDP: ZeRO-2 shards optimizer and gradients, ZeRO-3 the parameters too; it
        // saves only in its own checkpoint format (arguments.py asserts it).
        a.flag("--use-megatron-fsdp");
        a.opt("--data-parallel-sharding-strategy",
              p.zero == 2 ? "optim_grads" : "optim_grads_params");
        a.opt("--ckpt-format", "fsdp_dtensor");
    }
    if (p.shard_group > 0 && p.zero >= 1 && p.shard_group < p.dp)
        a.opt("--num-distributed-optimizer-instances", p.dp / p.shard_group);
    if (p.shard_group > 0 && p.zero == 0)
        w.add("shard_group_without_zero", "parallel.shard_group has no effect without ZeRO");
    if (p.offload_optimizer) {
        if (p.zero == 0)
            w.add("offload_needs_distributed_optimizer",
                  "--optimizer-cpu-offload needs the distributed optimizer; written anyway");
        a.flag("--optimizer-cpu-offload");
        a.flag("--use-precision-aware-optimizer"); // arguments.py asserts it with the offload
    }
    // Megatron-LM accumulates and reduces in fp32 for bf16 unless told (arguments.py).
    if (s.training.grad_reduce_dtype == GradReduceDtype::Bf16)
        a.flag("--grad-reduce-in-bf16");
    if (s.training.overlap_grad_reduce) {
        a.flag("--overlap-grad-reduce");
        if (p.zero >= 1)
            a.flag("--overlap-param-gather");
    }
}

void moeArgs(const Scenario& s, ArgList& a, Warnings& w)
{
    const ModelSpec& m = s.model;
    const ParallelPlan& p = s.parallel;
    if (m.isMoe()) {
        a.opt("--num-experts", m.moe.experts);
        a.opt("--moe-router-topk", m.moe.top_k);
        a.opt("--moe-ffn-hidden-size", m.moe.expert_ffn_hidden);
        if (m.moe.shared_experts > 0)
            a.opt("--moe-shared-expert-intermediate-size",
                  m.moe.shared_experts * m.moe.expert_ffn_hidden);
        if (const std::string f = moeLayerFreq(m); f != "1")
            a.opt("--moe-layer-freq", "'" + f + "'");
        if (m.moe.groups > 0) {
            a.opt("--moe-router-num-groups", m.moe.groups);
            a.opt("--moe-router-group-topk", m.moe.group_top_k);
        }
        a.flag("--moe-grouped-gemm");
    }
    switch (p.moe_dispatcher) {
    case MoeDispatcher::Default:
        break;
    case MoeDispatcher::AllGather:
        a.opt("--moe-token-dispatcher-type", "allgather");
        break;
    case MoeDispatcher::AllToAll:
        a.opt("--moe-token-dispatcher-type", "alltoall");
        break;
    case MoeDispatcher::HybridEP:
        w.add("hybridep_unsupported", std::string(kMegatronVersion) +
                                          " has no HybridEP backend; written as DeepEP "
                                          "(flex dispatcher), which paralens prices the same");
        [[fallthrough]];
    case MoeDispatcher::DeepEP:
        a.opt("--moe-token-dispatcher-type", "flex");
        a.flag("--moe-enable-deepep");
        break;
    }
    if (p.moe_overlap)
        a.flag("--overlap-moe-expert-parallel-comm");
    const double imbalance = s.training.moe_load_imbalance;
    if (imbalance == 1.0)
        a.flag("--moe-router-force-load-balancing");
    else if (imbalance > 0)
        w.add("moe_load_imbalance_not_a_setting",
              "training.moe_load_imbalance " + formatNumber(imbalance) +
                  " is a measured property of the routing, not a Megatron-LM argument; not "
                  "written");
}

void trainingArgs(const Scenario& s, ArgList& a, Warnings& w)
{
    const TrainingSettings& t = s.training;
    a.opt("--micro-batch-size", t.micro_batch);
    a.opt("--global-batch-size", t.global_batch);
    a.opt("--seq-length", t.seq_len);
    a.opt("--max-position-embeddings", t.seq_len);
    a.flag(std::string(megatronPrecisionFlag(t.precision)));
    if (t.precision == Precision::FP8) {
        a.opt("--fp8-format", kMegatronFp8Format);
        // Megatron-LM's --fp8-recipe: delayed (its default), tensorwise (TE current scaling),
        // mxfp8; torchao's rowwise recipes have no Megatron counterpart.
        std::string recipe = kMegatronFp8Recipe;
        switch (resolvedFp8Recipe(t)) {
        case Fp8Recipe::Tensorwise:
            recipe = "tensorwise";
            break;
        case Fp8Recipe::Mxfp8:
            recipe = "mxfp8";
            break;
        case Fp8Recipe::Rowwise:
        case Fp8Recipe::RowwiseGwHp:
            w.add("fp8_recipe_not_megatron",
                  "training.fp8_recipe " + std::string(toString(t.fp8_recipe)) +
                      " has no Megatron-LM --fp8-recipe; delayed written");
            break;
        case Fp8Recipe::Default:
        case Fp8Recipe::Delayed:
            break;
        }
        a.opt("--fp8-recipe", recipe);
        if (t.fp8_param_gather) {
            // arguments.py asserts the distributed optimizer (or an FSDP) for it.
            if (s.parallel.zero == 0)
                w.add("fp8_param_gather_needs_distributed_optimizer",
                      "--fp8-param-gather needs the distributed optimizer; written anyway");
            a.flag("--fp8-param-gather");
        }
    }
    if (t.recompute != Recompute::None)
        a.opt("--recompute-granularity", std::string(toString(t.recompute)));
    if (t.recompute == Recompute::Selective && t.recompute_modules != kRecomputeCoreAttn)
        a.opt("--recompute-modules", recomputeModuleList(t.recompute_modules, " "));
    if (t.recompute == Recompute::Full) {
        // block: the first N layers of each chunk; uniform with 1: every layer on its own.
        a.opt("--recompute-method", t.recompute_num_layers > 0 ? "block" : "uniform");
        a.opt("--recompute-num-layers", std::max(1, t.recompute_num_layers));
    }
    if (const std::string backend = megatronAttentionBackend(t, w); !backend.empty())
        a.opt("--attention-backend", backend);
    a.opt("--optimizer", std::string(toString(t.optimizer)));
    if (t.adam_moments_dtype == AdamMomentsDtype::Bf16) { // Transformer Engine's FusedAdam
        a.flag("--use-precision-aware-optimizer");
        a.opt("--exp-avg-dtype", "bf16");
        a.opt("--exp-avg-sq-dtype", "bf16");
    }
    if (t.dropout) {
        const std::string d = *t.dropout ? formatNumber(kMegatronDefaultDropout) : "0";
        a.opt("--hidden-dropout", d);
        a.opt("--attention-dropout", d);
    }
    if (t.compile)
        w.add("compile_not_applicable",
              "training.compile: Megatron-LM runs its fused kernels without torch.compile");
    if (t.fsdp_reshard_after_forward != ReshardAfterForward::Default)
        w.add("fsdp_reshard_not_applicable",
              "training.fsdp_reshard_after_forward is a torchtitan FSDP2 policy; not written");
}

void runArgs(ArgList& a)
{
    // A mock dataset and the null tokenizer make the script run as it is; the tokenizer adds
    // the end-of-document id to --vocab-size, so it is one below the model's vocabulary.
    a.flag("--mock-data");
    a.opt("--tokenizer-type", "NullTokenizer");
    a.opt("--train-iters", kLaunchTrainIters);
    a.opt("--lr", formatNumber(kLaunchPeakLr));
}

} // namespace

void megatronModelArgs(const ModelSpec& m, ArgList& a)
{
    a.opt("--num-layers", m.layers);
    a.opt("--hidden-size", m.hidden);
    a.opt("--num-attention-heads", m.heads);
    if (m.kv_heads != m.heads) {
        a.flag("--group-query-attention");
        a.opt("--num-query-groups", m.kv_heads);
    }
    if (m.head_dim > 0)
        a.opt("--kv-channels", m.head_dim);
    if (m.mla.enabled()) { // Megatron-Core MLATransformerConfig: qk_head_dim is the no-RoPE part
        a.flag("--multi-latent-attention");
        if (m.mla.q_lora_rank > 0)
            a.opt("--q-lora-rank", m.mla.q_lora_rank);
        a.opt("--kv-lora-rank", m.mla.kv_lora_rank);
        a.opt("--qk-head-dim", m.mla.qk_nope_head_dim);
        a.opt("--qk-pos-emb-head-dim", m.mla.qk_rope_head_dim);
        a.opt("--v-head-dim", m.mla.v_head_dim);
    }
    a.opt("--ffn-hidden-size", m.ffn_hidden);
    if (m.gated_mlp)
        a.flag("--swiglu");
    // Megatron's defaults are LayerNorm and learned absolute positions: the others are written.
    if (m.norm == NormType::RmsNorm)
        a.opt("--normalization", std::string(megatronNormalization(m.norm)));
    if (m.position_embedding != PositionEmbedding::Learned)
        a.opt("--position-embedding-type", std::string(megatronPositionType(m.position_embedding)));
    if (m.gated_mlp) // the gated (Llama-family) models paralens holds have no linear biases
        a.flag("--disable-bias-linear");
    if (!m.tied_embeddings)
        a.flag("--untie-embeddings-and-output-weights");
    if (m.qk_norm) // Megatron-Core's per-head norm of q and k (its --normalization kind)
        a.flag("--qk-layernorm");
    if (m.mtp_layers > 0) // Megatron-Core MultiTokenPredictionBlock (DeepSeek-V3 §2.2)
        a.opt("--mtp-num-layers", m.mtp_layers);
    a.opt("--vocab-size", m.vocab - 1);
}

std::string torchrunLine(const Scenario& s, const std::string& entry)
{
    const Nodes n = nodesOf(s);
    return "torchrun --nnodes " + std::to_string(n.nodes) + " --nproc-per-node " +
           std::to_string(n.per_node) +
           " --rdzv-backend c10d --rdzv-endpoint "
           "\"${MASTER_ADDR:-localhost}:${MASTER_PORT:-29500}\" "
           "\\\n    " +
           entry;
}

std::string slurmComment(const Scenario& s)
{
    const Nodes n = nodesOf(s);
    return "# Under Slurm, one task per node runs this script: srun --nodes " +
           std::to_string(n.nodes) +
           " --ntasks-per-node 1 bash THIS_SCRIPT (with MASTER_ADDR the first node).\n";
}

} // namespace launch

LaunchConfig megatronLaunch(const Scenario& s)
{
    using namespace launch;
    LaunchConfig cfg;
    cfg.framework = LaunchFramework::Megatron;
    Warnings w(cfg.warnings);
    commonWarnings(s, LaunchFramework::Megatron, w);
    ArgList a;
    parallelArgs(s, a, w);
    shardingArgs(s, a, w);
    megatronModelArgs(s.model, a);
    moeArgs(s, a, w);
    trainingArgs(s, a, w);
    runArgs(a);

    std::string text = "#!/bin/bash\n" + headerComment(s, kMegatronVersion, "# ");
    text += warningComments(cfg.warnings, "# ");
    text += slurmComment(s);
    text += "set -euo pipefail\n";
    // Megatron-FSDP refuses one connection; TP/SP overlap needs exactly one (arguments.py).
    text += s.parallel.zero >= 2 ? "export CUDA_DEVICE_MAX_CONNECTIONS=8\n"
                                 : "export CUDA_DEVICE_MAX_CONNECTIONS=1\n";
    text += torchrunLine(s, "pretrain_gpt.py") + " \\\n" + a.lines("    ");
    cfg.files.push_back({"launch.sh", text});
    return cfg;
}

} // namespace paralens
