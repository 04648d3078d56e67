// SPDX-License-Identifier: GPL-3.0-or-later
// A torchtitan TOML job config read into a scenario: the inverse of launch_torchtitan.cpp.
#include "core/error.h"
#include "core/framework.h"
#include "core/launch_import_detail.h"
#include "core/launch_torchtitan.h"
#include "core/params.h"
#include "core/plan_options.h"
#include "core/spec_io.h"
#include "core/toml.h"

#include <algorithm>
#include <set>

namespace paralens::launch {
namespace {

using toml::Value;

// Typed reads of section.key with the line in every error; records what was read.
class Reader
{
public:
    Reader(const Value& root, const ImportContext& ctx) : m_root(root), m_ctx(ctx) {}

    const Value* get(const char* section, const char* key)
    {
        m_read.insert(std::string(section) + "." + key);
        // A dotted section ("quantize.linear.float8") is a path of nested tables.
        const Value* t = &m_root;
        for (std::string_view rest = section; t;) {
            const std::size_t dot = rest.find('.');
            const std::string part(rest.substr(0, dot));
            if (t != &m_root && t->kind != Value::Kind::Table)
                fail(*t, section, std::string("expected a table, got ") + kindName(t->kind));
            t = t->find(part);
            if (dot == std::string_view::npos)
                break;
            rest.remove_prefix(dot + 1);
        }
        if (!t)
            return nullptr;
        if (t->kind != Value::Kind::Table)
            fail(*t, section, std::string("expected a table, got ") + kindName(t->kind));
        return t->find(key);
    }
    std::optional<std::int64_t> integer(const char* section, const char* key, std::int64_t min,
                                        std::int64_t max)
    {
        const Value* v = get(section, key);
        if (!v)
            return std::nullopt;
        const std::string name = std::string(section) + "." + key;
        if (v->kind != Value::Kind::Integer)
            fail(*v, name, std::string("expected an integer, got ") + kindName(v->kind));
        if (v->integer < min || v->integer > max)
            fail(*v, name,
                 std::to_string(v->integer) + " is out of bounds [" + std::to_string(min) + ", " +
                     std::to_string(max) + "]");
        return v->integer;
    }
    std::optional<std::string> string(const char* section, const char* key)
    {
        const Value* v = get(section, key);
        if (!v)
            return std::nullopt;
        if (v->kind != Value::Kind::String)
            fail(*v, std::string(section) + "." + key,
                 std::string("expected a string, got ") + kindName(v->kind));
        return v->str;
    }
    std::optional<bool> boolean(const char* section, const char* key)
    {
        const Value* v = get(section, key);
        if (!v)
            return std::nullopt;
        if (v->kind != Value::Kind::Bool)
            fail(*v, std::string(section) + "." + key,
                 std::string("expected a boolean, got ") + kindName(v->kind));
        return v->boolean;
    }
    /// An array of strings (or nullopt).
    std::optional<std::vector<std::string>> strings(const Value* v, const std::string& name)
    {
        if (!v)
            return std::nullopt;
        if (v->kind != Value::Kind::Array)
            fail(*v, name, std::string("expected an array, got ") + kindName(v->kind));
        std::vector<std::string> out;
        for (const Value& item : v->items) {
            if (item.kind != Value::Kind::String)
                fail(item, name, std::string("expected strings, got ") + kindName(item.kind));
            out.push_back(item.str);
        }
        return out;
    }
    [[noreturn]] void fail(const Value& v, const std::string& name, const std::string& what) const
    {
        throw InputError(name,
                         m_ctx.source + ":" + std::to_string(v.line) + ": " + name + ": " + what);
    }
    /// section.key of every value never read, for the import notes.
    std::vector<std::string> unread() const
    {
        std::vector<std::string> out;
        for (const auto& [section, t] : m_root.entries) {
            if (t.kind != Value::Kind::Table) {
                out.push_back(section);
                continue;
            }
            for (const auto& [key, v] : t.entries)
                if (!m_read.count(section + "." + key) && v.kind != Value::Kind::Table)
                    out.push_back(section + "." + key);
        }
        return out;
    }

private:
    const Value& m_root;
    const ImportContext& m_ctx;
    std::set<std::string> m_read;
};

std::optional<ModelSpec> modelOf(Reader& r, ImportContext& ctx)
{
    const auto name = r.string("model", "name");
    const auto flavor = r.string("model", "flavor");
    if (name && flavor && ctx.options.model_id.empty() && ctx.header.model_id.empty()) {
        const TorchtitanModel* m = torchtitanModelOf(*name, *flavor);
        if (!m)
            ctx.fail("model.flavor", "torchtitan model " + *name + " flavor " + *flavor +
                                         " is not one paralens knows; name a preset with --model");
        ctx.header.model_id = m->preset;
    }
    return std::nullopt; // torchtitan configs carry no shape: a preset names it
}

void readSharding(Reader& r, Scenario& s)
{
    ParallelPlan& p = s.parallel;
    const int replicate =
        int(r.integer("parallelism", "data_parallel_replicate_degree", 1, bounds::kMaxGpus)
                .value_or(1));
    const auto shard = r.integer("parallelism", "data_parallel_shard_degree", -1, bounds::kMaxGpus);
    if (shard && *shard == 0)
        r.fail(*r.get("parallelism", "data_parallel_shard_degree"),
               "parallelism.data_parallel_shard_degree", "0 is not a degree (-1: the rest)");
    const std::string policy =
        r.string("parallelism", "fsdp_reshard_after_forward").value_or("default");
    const auto reshard = parseReshardAfterForward(policy);
    if (!reshard)
        r.fail(*r.get("parallelism", "fsdp_reshard_after_forward"),
               "parallelism.fsdp_reshard_after_forward",
               "'" + policy + "' is not default, always or never");
    // -1 (the default): the ranks left after the other degrees; set once the world is known.
    const int s_deg = shard ? int(*shard) : -1;
    p.dp = replicate * std::max(1, s_deg);
    if (s_deg == 1) {
        p.zero = 0;
    } else if (*reshard == ReshardAfterForward::Never) {
        p.zero = 2;
    } else {
        p.zero = 3;
        s.training.fsdp_reshard_after_forward = *reshard;
    }
    p.shard_group = replicate > 1 && s_deg > 1 ? s_deg : 0;
}

void readPipeline(Reader& r, ImportContext& ctx, Scenario& s)
{
    ParallelPlan& p = s.parallel;
    p.pp =
        int(r.integer("parallelism", "pipeline_parallel_degree", 1, bounds::kMaxGpus).value_or(1));
    const std::string schedule =
        r.string("parallelism", "pipeline_parallel_schedule").value_or("1F1B");
    const auto sched = scheduleOfTorchtitan(schedule);
    if (!sched)
        r.fail(*r.get("parallelism", "pipeline_parallel_schedule"),
               "parallelism.pipeline_parallel_schedule",
               "'" + schedule +
                   "' is not GPipe, 1F1B, Interleaved1F1B, ZBVZeroBubble or DualPipeV");
    p.schedule = *sched;
    p.virtual_stages = usesChunks(*sched) ? 2 : 1; // torchtitan's looped default
    const Value* parts = r.get("parallelism", "module_fqns_per_model_part");
    if (!parts)
        return;
    const std::string name = "parallelism.module_fqns_per_model_part";
    if (parts->kind != Value::Kind::Array || parts->items.empty())
        r.fail(*parts, name, "expected a non-empty array of arrays");
    std::vector<int> counts;
    for (const Value& part : parts->items) {
        const auto fqns = r.strings(&part, name);
        int layers = 0;
        for (const auto& f : *fqns)
            layers += f.rfind("layers.", 0) == 0;
        counts.push_back(layers);
    }
    const int chunks = int(counts.size());
    if (chunks % p.pp != 0)
        r.fail(*parts, name,
               std::to_string(chunks) +
                   " model parts are not a multiple of "
                   "pipeline_parallel_degree " +
                   std::to_string(p.pp));
    p.virtual_stages = chunks / p.pp;
    // The split paralens would make on its own, else explicit first/last stage sizes.
    const LayerSplit rule = conventions(Framework::FSDP, s.training.optimizer).split;
    std::vector<int> mine(counts.size());
    auto matches = [&](int first, int last) {
        ParallelPlan q = p;
        q.first_stage_layers = first;
        q.last_stage_layers = last;
        return splitChunks(s.model, q, rule, mine) && mine == counts;
    };
    // Per device: the parts are in model order, placed looped or in a V (deviceOfChunk).
    const ChunkLayout layout = chunkLayoutOf(p.schedule, p.virtual_stages);
    int first = 0, last = 0;
    for (int c = 0; c < chunks; ++c) {
        const int device = deviceOfChunk(layout, p.pp, c);
        first += device == 0 ? counts[c] : 0;
        last += device == p.pp - 1 ? counts[c] : 0;
    }
    for (const auto& [f, l] : {std::pair{0, 0}, {first, 0}, {0, last}, {first, last}})
        if (matches(f, l)) {
            p.first_stage_layers = f;
            p.last_stage_layers = l;
            return;
        }
    ctx.notes.push_back("module_fqns_per_model_part splits the layers in a way paralens does "
                        "not hold; first and last stage sizes kept, the middle split evenly");
    p.first_stage_layers = first;
    p.last_stage_layers = last;
}

void readParallelism(Reader& r, ImportContext& ctx, Scenario& s)
{
    ParallelPlan& p = s.parallel;
    readSharding(r, s);
    p.tp = int(r.integer("parallelism", "tensor_parallel_degree", 1, bounds::kMaxGpus).value_or(1));
    p.sequence_parallel = p.tp > 1; // torchtitan's TP always shards the sequence
    p.tp_comm_overlap = r.boolean("parallelism", "enable_async_tensor_parallel").value_or(false);
    readPipeline(r, ctx, s);
    p.cp =
        int(r.integer("parallelism", "context_parallel_degree", 1, bounds::kMaxGpus).value_or(1));
    if (const auto m = r.string("parallelism", "context_parallel_rotate_method")) {
        if (*m != "allgather" && *m != "alltoall")
            r.fail(*r.get("parallelism", "context_parallel_rotate_method"),
                   "parallelism.context_parallel_rotate_method",
                   "'" + *m + "' is not allgather or alltoall");
        p.cp_comm = *m == "allgather" ? CpComm::AllGather : CpComm::AllToAll;
    }
    p.ep = int(r.integer("parallelism", "expert_parallel_degree", 1, bounds::kMaxGpus).value_or(1));
    const int etp = int(
        r.integer("parallelism", "expert_tensor_parallel_degree", 1, bounds::kMaxGpus).value_or(1));
    p.expert_tp = etp == p.tp || !s.model.isMoe() ? 0 : etp;
    if (const auto b = r.string("parallelism", "expert_parallel_comm_backend")) {
        if (*b != "standard" && *b != "deepep")
            r.fail(*r.get("parallelism", "expert_parallel_comm_backend"),
                   "parallelism.expert_parallel_comm_backend",
                   "'" + *b + "' is not standard or deepep");
        p.moe_dispatcher = *b == "deepep" ? MoeDispatcher::DeepEP : MoeDispatcher::AllToAll;
    }
}

void readTraining(Reader& r, Scenario& s, std::int64_t& local, std::int64_t& global,
                  std::vector<std::string>& notes)
{
    TrainingSettings& t = s.training;
    t.framework = Framework::FSDP;
    local = r.integer("training", "local_batch_size", 1, bounds::kMaxBatch).value_or(8);
    global = r.integer("training", "global_batch_size", -1, bounds::kMaxBatch).value_or(-1);
    t.seq_len = int(r.integer("training", "seq_len", 1, bounds::kMaxSeqLen).value_or(2048));
    const std::string param = r.string("training", "mixed_precision_param").value_or("bfloat16");
    if (r.string("training", "mixed_precision_reduce").value_or("float32") == "bfloat16")
        t.grad_reduce_dtype = GradReduceDtype::Bf16;
    if (param != "bfloat16")
        notes.push_back("training.mixed_precision_param " + param + ": modelled as bf16");
    s.parallel.offload_optimizer = r.boolean("training", "enable_cpu_offload").value_or(false);
    const std::string mode = r.string("activation_checkpoint", "mode").value_or("selective");
    if (mode == "none")
        t.recompute = Recompute::None;
    else if (mode == "selective")
        t.recompute = Recompute::Selective;
    else if (mode == "full")
        t.recompute = Recompute::Full;
    else
        r.fail(*r.get("activation_checkpoint", "mode"), "activation_checkpoint.mode",
               "'" + mode + "' is not none, selective or full (memory_budget is not modelled)");
    t.compile = r.boolean("compile", "enable").value_or(false);
    // compile.components defaults to ["model", "loss"]; without "loss" the cross entropy runs
    // eager on the fp32 logits (torchtitan components/loss.py build_cross_entropy_loss).
    if (const auto parts = r.strings(r.get("compile", "components"), "compile.components");
        parts && std::find(parts->begin(), parts->end(), std::string("loss")) == parts->end())
        t.cross_entropy = CrossEntropy::Eager;
    t.moe_load_imbalance = r.boolean("debug", "moe_force_load_balance").value_or(false) ? 1.0 : 0.0;
    const auto converters = r.strings(r.get("model", "converters"), "model.converters");
    t.precision = Precision::BF16;
    if (converters)
        for (const auto& c : *converters)
            if (c.find("float8") != std::string::npos)
                t.precision = Precision::FP8;
    // torchao's recipe (quantize.linear.float8.recipe_name; float8.recipe_name before the
    // quantize section); unset is tensorwise, fp8_recipe's FSDP default.
    std::optional<std::string> recipe = r.string("quantize.linear.float8", "recipe_name");
    if (!recipe)
        recipe = r.string("float8", "recipe_name");
    if (recipe && t.precision == Precision::FP8) {
        if (const auto v = parseFp8Recipe(*recipe))
            t.fp8_recipe = *v == Fp8Recipe::Tensorwise ? Fp8Recipe::Default : *v;
        else {
            const char* sec = r.get("quantize.linear.float8", "recipe_name")
                                  ? "quantize.linear.float8"
                                  : "float8";
            r.fail(*r.get(sec, "recipe_name"), std::string(sec) + ".recipe_name",
                   "'" + *recipe + "' is not tensorwise, rowwise or rowwise_with_gw_hp");
        }
    }
    // torchao's float8 all-gather (with tensorwise; the scales' precompute goes with it).
    const bool fp8Gather =
        r.boolean("quantize.linear.float8", "enable_fsdp_float8_all_gather").value_or(false);
    (void)r.boolean("quantize.linear.float8", "precompute_float8_dynamic_scale_for_fsdp");
    t.fp8_param_gather = t.precision == Precision::FP8 && fp8Gather;
    (void)r.string("optimizer", "name");
    // optimizer.implementation (since 6e4988550, Feb 2025; "fused" by default, the fsdp default);
    // before it, optimizer.fused (default false) chose fused or foreach (foreach = not fused).
    if (const auto impl = r.string("optimizer", "implementation")) {
        if (const auto v = parseTorchtitanOptimizerImpl(*impl))
            t.optimizer_impl = *v == OptimizerImpl::Fused ? OptimizerImpl::Default : *v;
        else
            r.fail(*r.get("optimizer", "implementation"), "optimizer.implementation",
                   "'" + *impl + "' is not fused, foreach or for-loop");
    } else if (const auto fused = r.boolean("optimizer", "fused"); fused && !*fused) {
        t.optimizer_impl = OptimizerImpl::Foreach;
    }
    // The CPU-offloaded step is priced as CPU Adam, whatever its implementation.
    if (s.parallel.offload_optimizer && t.optimizer_impl != OptimizerImpl::Default) {
        notes.push_back("optimizer.implementation " + std::string(toString(t.optimizer_impl)) +
                        " with training.enable_cpu_offload: the CPU step is modelled as CPU Adam");
        t.optimizer_impl = OptimizerImpl::Default;
    }
}

// activation_checkpoint.selective_ac_option: "op" is the per-op policy; an integer k (the
// default "2") checkpoints every k-th transformer block whole (parallelize_llama.py
// _apply_ac_to_transformer_block: a counter over the blocks, k = 0 or 1 every block). Held as
// full recompute of L/k layers, each chunk's first; under PP the counter runs over a rank's
// chunks, so a chunk's share is its layers / k.
void readLayerSac(Reader& r, Scenario& s, std::vector<std::string>& notes)
{
    TrainingSettings& t = s.training;
    const std::string option =
        r.string("activation_checkpoint", "selective_ac_option").value_or("2");
    if (t.recompute != Recompute::Selective || option == "op")
        return;
    if (option.empty() || option.size() > 6 ||
        option.find_first_not_of("0123456789") != std::string::npos)
        r.fail(*r.get("activation_checkpoint", "selective_ac_option"),
               "activation_checkpoint.selective_ac_option",
               "'" + option + "' is not op or a whole number (every n-th block)");
    const int k = std::stoi(option);
    t.recompute = Recompute::Full;
    if (k <= 1)
        return;
    const int chunk = layersPerChunk(s.model, s.parallel);
    t.recompute_num_layers = std::max(1, chunk / k);
    notes.push_back("selective_ac_option " + option + " checkpoints every " + option +
                    "-th block: modelled as full recompute of " +
                    std::to_string(t.recompute_num_layers) + " of each chunk's " +
                    std::to_string(chunk) + " layers");
}

} // namespace

LaunchImport importTorchtitanToml(std::string_view text, ImportContext& ctx)
{
    const Value root = toml::parse(text, ctx.source);
    Reader r(root, ctx);
    LaunchImport out;
    out.framework = LaunchFramework::Torchtitan;
    Scenario& s = out.scenario;
    resolveModel(ctx, modelOf(r, ctx), s);
    resolveHardware(ctx, s);
    std::int64_t local = 0, global = 0;
    readTraining(r, s, local, global, ctx.notes);
    readParallelism(r, ctx, s);
    const ParallelPlan& p = s.parallel;
    // The world: every degree given (a shard degree of -1 takes 1: one replica per rank group).
    setWorld(ctx, s, std::int64_t{p.tp} * p.pp * p.cp * p.dp, "parallelism");
    const std::int64_t micro =
        p.pp > 1
            ? r.integer("parallelism", "pipeline_parallel_microbatch_size", 1, bounds::kMaxBatch)
                  .value_or(1)
            : local;
    s.training.micro_batch = int(micro);
    s.training.global_batch = int(global > 0 ? global : local * p.dp);
    readLayerSac(r, s, ctx.notes);
    ctx.noteUnread(r.unread());
    return out;
}

} // namespace paralens::launch
