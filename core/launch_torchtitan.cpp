// SPDX-License-Identifier: GPL-3.0-or-later
// torchtitan: a TOML job config (torchtitan/config/job_config.py of torchtitan v0.2.2) and, in
// its header, the torchrun line that starts it.
#include "core/launch_torchtitan.h"
#include "core/constants.h"
#include "core/framework.h"
#include "core/kernel_time.h"
#include "core/launch_common.h"
#include "core/params.h"
#include "core/spec_io.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <sstream>
#include <vector>

namespace paralens {
namespace launch {

const char* const kTorchtitanVersion = "torchtitan v0.2.2";

namespace {
// torchtitan/models/llama3/__init__.py and deepseek_v3/__init__.py flavors.
constexpr std::array kModels{
    TorchtitanModel{"llama3-8b", "llama3", "8B"},
    TorchtitanModel{"llama3-70b", "llama3", "70B"},
    TorchtitanModel{"llama3-405b", "llama3", "405B"},
    TorchtitanModel{"deepseek-v3", "deepseek_v3", "671B"},
};
constexpr std::array<std::pair<Schedule, const char*>, 5> kSchedules{{
    {Schedule::GPipe, "GPipe"},
    {Schedule::OneF1B, "1F1B"},
    {Schedule::Interleaved1F1B, "Interleaved1F1B"},
    {Schedule::ZBV, "ZBVZeroBubble"},
    {Schedule::DualPipeV, "DualPipeV"},
}};

bool sameNoCase(std::string_view a, std::string_view b)
{
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}
} // namespace

const TorchtitanModel* torchtitanModelOfPreset(std::string_view preset_id)
{
    for (const auto& m : kModels)
        if (preset_id == m.preset)
            return &m;
    return nullptr;
}

const TorchtitanModel* torchtitanModelOf(std::string_view name, std::string_view flavor)
{
    for (const auto& m : kModels)
        if (name == m.name && flavor == m.flavor)
            return &m;
    return nullptr;
}

const char* torchtitanSchedule(Schedule s)
{
    for (const auto& [v, name] : kSchedules)
        if (v == s)
            return name;
    return nullptr;
}

std::optional<Schedule> scheduleOfTorchtitan(std::string_view name)
{
    for (const auto& [v, n] : kSchedules)
        if (sameNoCase(name, n))
            return v;
    return std::nullopt;
}

namespace {

std::string quoted(std::string_view s)
{
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\')
            out += '\\';
        out += c;
    }
    return out + "\"";
}

const char* boolText(bool b)
{
    return b ? "true" : "false";
}

// Writes key = value lines under one [table].
class Table
{
public:
    Table(std::ostringstream& o, const char* name) : m_o(o) { m_o << "\n[" << name << "]\n"; }
    void str(const char* k, std::string_view v) { m_o << k << " = " << quoted(v) << "\n"; }
    void num(const char* k, long long v) { m_o << k << " = " << v << "\n"; }
    void boolean(const char* k, bool v) { m_o << k << " = " << boolText(v) << "\n"; }
    void raw(const char* k, const std::string& v) { m_o << k << " = " << v << "\n"; }

private:
    std::ostringstream& m_o;
};

void modelTable(const Scenario& s, std::ostringstream& o, Warnings& w)
{
    Table t(o, "model");
    const TorchtitanModel* m = torchtitanModelOfPreset(s.model_id);
    if (!m)
        w.add("no_torchtitan_flavor",
              "torchtitan takes the model's shape from a registered flavor and has none for " +
                  s.model.name + "; register one with this shape and set [model] name/flavor");
    if (!m && s.model.isMla())
        w.add("mla_in_flavor_only",
              "torchtitan's [model] names a flavor; the MLA widths (q_lora_rank " +
                  std::to_string(s.model.mla.q_lora_rank) + ", kv_lora_rank " +
                  std::to_string(s.model.mla.kv_lora_rank) + ", qk_nope_head_dim " +
                  std::to_string(s.model.mla.qk_nope_head_dim) + ", qk_rope_head_dim " +
                  std::to_string(s.model.mla.qk_rope_head_dim) + ", v_head_dim " +
                  std::to_string(s.model.mla.v_head_dim) +
                  ") are DeepSeekV3ModelArgs fields of that flavor, not TOML keys; not written");
    // torchtitan's decoders (llama3, deepseek_v3, qwen3) rotate q and k and use RMSNorm
    // (models/norms.py build_norm: norm_type "rmsnorm"); no flavor has other positions or norms.
    if (s.model.position_embedding != PositionEmbedding::Rope || s.model.norm != NormType::RmsNorm)
        w.add("positions_norm_unsupported",
              "torchtitan's models use RoPE and RMSNorm; " + s.model.name + " has " +
                  std::string(toString(s.model.position_embedding)) + " positions and " +
                  std::string(toString(s.model.norm)) +
                  ", which no torchtitan flavor runs: the job would train a different model");
    // deepseek_v3 is torchtitan's one model with MLA (and its MoE model).
    t.str("name", m ? m->name : (s.model.isMoe() || s.model.isMla() ? "deepseek_v3" : "llama3"));
    t.str("flavor", m ? m->flavor : "paralens-custom");
    std::string converters = "[]";
    if (s.training.precision == Precision::FP8)
        converters = s.model.isMoe() ? R"(["quantize.linear.float8", "quantize.grouped_mm.float8"])"
                                     : R"(["quantize.linear.float8"])";
    t.raw("converters", converters);
}

void trainingTable(const Scenario& s, std::ostringstream& o, Warnings& w)
{
    const TrainingSettings& tr = s.training;
    const ParallelPlan& p = s.parallel;
    Table t(o, "training");
    // Without PP each rank's batch is one micro-batch (gradient accumulation makes up the
    // global batch); with PP it is the pipeline's whole share, cut into micro-batches.
    t.num("local_batch_size", p.pp > 1 ? tr.global_batch / std::max(1, p.dp) : tr.micro_batch);
    t.num("global_batch_size", tr.global_batch);
    t.num("seq_len", tr.seq_len);
    t.num("steps", kLaunchTrainIters);
    t.str("mixed_precision_param", "bfloat16");
    if (s.training.precision == Precision::FP16)
        w.add("fp16_not_written", "torchtitan's training.mixed_precision_param takes bfloat16 or "
                                  "float32, not float16; written as bfloat16");
    t.str("mixed_precision_reduce",
          tr.grad_reduce_dtype == GradReduceDtype::Bf16 ? "bfloat16" : "float32");
    t.boolean("enable_cpu_offload", p.offload_optimizer);
    if (p.offload_optimizer)
        w.add("cpu_offload_moves_all", "training.enable_cpu_offload (FSDP2 CPUOffloadPolicy) "
                                       "moves parameters and gradients to the host too, not "
                                       "only the optimizer states paralens offloads");
    if (tr.optimizer != Optimizer::Adam)
        w.add("optimizer_unsupported",
              "torchtitan builds Adam or AdamW only; training.optimizer sgd written as AdamW");
    if (!tr.overlap_grad_reduce)
        w.add("overlap_grad_reduce_always",
              "FSDP2 always overlaps the gradient reduce-scatter with the backward");
    if (!tr.flash_attention)
        w.add("flash_attention_always",
              "torchtitan's SDPA picks the flash kernel; training.flash_attention false is not "
              "expressible");
    if (tr.dropout.value_or(false))
        w.add("dropout_unsupported", "torchtitan's models have no dropout");
}

// FSDP2 sharding: ZeRO-2 is full sharding that keeps parameters gathered between forward and
// backward (reshard_after_forward never); ZeRO-3 reshards by the chosen policy.
void shardingKeys(const Scenario& s, Table& t, Warnings& w)
{
    const ParallelPlan& p = s.parallel;
    int zero = p.zero;
    if (zero == 1) {
        w.add("zero1_unsupported", "torchtitan has no optimizer-only sharding (ZeRO-1); written as "
                                   "FSDP2 with parameters kept after forward (zero 2)");
        zero = 2;
    }
    if (p.dp == 1 && zero > 0)
        w.add("zero_without_dp",
              "parallel.dp is 1: nothing to shard, the file reads back as zero 0");
    if (zero == 0 && p.dp > 1 && (p.tp > 1 || p.pp > 1 || p.cp > 1))
        w.add("ddp_multi_dim", "torchtitan refuses DDP (zero 0) combined with TP, PP or CP "
                               "(\"DDP has not supported > 1D parallelism\")");
    const int shard = zero == 0 ? 1 : p.shardGroup();
    t.num("data_parallel_replicate_degree", p.dp / std::max(1, shard));
    t.num("data_parallel_shard_degree", shard);
    std::string policy = "default";
    if (zero == 2) {
        policy = "never";
        if (s.training.fsdp_reshard_after_forward != ReshardAfterForward::Default)
            w.add("fsdp_reshard_zero2", "zero 2 is written as reshard_after_forward never; "
                                        "training.fsdp_reshard_after_forward is ignored");
    } else if (zero == 3) {
        policy = std::string(toString(s.training.fsdp_reshard_after_forward));
        if (s.training.fsdp_reshard_after_forward == ReshardAfterForward::Never)
            w.add("zero3_never_is_zero2",
                  "zero 3 with reshard_after_forward never is FSDP2's zero 2; it reads back so");
    }
    t.str("fsdp_reshard_after_forward", policy);
}

// The layers of every model chunk, in model order, by name (torchtitan's Llama and DeepSeek
// modules: tok_embeddings, layers.N, norm, output).
std::string modulesPerPart(const Scenario& s)
{
    const ParallelPlan& p = s.parallel;
    const int chunks = p.pp * std::max(1, p.virtual_stages);
    std::vector<int> counts(std::max(0, std::min(chunks, s.model.layers)));
    if (chunks > s.model.layers ||
        !splitChunks(s.model, p, conventions(Framework::FSDP, s.training.optimizer).split, counts))
        return "";
    std::string out = "[\n";
    int layer = 0;
    for (int c = 0; c < chunks; ++c) {
        out += "    [";
        std::string sep;
        if (c == 0) {
            out += "\"tok_embeddings\"";
            sep = ", ";
        }
        for (int i = 0; i < counts[c]; ++i, ++layer) {
            out += sep + "\"layers." + std::to_string(layer) + "\"";
            sep = ", ";
        }
        if (c == chunks - 1)
            out += sep + "\"norm\", \"output\"";
        out += c + 1 < chunks ? "],\n" : "]\n";
    }
    return out + "]";
}

void pipelineKeys(const Scenario& s, Table& t, Warnings& w)
{
    const ParallelPlan& p = s.parallel;
    t.num("pipeline_parallel_degree", p.pp);
    const char* schedule = torchtitanSchedule(p.schedule);
    if (!schedule) {
        w.add("schedule_unsupported", "parallel.schedule " + std::string(toString(p.schedule)) +
                                          " is not a torch.distributed.pipelining schedule; "
                                          "written as " +
                                          (p.virtual_stages > 1 ? "Interleaved1F1B" : "1F1B"));
        schedule = p.virtual_stages > 1 ? "Interleaved1F1B" : "1F1B";
    }
    t.str("pipeline_parallel_schedule", schedule);
    if (p.pp == 1)
        return;
    t.num("pipeline_parallel_microbatch_size", s.training.micro_batch);
    if (const std::string parts = modulesPerPart(s); !parts.empty())
        t.raw("module_fqns_per_model_part", parts);
}

void parallelismTable(const Scenario& s, std::ostringstream& o, Warnings& w)
{
    const ParallelPlan& p = s.parallel;
    Table t(o, "parallelism");
    shardingKeys(s, t, w);
    t.num("tensor_parallel_degree", p.tp);
    if (p.tp > 1 && !p.sequence_parallel)
        w.add("sequence_parallel_always",
              "torchtitan's TP always shards the sequence of norms and dropouts (SP)");
    t.boolean("enable_async_tensor_parallel", p.tp_comm_overlap);
    if (p.tp_comm_overlap && !s.training.compile)
        w.add("async_tp_needs_compile", "enable_async_tensor_parallel takes effect only with "
                                        "[compile] enable (training.compile)");
    pipelineKeys(s, t, w);
    t.num("context_parallel_degree", p.cp);
    if (p.cp_comm == CpComm::AllGather || p.cp_comm == CpComm::AllToAll)
        t.str("context_parallel_rotate_method",
              p.cp_comm == CpComm::AllGather ? "allgather" : "alltoall");
    else if (p.cp_comm == CpComm::P2P)
        w.add("cp_comm_unsupported", "torchtitan rotates K/V by allgather or alltoall; "
                                     "parallel.cp_comm p2p not written (its default: allgather)");
    if (s.model.isMoe()) { // the expert degrees mean nothing to a dense model
        t.num("expert_parallel_degree", p.ep);
        const int etp = p.expertTp();
        if (etp != 1 && etp != p.tp)
            w.add("etp_unsupported", "torchtitan's expert TP is 1 or the TP degree; "
                                     "parallel.expert_tp " +
                                         std::to_string(etp) + " written as it is");
        t.num("expert_tensor_parallel_degree", etp);
    }
    if (p.moe_dispatcher == MoeDispatcher::AllToAll || p.moe_dispatcher == MoeDispatcher::DeepEP)
        t.str("expert_parallel_comm_backend",
              p.moe_dispatcher == MoeDispatcher::DeepEP ? "deepep" : "standard");
    else if (p.moe_dispatcher != MoeDispatcher::Default)
        w.add("moe_dispatcher_unsupported",
              "torchtitan dispatches by all-to-all (standard) or DeepEP; parallel.moe_dispatcher " +
                  std::string(toString(p.moe_dispatcher)) + " not written");
    if (p.moe_overlap)
        w.add("moe_overlap_unsupported",
              "torchtitan overlaps EP communication only inside DualPipeV "
              "(pipeline_parallel_expert_parallel_overlap); parallel.moe_overlap not written");
}

// Full recompute of N layers per chunk as torchtitan's layer-level option: every k-th block
// (selective_ac_option k) recomputes chunk / k of a chunk's layers; 0 when every layer is
// recomputed (mode full). A count no k gives is written as the nearest, with a warning.
int layerSacFrequency(const Scenario& s, Warnings& w)
{
    const int chunk = layersPerChunk(s.model, s.parallel);
    const int n = s.training.recomputedPerChunk();
    if (n <= 0 || n >= chunk)
        return 0;
    const int k = std::max(2, (chunk + n / 2) / n);
    if (chunk / k != n)
        w.add("recompute_num_layers_inexact",
              "torchtitan checkpoints every k-th block: " + std::to_string(n) + " of " +
                  std::to_string(chunk) + " layers is not " + std::to_string(chunk) +
                  " / k; selective_ac_option " + std::to_string(k) + " recomputes " +
                  std::to_string(chunk / k));
    return k;
}

void otherTables(const Scenario& s, std::ostringstream& o, Warnings& w)
{
    const TrainingSettings& tr = s.training;
    {
        Table t(o, "activation_checkpoint");
        const int k = layerSacFrequency(s, w);
        t.str("mode", tr.recompute == Recompute::None                 ? "none"
                      : tr.recompute == Recompute::Selective || k > 1 ? "selective"
                                                                      : "full");
        if (tr.recompute == Recompute::Selective)
            t.str("selective_ac_option", "op");
        else if (k > 1)
            t.str("selective_ac_option", std::to_string(k));
    }
    {
        Table t(o, "compile");
        t.boolean("enable", tr.compile);
        // An eager loss (training.cross_entropy eager) leaves "loss" out: the fp32 logits
        // copies the model charges for it are then what the run allocates.
        t.raw("components",
              tr.cross_entropy == CrossEntropy::Eager ? R"(["model"])" : R"(["model", "loss"])");
    }
    {
        Table t(o, "optimizer");
        t.str("name", "AdamW");
        t.raw("lr", formatNumber(kLaunchPeakLr));
        // optimizer.implementation (since 6e4988550, Feb 2025; "fused" by default).
        t.str("implementation", std::string(torchtitanOptimizerImpl(tr.optimizer_impl)));
    }
    if (tr.precision == Precision::FP8) {
        // torchao's float8 recipe; with training.fp8_param_gather FSDP gathers in float8 with
        // precomputed scales (tensorwise only, torchtitan docs/float8.md; off by default).
        Fp8Recipe recipe = resolvedFp8Recipe(tr);
        if (recipe == Fp8Recipe::Delayed || recipe == Fp8Recipe::Mxfp8) {
            w.add("fp8_recipe_not_torchao_float8",
                  "training.fp8_recipe " + std::string(toString(recipe)) +
                      " is not a torchao float8 recipe; tensorwise written");
            recipe = Fp8Recipe::Tensorwise;
        }
        Table t(o, "quantize.linear.float8");
        t.str("recipe_name", std::string(toString(recipe)));
        if (recipe == Fp8Recipe::Tensorwise && tr.fp8_param_gather) {
            t.boolean("enable_fsdp_float8_all_gather", true);
            t.boolean("precompute_float8_dynamic_scale_for_fsdp", true);
        } else if (tr.fp8_param_gather) {
            w.add("fp8_param_gather_not_written",
                  "training.fp8_param_gather: torchao gathers in float8 with the tensorwise recipe "
                  "only; not written");
        }
        if (s.model.isMoe()) {
            Table g(o, "quantize.grouped_mm.float8");
            g.raw("fqns", R"(["experts"])");
        }
    }
    if (tr.moe_load_imbalance == 1.0) {
        Table t(o, "debug");
        t.boolean("moe_force_load_balance", true);
    } else if (tr.moe_load_imbalance > 0) {
        w.add("moe_load_imbalance_not_a_setting",
              "training.moe_load_imbalance " + formatNumber(tr.moe_load_imbalance) +
                  " is a measured property of the routing; not written");
    }
}

std::string launchComment(const Scenario& s)
{
    const Nodes n = nodesOf(s);
    return "# Start: torchrun --nnodes " + std::to_string(n.nodes) + " --nproc-per-node " +
           std::to_string(n.per_node) +
           " --rdzv-backend c10d --rdzv-endpoint \"$MASTER_ADDR:29500\" -m torchtitan.train "
           "--job.config_file train.toml\n";
}

} // namespace
} // namespace launch

LaunchConfig torchtitanLaunch(const Scenario& s)
{
    using namespace launch;
    LaunchConfig cfg;
    cfg.framework = LaunchFramework::Torchtitan;
    Warnings w(cfg.warnings);
    commonWarnings(s, LaunchFramework::Torchtitan, w);
    std::ostringstream body;
    {
        Table job(body, "job");
        job.str("description",
                s.model.name + " on " + std::to_string(s.gpus) + " GPUs, from paralens");
    }
    modelTable(s, body, w);
    trainingTable(s, body, w);
    parallelismTable(s, body, w);
    otherTables(s, body, w);
    std::string text = headerComment(s, kTorchtitanVersion, "# ") + launchComment(s);
    text += warningComments(cfg.warnings, "# ");
    text += body.str();
    cfg.files.push_back({"train.toml", text});
    return cfg;
}

} // namespace paralens
