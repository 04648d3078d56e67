// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/validate.h"
#include "core/plan_options.h"

#include <cstdint>
#include <initializer_list>
#include <limits>

namespace paralens {
namespace {

using Fields = std::initializer_list<const char*>;
constexpr auto kInt64Max = std::numeric_limits<std::int64_t>::max();

// Saturating product of non-negative numbers, so absurd plans compare instead of overflowing.
std::int64_t mul(std::int64_t a, std::int64_t b)
{
    if (a == 0 || b == 0)
        return 0;
    return a > kInt64Max / b ? kInt64Max : a * b;
}

std::string str(std::int64_t v)
{
    return std::to_string(v);
}

std::string str(double v)
{
    std::string s = std::to_string(v);
    while (!s.empty() && s.back() == '0')
        s.pop_back();
    if (!s.empty() && s.back() == '.')
        s.pop_back();
    return s;
}

// Products saturate at kInt64Max; say so rather than print the sentinel.
std::string big(std::int64_t v)
{
    return v == kInt64Max ? std::string("more than 9.2e18") : std::to_string(v);
}

// Collects every broken rule with its message (validate()).
struct Collect
{
    std::vector<ValidationError>* out;
    template <typename Message> bool operator()(const char* rule, Fields fields, Message&& message)
    {
        out->push_back({rule, {fields.begin(), fields.end()}, message()});
        return true;
    }
};

// Stops at the first broken rule and never builds a message (isRunnable(): no allocation).
struct FirstFailure
{
    bool failed = false;
    template <typename Message> bool operator()(const char*, Fields, Message&&)
    {
        failed = true;
        return false;
    }
};

// Sizes that later rules divide by must be positive. Each check returns false when the
// reporter says stop; `ok` turns false on any size out of range.
template <typename Report> struct Sizes
{
    Report& report;
    bool ok = true;

    bool atLeast1(std::int64_t v, const char* field)
    {
        if (v >= 1)
            return true;
        ok = false;
        return report("positive", {field}, [=] {
            return std::string(field) + " must be at least 1 (got " + str(v) + ")";
        });
    }
    bool nonNegative(std::int64_t v, const char* field)
    {
        if (v >= 0)
            return true;
        ok = false;
        return report("non_negative", {field}, [=] {
            return std::string(field) + " must not be negative (got " + str(v) + ")";
        });
    }
    bool above0(double v, const char* field)
    {
        if (v > 0 && v < std::numeric_limits<double>::infinity())
            return true;
        ok = false;
        return report("positive", {field}, [=] {
            return std::string(field) + " must be a finite number above 0 (got " + str(v) + ")";
        });
    }
    bool notBelow0(double v, const char* field)
    {
        if (v >= 0 && v < std::numeric_limits<double>::infinity())
            return true;
        ok = false;
        return report("non_negative", {field}, [=] {
            return std::string(field) + " must be a finite number, 0 or more (got " + str(v) + ")";
        });
    }
};

template <typename Report> bool modelSizes(const ModelSpec& m, Sizes<Report>& z)
{
    return z.atLeast1(m.layers, "model.layers") && z.atLeast1(m.hidden, "model.hidden") &&
           z.atLeast1(m.heads, "model.heads") && z.atLeast1(m.kv_heads, "model.kv_heads") &&
           z.nonNegative(m.head_dim, "model.head_dim") &&
           z.atLeast1(m.ffn_hidden, "model.ffn_hidden") && z.atLeast1(m.vocab, "model.vocab") &&
           z.nonNegative(m.moe.experts, "model.moe.experts") &&
           z.nonNegative(m.moe.top_k, "model.moe.top_k") &&
           z.nonNegative(m.moe.expert_ffn_hidden, "model.moe.expert_ffn_hidden") &&
           z.nonNegative(m.moe.shared_experts, "model.moe.shared_experts") &&
           z.atLeast1(m.moe.layer_frequency, "model.moe.layer_frequency") &&
           z.nonNegative(m.moe.first_dense_layers, "model.moe.first_dense_layers") &&
           z.nonNegative(m.mla.q_lora_rank, "model.mla.q_lora_rank") &&
           z.nonNegative(m.mla.kv_lora_rank, "model.mla.kv_lora_rank") &&
           z.nonNegative(m.mla.qk_nope_head_dim, "model.mla.qk_nope_head_dim") &&
           z.nonNegative(m.mla.qk_rope_head_dim, "model.mla.qk_rope_head_dim") &&
           z.nonNegative(m.mla.v_head_dim, "model.mla.v_head_dim");
}

template <typename Report> bool clusterSizes(const ClusterSpec& c, Sizes<Report>& z)
{
    return z.above0(c.gpu.memory_gib, "hardware.gpu.memory_gib") &&
           z.above0(c.gpu.hbm_gbps, "hardware.gpu.hbm_gbps") &&
           z.above0(c.gpu.bf16_tflops, "hardware.gpu.bf16_tflops") &&
           z.notBelow0(c.gpu.fp8_tflops, "hardware.gpu.fp8_tflops") &&
           z.atLeast1(c.gpus_per_node, "hardware.gpus_per_node") &&
           z.atLeast1(c.scale_up_domain, "hardware.scale_up_domain") &&
           z.above0(c.scale_up_gbps, "hardware.scale_up_gbps") &&
           z.above0(c.scale_out_gbps, "hardware.scale_out_gbps") &&
           z.above0(c.pcie_gbps, "hardware.pcie_gbps") &&
           z.notBelow0(c.latencies.scale_up_us, "hardware.latencies.scale_up_us") &&
           z.notBelow0(c.latencies.scale_out_us, "hardware.latencies.scale_out_us");
}

template <typename Report> bool planSizes(const Scenario& s, Sizes<Report>& z)
{
    const ParallelPlan& p = s.parallel;
    const TrainingSettings& t = s.training;
    return z.atLeast1(s.gpus, "gpus") && z.atLeast1(p.tp, "parallel.tp") &&
           z.atLeast1(p.pp, "parallel.pp") && z.atLeast1(p.dp, "parallel.dp") &&
           z.atLeast1(p.ep, "parallel.ep") && z.atLeast1(p.cp, "parallel.cp") &&
           z.atLeast1(p.virtual_stages, "parallel.virtual_stages") &&
           z.nonNegative(p.shard_group, "parallel.shard_group") &&
           z.nonNegative(p.first_stage_layers, "parallel.first_stage_layers") &&
           z.nonNegative(p.last_stage_layers, "parallel.last_stage_layers") &&
           z.atLeast1(t.seq_len, "training.seq_len") &&
           z.atLeast1(t.micro_batch, "training.micro_batch") &&
           z.atLeast1(t.global_batch, "training.global_batch");
}

// 1. Every size listed, then stop if any was broken.
template <typename Report> bool checkSizes(const Scenario& s, Report& report)
{
    Sizes<Report> z{report};
    return modelSizes(s.model, z) && clusterSizes(s.cluster, z) && planSizes(s, z) && z.ok;
}

// Each rule below: when `cond` holds, report it; stop the whole check when told to. The
// message is a callable so that the no-allocation path never formats text.
#define PL_RULE(cond, rule, fields, ...)                                                           \
    if ((cond) && !report(rule, fields, [&] { return std::string() + __VA_ARGS__; }))              \
        return false;

// 2. The model itself.
template <typename Report> bool checkModel(const ModelSpec& m, Report& report)
{
    PL_RULE(m.head_dim == 0 && m.hidden % m.heads != 0, "hidden_divisible_by_heads",
            (Fields{"model.hidden", "model.heads"}),
            "model.hidden = " + str(m.hidden) + " is not divisible by model.heads = " +
                str(std::int64_t{m.heads}) + " (set model.head_dim for other head sizes)");
    PL_RULE(m.kv_heads > m.heads || m.heads % m.kv_heads != 0, "kv_heads_divide_heads",
            (Fields{"model.kv_heads", "model.heads"}),
            "model.kv_heads = " + str(std::int64_t{m.kv_heads}) +
                " must divide model.heads = " + str(std::int64_t{m.heads}));
    // MLA gives every head its own key and value (DeepSeek-V2 §2.1): no query groups.
    PL_RULE(m.isMla() && m.kv_heads != m.heads, "mla_kv_heads",
            (Fields{"model.kv_heads", "model.mla.kv_lora_rank"}),
            "model.kv_heads = " + str(std::int64_t{m.kv_heads}) + " must equal model.heads = " +
                str(std::int64_t{m.heads}) + " with multi-head latent attention (model.mla)");
    PL_RULE(m.isMla() && (m.mla.qkHeadDim() < 1 || m.mla.v_head_dim < 1), "mla_head_dims",
            (Fields{"model.mla.qk_nope_head_dim", "model.mla.v_head_dim"}),
            "model.mla.qk_nope_head_dim + model.mla.qk_rope_head_dim = " + str(m.mla.qkHeadDim()) +
                " and model.mla.v_head_dim = " + str(m.mla.v_head_dim) +
                " must each be at least 1");
    PL_RULE(!m.isMla() && (m.mla.q_lora_rank > 0 || m.mla.v_head_dim > 0), "mla_needs_kv_lora_rank",
            (Fields{"model.mla.kv_lora_rank"}),
            "model.mla fields are set but model.mla.kv_lora_rank is 0 (no latent attention)");
    PL_RULE(!m.isMoe() && (m.moe.top_k > 0 || m.moe.shared_experts > 0), "moe_needs_experts",
            (Fields{"model.moe.experts", "model.moe.top_k"}),
            "model.moe.top_k / shared_experts are set but model.moe.experts is 0");
    PL_RULE(m.isMoe() && (m.moe.top_k < 1 || m.moe.top_k > m.moe.experts), "moe_top_k",
            (Fields{"model.moe.top_k", "model.moe.experts"}),
            "model.moe.top_k = " + str(std::int64_t{m.moe.top_k}) +
                " must be between 1 and model.moe.experts = " + str(std::int64_t{m.moe.experts}));
    PL_RULE(m.isMoe() && m.moe.expert_ffn_hidden < 1, "moe_expert_ffn",
            (Fields{"model.moe.expert_ffn_hidden"}),
            "model.moe.expert_ffn_hidden must be at least 1 for an MoE model");
    PL_RULE(m.isMoe() && m.moe.first_dense_layers >= m.layers, "moe_first_dense_layers",
            (Fields{"model.moe.first_dense_layers", "model.layers"}),
            "model.moe.first_dense_layers = " + str(std::int64_t{m.moe.first_dense_layers}) +
                " leaves no MoE layer among model.layers = " + str(std::int64_t{m.layers}));
    return true;
}

// 3. Tensor, context and sequence parallelism.
template <typename Report> bool checkTensorAndSequence(const Scenario& s, Report& report)
{
    const ModelSpec& m = s.model;
    const ParallelPlan& p = s.parallel;
    const TrainingSettings& t = s.training;
    PL_RULE(m.heads % p.tp != 0, "tp_divides_heads", (Fields{"parallel.tp", "model.heads"}),
            "parallel.tp = " + str(std::int64_t{p.tp}) +
                " must divide model.heads = " + str(std::int64_t{m.heads}));
    PL_RULE(m.kv_heads % p.tp != 0, "tp_divides_kv_heads",
            (Fields{"parallel.tp", "model.kv_heads"}),
            "parallel.tp = " + str(std::int64_t{p.tp}) + " must divide model.kv_heads = " +
                str(std::int64_t{m.kv_heads}) + " (the query groups are split over TP)");
    PL_RULE(p.cp > 1 && t.seq_len % (2 * std::int64_t{p.cp}) != 0, "cp_divides_seq_len",
            (Fields{"parallel.cp", "training.seq_len"}),
            "training.seq_len = " + str(std::int64_t{t.seq_len}) +
                " must be a multiple of 2·parallel.cp = " + str(2 * std::int64_t{p.cp}) +
                " (context parallelism splits each sequence into 2·cp chunks for causal load "
                "balance)");
    PL_RULE(p.sequence_parallel && p.tp > 1 && t.seq_len % p.cp == 0 &&
                (t.seq_len / p.cp) % p.tp != 0,
            "sp_divides_seq_len",
            (Fields{"parallel.sequence_parallel", "parallel.tp", "training.seq_len"}),
            "training.seq_len / parallel.cp = " + str(std::int64_t{t.seq_len / p.cp}) +
                " must be a multiple of parallel.tp = " + str(std::int64_t{p.tp}) +
                " with sequence_parallel");
    return true;
}

// "a, b or c": the schedules that take more than one chunk per GPU.
std::string chunkScheduleNames()
{
    std::string out;
    int left = 0;
    for (Schedule s : kAllSchedules)
        left += usesChunks(s);
    for (Schedule s : kAllSchedules) {
        if (!usesChunks(s))
            continue;
        out += toString(s);
        --left;
        out += left > 1 ? ", " : left == 1 ? " or " : "";
    }
    return out;
}

// 4. Pipeline depth, chunks and the schedule's chunk rule.
template <typename Report> bool checkPipeline(const Scenario& s, Report& report)
{
    const ModelSpec& m = s.model;
    const ParallelPlan& p = s.parallel;
    const ChunkRule rule = traitsOf(p.schedule).chunks;
    const std::int64_t chunks = mul(p.pp, p.virtual_stages);
    PL_RULE(chunks > m.layers, "pp_virtual_stages_within_layers",
            (Fields{"parallel.pp", "parallel.virtual_stages", "model.layers"}),
            "parallel.pp × parallel.virtual_stages = " + big(chunks) + " exceeds model.layers = " +
                str(std::int64_t{m.layers}) + " (every model chunk needs a layer)");
    PL_RULE(rule == ChunkRule::One && p.virtual_stages != 1, "virtual_stages_schedule",
            (Fields{"parallel.virtual_stages", "parallel.schedule"}),
            "parallel.virtual_stages = " + str(std::int64_t{p.virtual_stages}) +
                " needs parallel.schedule " + chunkScheduleNames() + " (got " +
                std::string(toString(p.schedule)) + ")");
    PL_RULE(rule == ChunkRule::Two && p.virtual_stages != 2, "v_schedule_two_chunks",
            (Fields{"parallel.virtual_stages", "parallel.schedule"}),
            "parallel.schedule " + std::string(toString(p.schedule)) +
                " places two chunks per GPU (V shape): parallel.virtual_stages must be 2 (got " +
                str(std::int64_t{p.virtual_stages}) + ")");
    PL_RULE(usesChunks(effectiveSchedule(p.schedule, p.virtual_stages)) && p.pp < 2,
            "schedule_needs_pipeline", (Fields{"parallel.pp", "parallel.schedule"}),
            "parallel.schedule " + std::string(toString(p.schedule)) +
                " needs parallel.pp of at least 2");
    return true;
}

// 4b. Explicit first/last stage sizes (Megatron's decoder_first/last_pipeline_num_layers):
// each set stage needs a layer per chunk, the stages left automatic need the same.
template <typename Report> bool checkStageLayers(const Scenario& s, Report& report)
{
    const ModelSpec& m = s.model;
    const ParallelPlan& p = s.parallel;
    const std::int64_t v = p.virtual_stages;
    const std::int64_t first = p.first_stage_layers, last = p.last_stage_layers;
    const bool any = first > 0 || last > 0;
    PL_RULE(any && p.pp < 2, "stage_layers_need_pipeline",
            (Fields{"parallel.first_stage_layers", "parallel.last_stage_layers", "parallel.pp"}),
            "parallel.first_stage_layers / last_stage_layers need parallel.pp of at least 2");
    if (!any || p.pp < 2)
        return true;
    const std::int64_t fixed = first + last;
    const std::int64_t auto_stages = p.pp - 2 + (first > 0 ? 0 : 1) + (last > 0 ? 0 : 1);
    const bool too_small = (first > 0 && first < v) || (last > 0 && last < v);
    const bool bad =
        too_small || fixed > m.layers ||
        (auto_stages == 0 ? fixed != m.layers : m.layers - fixed < mul(auto_stages, v));
    PL_RULE(bad, "stage_layers_consistent",
            (Fields{"parallel.first_stage_layers", "parallel.last_stage_layers", "model.layers"}),
            "parallel.first_stage_layers = " + str(first) + " and parallel.last_stage_layers = " +
                str(last) + " do not fit model.layers = " + str(std::int64_t{m.layers}) +
                " over parallel.pp = " + str(std::int64_t{p.pp}) +
                " stages (every stage needs at least virtual_stages = " + str(v) +
                " layers; with pp = 2 and both set they must add up to the layers)");
    return true;
}

// 5. Expert parallelism.
template <typename Report> bool checkExperts(const Scenario& s, Report& report)
{
    const ModelSpec& m = s.model;
    const ParallelPlan& p = s.parallel;
    PL_RULE(p.ep > 1 && !m.isMoe(), "ep_needs_moe", (Fields{"parallel.ep", "model.moe.experts"}),
            "parallel.ep = " + str(std::int64_t{p.ep}) +
                " needs a mixture-of-experts model (model.moe.experts is 0)");
    PL_RULE(m.isMoe() && m.moe.experts % p.ep != 0, "ep_divides_experts",
            (Fields{"parallel.ep", "model.moe.experts"}),
            "parallel.ep = " + str(std::int64_t{p.ep}) +
                " must divide model.moe.experts = " + str(std::int64_t{m.moe.experts}));
    if (p.expert_tp <= 0) {
        PL_RULE(mul(p.dp, p.cp) % p.ep != 0, "ep_divides_dp_cp",
                (Fields{"parallel.ep", "parallel.dp", "parallel.cp"}),
                "parallel.ep = " + str(std::int64_t{p.ep}) +
                    " must divide parallel.dp × parallel.cp = " + big(mul(p.dp, p.cp)) +
                    " (expert groups are carved out of data × context ranks)");
    } else {
        // MoE parallel folding (Megatron-Core parallel_state.py): expert TP × EP tile the
        // tp·cp·dp ranks of a stage.
        const std::int64_t ranks = mul(mul(p.tp, p.cp), p.dp);
        PL_RULE(ranks % mul(p.expert_tp, p.ep) != 0, "etp_ep_divides_tp_cp_dp",
                (Fields{"parallel.expert_tp", "parallel.ep", "parallel.tp", "parallel.cp",
                        "parallel.dp"}),
                "parallel.expert_tp × parallel.ep = " + big(mul(p.expert_tp, p.ep)) +
                    " must divide parallel.tp × parallel.cp × parallel.dp = " + big(ranks) +
                    " (expert groups tile the ranks of a pipeline stage)");
    }
    PL_RULE(m.isMoe() && m.moe.expert_ffn_hidden % p.expertTp() != 0, "etp_divides_expert_ffn",
            (Fields{"parallel.expert_tp", "model.moe.expert_ffn_hidden"}),
            "the expert TP degree " + str(std::int64_t{p.expertTp()}) +
                " must divide model.moe.expert_ffn_hidden = " + str(m.moe.expert_ffn_hidden));
    const MoeSpec& moe = m.moe;
    PL_RULE(m.isMoe() && (moe.groups > 0) != (moe.group_top_k > 0), "moe_groups_pair",
            (Fields{"model.moe.groups", "model.moe.group_top_k"}),
            "model.moe.groups and model.moe.group_top_k go together (both 0 or both set)");
    PL_RULE(m.isMoe() && moe.groups > 0 &&
                (moe.experts % moe.groups != 0 || moe.group_top_k > moe.groups),
            "moe_groups_fit", (Fields{"model.moe.groups", "model.moe.group_top_k"}),
            "model.moe.groups = " + str(std::int64_t{moe.groups}) +
                " must divide model.moe.experts = " + str(std::int64_t{moe.experts}) +
                " and be at least model.moe.group_top_k = " + str(std::int64_t{moe.group_top_k}));
    // Megatron-LM's ModelParallelConfig raises for EP > 1 with TP > 1 and no sequence
    // parallelism (megatron/core/model_parallel_config.py).
    PL_RULE(s.training.framework == Framework::Megatron && p.ep > 1 && p.tp > 1 &&
                !p.sequence_parallel,
            "ep_tp_needs_sp", (Fields{"parallel.sequence_parallel", "parallel.ep", "parallel.tp"}),
            "parallel.ep > 1 with parallel.tp > 1 needs parallel.sequence_parallel in Megatron-LM");
    return true;
}

// 6. GPUs.
template <typename Report> bool checkGpus(const Scenario& s, Report& report)
{
    const ClusterSpec& c = s.cluster;
    const ParallelPlan& p = s.parallel;
    const std::int64_t product = mul(mul(p.tp, p.pp), mul(p.cp, p.dp));
    PL_RULE(product != s.gpus, "gpus_product",
            (Fields{"gpus", "parallel.tp", "parallel.pp", "parallel.cp", "parallel.dp"}),
            "parallel.tp × parallel.pp × parallel.cp × parallel.dp = " + big(product) +
                " must equal gpus = " + str(std::int64_t{s.gpus}));
    PL_RULE(s.gpus > c.gpus_per_node && s.gpus % c.gpus_per_node != 0, "gpus_whole_nodes",
            (Fields{"gpus", "hardware.gpus_per_node"}),
            "gpus = " + str(std::int64_t{s.gpus}) + " must be whole nodes of " +
                "hardware.gpus_per_node = " + str(std::int64_t{c.gpus_per_node}) +
                " (or fewer than one node)");
    PL_RULE(c.scale_up_domain % c.gpus_per_node != 0 && c.gpus_per_node % c.scale_up_domain != 0,
            "scale_up_domain_nodes", (Fields{"hardware.scale_up_domain", "hardware.gpus_per_node"}),
            "hardware.scale_up_domain = " + str(std::int64_t{c.scale_up_domain}) +
                " must divide or be a multiple of hardware.gpus_per_node = " +
                str(std::int64_t{c.gpus_per_node}));
    return true;
}

// The stable id of the rule "too few micro-batches for this schedule".
const char* microbatchRule(Schedule s)
{
    return s == Schedule::DualPipeV ? "dualpipe_microbatches" : "interleaved_microbatches";
}

// 7. Batch: whole micro-batches per replica, and as many as the schedule needs.
template <typename Report> bool checkBatch(const Scenario& s, Report& report)
{
    const ParallelPlan& p = s.parallel;
    const TrainingSettings& t = s.training;
    const std::int64_t per_step = mul(t.micro_batch, p.dp);
    const std::int64_t m_count = t.global_batch / per_step;
    PL_RULE(t.global_batch < per_step, "microbatches_at_least_one",
            (Fields{"training.global_batch", "training.micro_batch", "parallel.dp"}),
            "training.global_batch = " + str(std::int64_t{t.global_batch}) +
                " is smaller than training.micro_batch × parallel.dp = " + big(per_step) +
                " (no micro-batch per pipeline)");
    PL_RULE(t.global_batch >= per_step && t.global_batch % per_step != 0, "global_batch_multiple",
            (Fields{"training.global_batch", "training.micro_batch", "parallel.dp"}),
            "training.global_batch = " + str(std::int64_t{t.global_batch}) +
                " must be a multiple of training.micro_batch × parallel.dp = " + str(per_step));
    const Schedule runs = effectiveSchedule(p.schedule, p.virtual_stages);
    const std::int64_t per_stage = traitsOf(runs).microbatches_per_stage;
    const std::int64_t need = minMicrobatches(p.schedule, p.virtual_stages, p.pp);
    PL_RULE(m_count >= 1 && m_count < need, microbatchRule(runs),
            (Fields{"training.global_batch", "parallel.pp", "parallel.schedule"}),
            std::string(toString(runs)) + " needs at least " +
                (per_stage > 1 ? str(per_stage) + "·" : std::string()) +
                "parallel.pp = " + str(need) + " micro-batches per pipeline, got " + str(m_count) +
                " (training.global_batch / (micro_batch × dp))");
    return true;
}

// 8. Sharding and precision.
template <typename Report> bool checkSharding(const Scenario& s, Report& report)
{
    const ParallelPlan& p = s.parallel;
    PL_RULE(p.zero < 0 || p.zero > 3, "zero_stage", (Fields{"parallel.zero"}),
            "parallel.zero = " + str(std::int64_t{p.zero}) + " must be 0, 1, 2 or 3");
    PL_RULE(p.shard_group > 0 && p.dp % p.shard_group != 0, "shard_group_divides_dp",
            (Fields{"parallel.shard_group", "parallel.dp"}),
            "parallel.shard_group = " + str(std::int64_t{p.shard_group}) +
                " must divide parallel.dp = " + str(std::int64_t{p.dp}));
    PL_RULE(s.training.precision == Precision::FP8 && !(s.cluster.gpu.fp8_tflops > 0),
            "fp8_hardware", (Fields{"training.precision", "hardware.gpu.fp8_tflops"}),
            "training.precision fp8 needs FP8 tensor cores, but hardware.gpu.fp8_tflops is 0 (" +
                s.cluster.gpu.name + ")");
    PL_RULE(!s.training.flash_attention && s.training.attention_kernel != AttentionKernel::Default,
            "attention_kernel_needs_flash",
            (Fields{"training.attention_kernel", "training.flash_attention"}),
            "training.attention_kernel " + std::string(toString(s.training.attention_kernel)) +
                " is a flash-attention kernel, but training.flash_attention is false");
    PL_RULE(
        s.training.recompute_num_layers > 0 && s.training.recompute != Recompute::Full,
        "recompute_num_layers_full",
        (Fields{"training.recompute_num_layers", "training.recompute"}),
        "training.recompute_num_layers = " + str(std::int64_t{s.training.recompute_num_layers}) +
            " chooses how many layers of each chunk full recompute repeats, but "
            "training.recompute is " +
            std::string(toString(s.training.recompute)) + " (set it to full or leave it out)");
    PL_RULE(
        s.training.recompute_modules != kRecomputeCoreAttn &&
            s.training.framework != Framework::Megatron,
        "recompute_modules_megatron", (Fields{"training.recompute_modules", "training.framework"}),
        "training.recompute_modules chooses Megatron-Core's selective recompute modules, but "
        "training.framework is " +
            std::string(toString(s.training.framework)) +
            ", whose selective recompute is its own (set it to megatron or leave the list out)");
    PL_RULE(s.training.adam_moments_dtype != AdamMomentsDtype::Fp32 &&
                (s.training.framework != Framework::Megatron ||
                 s.training.optimizer != Optimizer::Adam || p.offload_optimizer),
            "adam_moments_dtype_megatron",
            (Fields{"training.adam_moments_dtype", "training.framework", "training.optimizer",
                    "parallel.offload_optimizer"}),
            "training.adam_moments_dtype " + std::string(toString(s.training.adam_moments_dtype)) +
                " is Megatron-Core's precision-aware optimizer (Transformer Engine's FusedAdam on "
                "the GPU), which needs training.framework megatron, training.optimizer adam and "
                "no offloaded optimizer");
    PL_RULE(p.offload_optimizer && s.training.optimizer_impl != OptimizerImpl::Default,
            "optimizer_impl_offloaded",
            (Fields{"training.optimizer_impl", "parallel.offload_optimizer"}),
            "training.optimizer_impl " + std::string(toString(s.training.optimizer_impl)) +
                " sets how the GPU runs the optimizer step, but parallel.offload_optimizer runs "
                "it on the CPU");
    return true;
}
#undef PL_RULE

// Every rule, in a stable order. `report(rule, fields, message)` returns false to stop.
template <typename Report> void check(const Scenario& s, Report& report)
{
    (void)(checkSizes(s, report) && checkModel(s.model, report) &&
           checkTensorAndSequence(s, report) && checkPipeline(s, report) &&
           checkStageLayers(s, report) && checkExperts(s, report) && checkGpus(s, report) &&
           checkBatch(s, report) && checkSharding(s, report));
}

} // namespace

std::vector<ValidationError> validate(const Scenario& s)
{
    std::vector<ValidationError> errors;
    Collect collect{&errors};
    check(s, collect);
    return errors;
}

bool isRunnable(const Scenario& s)
{
    FirstFailure first;
    check(s, first);
    return !first.failed;
}

} // namespace paralens
