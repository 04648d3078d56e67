// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/scenario_io.h"

#include "core/error.h"
#include "core/input_file.h"
#include "core/json_reader.h"
#include "core/spec_io.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <fstream>
#include <sstream>

namespace paralens {
namespace {

using jsonio::ObjectReader;
using nlohmann::json;

constexpr const char* kDefaultModel = "llama3-70b";
constexpr const char* kDefaultHardware = "h100-sxm";

std::string joinIds(const std::vector<std::string>& ids)
{
    std::string s;
    for (const auto& id : ids)
        s += (s.empty() ? "" : ", ") + id;
    return s;
}

void readModel(const json* m, const PresetLibrary& presets, Scenario& s)
{
    if (!m || m->is_string()) {
        const std::string id = m ? m->get<std::string>() : kDefaultModel;
        const ModelSpec* spec = presets.model(id);
        if (!spec)
            throw InputError("model", "model: unknown model preset '" + id +
                                          "' (known: " + joinIds(presets.modelIds()) + ")");
        s.model_id = id;
        s.model = *spec;
        return;
    }
    if (!m->is_object())
        throw InputError("model", "model: expected a preset id (string) or an object, got " +
                                      jsonio::typeName(*m));
    s.model_id.clear();
    s.model = modelFromJson(*m, "model");
}

void readHardware(const json* h, const PresetLibrary& presets, Scenario& s)
{
    if (!h || h->is_string()) {
        const std::string id = h ? h->get<std::string>() : kDefaultHardware;
        const ClusterSpec* spec = presets.hardware(id);
        if (!spec)
            throw InputError("hardware", "hardware: unknown hardware preset '" + id +
                                             "' (known: " + joinIds(presets.hardwareIds()) + ")");
        s.hardware_id = id;
        s.cluster = *spec;
        return;
    }
    if (!h->is_object())
        throw InputError("hardware", "hardware: expected a preset id (string) or an object, got " +
                                         jsonio::typeName(*h));
    s.hardware_id.clear();
    s.cluster = clusterFromJson(*h, "hardware");
}

// Returns whether "dp" was given.
bool readParallel(const json* p, ParallelPlan& plan)
{
    if (!p)
        return false;
    ObjectReader r(*p, "parallel");
    r.readInt("tp", plan.tp, 1, bounds::kMaxGpus);
    r.readInt("pp", plan.pp, 1, bounds::kMaxGpus);
    const bool dp = r.readInt("dp", plan.dp, 1, bounds::kMaxGpus);
    r.readInt("ep", plan.ep, 1, bounds::kMaxGpus);
    r.readInt("cp", plan.cp, 1, bounds::kMaxGpus);
    r.readBool("sequence_parallel", plan.sequence_parallel);
    r.readInt("virtual_stages", plan.virtual_stages, 1, bounds::kMaxLayers);
    r.readEnum("schedule", plan.schedule, parseSchedule,
               "gpipe, 1f1b, interleaved-1f1b, zb-h1, zb-v, dualpipe-v");
    r.readInt("zero", plan.zero, 0, 3);
    r.readInt("shard_group", plan.shard_group, 0, bounds::kMaxGpus);
    r.readBool("offload_optimizer", plan.offload_optimizer);
    r.readBool("tp_comm_overlap", plan.tp_comm_overlap);
    r.readInt("first_stage_layers", plan.first_stage_layers, 0, bounds::kMaxLayers);
    r.readInt("last_stage_layers", plan.last_stage_layers, 0, bounds::kMaxLayers);
    r.readInt("expert_tp", plan.expert_tp, 1, bounds::kMaxGpus);
    r.readEnum("moe_dispatcher", plan.moe_dispatcher, parseMoeDispatcher,
               "default, allgather, alltoall, deepep, hybridep");
    r.readBool("moe_overlap", plan.moe_overlap);
    r.readEnum("cp_comm", plan.cp_comm, parseCpComm, "default, p2p, all-gather, a2a");
    r.finish();
    return dp;
}

// training.recompute_modules: a list of Megatron-Core module names, in any order.
void readRecomputeModules(ObjectReader& r, TrainingSettings& ts)
{
    const json* v = r.child("recompute_modules");
    if (!v)
        return;
    const std::string path = jsonio::join(r.path(), "recompute_modules");
    if (!v->is_array())
        throw InputError(path,
                         path + ": expected a list of module names, got " + jsonio::typeName(*v));
    std::uint8_t modules = 0;
    for (std::size_t i = 0; i < v->size(); ++i) {
        const json& e = (*v)[i];
        const std::string at = path + "[" + std::to_string(i) + "]";
        if (!e.is_string())
            throw InputError(path, at + ": expected a module name, got " + jsonio::typeName(e));
        const std::string name = e.get<std::string>();
        const auto m = parseRecomputeModule(name);
        if (!m)
            throw InputError(path, at + ": '" + name + "' is not one of " +
                                       recomputeModuleList(kAllRecomputeModules, ", "));
        modules |= *m;
    }
    ts.recompute_modules = modules;
}

void readTraining(const json* t, TrainingSettings& ts)
{
    if (!t)
        return;
    ObjectReader r(*t, "training");
    r.readInt("seq_len", ts.seq_len, 1, bounds::kMaxSeqLen);
    r.readInt("micro_batch", ts.micro_batch, 1, bounds::kMaxBatch);
    r.readInt("global_batch", ts.global_batch, 1, bounds::kMaxBatch);
    r.readEnum("precision", ts.precision, parsePrecision, "bf16, fp8, fp16");
    r.readEnum("recompute", ts.recompute, parseRecompute, "none, selective, full");
    readRecomputeModules(r, ts);
    r.readInt("recompute_num_layers", ts.recompute_num_layers, 0, bounds::kMaxLayers);
    r.readBool("flash_attention", ts.flash_attention);
    r.readEnum("attention_kernel", ts.attention_kernel, parseAttentionKernel,
               "default, flash2, fused, triton");
    r.readEnum("cross_entropy", ts.cross_entropy, parseCrossEntropy,
               "default, megatron, eager, fused");
    r.readEnum("rope_impl", ts.rope_impl, parseRopeImpl, "default, complex, real, fused");
    r.readInt("logit_metrics", ts.logit_metrics, 0, bounds::kMaxLogitMetrics);
    r.readEnum("optimizer", ts.optimizer, parseOptimizer, "adam, sgd");
    r.readEnum("optimizer_impl", ts.optimizer_impl, parseOptimizerImpl,
               "default, fused, foreach, for_loop");
    r.readEnum("framework", ts.framework, parseFramework, "megatron, deepspeed, fsdp");
    r.readBool("overlap_grad_reduce", ts.overlap_grad_reduce);
    r.readBool("compile", ts.compile);
    r.readEnum("fp8_recipe", ts.fp8_recipe, parseFp8Recipe,
               "default, delayed, tensorwise, rowwise, rowwise_with_gw_hp, mxfp8");
    r.readDouble("moe_load_imbalance", ts.moe_load_imbalance, 1.0, bounds::kMaxMoeLoadImbalance);
    bool dropout = false;
    if (r.readBool("dropout", dropout))
        ts.dropout = dropout;
    r.readEnum("fsdp_reshard_after_forward", ts.fsdp_reshard_after_forward,
               parseReshardAfterForward, "default, always, never");
    r.readEnum("fsdp_backward_prefetch", ts.fsdp_backward_prefetch, parseFsdpBackwardPrefetch,
               "default, backward_pre, backward_post, none");
    r.readInt("fsdp_version", ts.fsdp_version, 1, 2);
    r.readBool("fp8_param_gather", ts.fp8_param_gather);
    r.readEnum("grad_reduce_dtype", ts.grad_reduce_dtype, parseGradReduceDtype,
               "default, fp32, bf16");
    r.readEnum("adam_moments_dtype", ts.adam_moments_dtype, parseAdamMomentsDtype, "fp32, bf16");
    r.finish();
}

// Key order for the written file: the contract's order, then anything else alphabetically.
constexpr std::array kKeyOrder{
    "model", "hardware", "gpus", "parallel", "training", "calibration",
    // model / hardware objects
    "name", "gpu", "layers", "hidden", "heads", "kv_heads", "head_dim", "ffn_hidden", "vocab",
    "gated_mlp", "tied_embeddings", "qk_norm", "mtp_layers", "moe", "experts", "top_k",
    "expert_ffn_hidden", "shared_experts", "layer_frequency", "first_dense_layers", "groups",
    "group_top_k", "mla", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
    "v_head_dim", "position_embedding", "norm", "memory_gib", "hbm_gbps", "bf16_tflops",
    "fp8_tflops", "gpus_per_node", "scale_up_domain", "scale_up_gbps", "scale_out_gbps",
    "pcie_gbps", "latencies", "scale_up_us", "scale_out_us",
    // parallel
    "tp", "pp", "dp", "ep", "cp", "sequence_parallel", "virtual_stages", "schedule", "zero",
    "shard_group", "offload_optimizer", "tp_comm_overlap", "first_stage_layers",
    "last_stage_layers", "expert_tp", "moe_dispatcher", "moe_overlap", "cp_comm",
    // training
    "seq_len", "micro_batch", "global_batch", "precision", "recompute", "recompute_modules",
    "recompute_num_layers", "flash_attention", "attention_kernel", "cross_entropy", "rope_impl",
    "logit_metrics", "optimizer", "optimizer_impl", "framework", "overlap_grad_reduce", "compile",
    "fp8_recipe", "moe_load_imbalance", "dropout", "fsdp_reshard_after_forward",
    "fsdp_backward_prefetch", "fsdp_version", "grad_reduce_dtype", "adam_moments_dtype",
    "fp8_param_gather"};

nlohmann::ordered_json ordered(const json& j)
{
    if (!j.is_object())
        return nlohmann::ordered_json::parse(j.dump());
    std::vector<std::string> keys;
    for (const auto& [k, v] : j.items())
        keys.push_back(k);
    const auto rank = [](const std::string& k) {
        const auto it = std::find(kKeyOrder.begin(), kKeyOrder.end(), k);
        return static_cast<std::size_t>(it - kKeyOrder.begin());
    };
    std::stable_sort(keys.begin(), keys.end(),
                     [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
    nlohmann::ordered_json o = nlohmann::ordered_json::object();
    for (const auto& k : keys)
        o[k] = ordered(j.at(k));
    return o;
}

} // namespace

Scenario scenarioFromJson(const json& j, const PresetLibrary& presets)
{
    ObjectReader r(j, "");
    Scenario s;
    readModel(r.child("model"), presets, s);
    readHardware(r.child("hardware"), presets, s);
    const bool gpus_given = r.readInt("gpus", s.gpus, 1, bounds::kMaxGpus);
    const bool dp_given = readParallel(r.child("parallel"), s.parallel);
    readTraining(r.child("training"), s.training);
    if (const json* c = r.child("calibration"); c && !c->is_null()) {
        if (!c->is_string())
            r.badValue("calibration", "expected a path (string), got " + jsonio::typeName(*c));
        s.calibration = c->get<std::string>();
    }
    r.finish();

    // Derive what was left out: dp from gpus, or gpus from the plan (both documented).
    const auto& p = s.parallel;
    const std::int64_t tp_pp_cp = std::int64_t{p.tp} * p.pp * p.cp; // each <= 1e6: no overflow
    if (!dp_given && gpus_given) {
        if (tp_pp_cp > s.gpus || s.gpus % tp_pp_cp != 0)
            throw InputError("parallel.dp",
                             "parallel.dp: omitted, and gpus = " + std::to_string(s.gpus) +
                                 " is not a multiple of tp·pp·cp = " + std::to_string(tp_pp_cp) +
                                 ", so it cannot be derived");
        s.parallel.dp = static_cast<int>(s.gpus / tp_pp_cp);
    } else if (!gpus_given) {
        const long double total = static_cast<long double>(tp_pp_cp) * p.dp;
        if (total > bounds::kMaxGpus)
            throw InputError("gpus", "gpus: omitted, and tp·pp·cp·dp = " +
                                         jsonio::number(static_cast<double>(total)) +
                                         " exceeds the bound " + std::to_string(bounds::kMaxGpus));
        s.gpus = static_cast<int>(total);
    }
    return s;
}

Scenario parseScenario(std::string_view text, const std::string& source,
                       const PresetLibrary& presets)
{
    const json j = jsonio::parseText(text, source);
    try {
        return scenarioFromJson(j, presets);
    } catch (const InputError& e) {
        throw InputError(e.field(), source + ": " + e.what());
    }
}

Scenario loadScenarioFile(const std::string& path, const PresetLibrary& presets)
{
    return parseScenario(readInputFile(path, kMaxScenarioFileBytes, "file", ""), path, presets);
}

json scenarioToJson(const Scenario& s)
{
    json j = json::object();
    j["model"] = s.model_id.empty() ? modelToJson(s.model) : json(s.model_id);
    j["hardware"] = s.hardware_id.empty() ? clusterToJson(s.cluster) : json(s.hardware_id);
    j["gpus"] = s.gpus;
    const auto& p = s.parallel;
    j["parallel"] = {{"tp", p.tp},
                     {"pp", p.pp},
                     {"dp", p.dp},
                     {"ep", p.ep},
                     {"cp", p.cp},
                     {"sequence_parallel", p.sequence_parallel},
                     {"virtual_stages", p.virtual_stages},
                     {"schedule", std::string(toString(p.schedule))},
                     {"zero", p.zero},
                     {"shard_group", p.shard_group},
                     {"offload_optimizer", p.offload_optimizer},
                     {"first_stage_layers", p.first_stage_layers},
                     {"last_stage_layers", p.last_stage_layers}};
    const auto& t = s.training;
    j["training"] = {{"seq_len", t.seq_len},
                     {"micro_batch", t.micro_batch},
                     {"global_batch", t.global_batch},
                     {"precision", std::string(toString(t.precision))},
                     {"recompute", std::string(toString(t.recompute))},
                     {"flash_attention", t.flash_attention},
                     {"optimizer", std::string(toString(t.optimizer))},
                     {"framework", std::string(toString(t.framework))}};
    // Written only when off (bucketless DDP), like "calibration" only when set, so files of
    // the usual case read as before.
    if (!t.overlap_grad_reduce)
        j["training"]["overlap_grad_reduce"] = false;
    if (t.compile)
        j["training"]["compile"] = true;
    if (p.tp_comm_overlap)
        j["parallel"]["tp_comm_overlap"] = true;
    // The MoE settings likewise only when they differ from the framework defaults.
    if (t.moe_load_imbalance > 0)
        j["training"]["moe_load_imbalance"] = t.moe_load_imbalance;
    if (p.expert_tp > 0)
        j["parallel"]["expert_tp"] = p.expert_tp;
    if (p.moe_dispatcher != MoeDispatcher::Default)
        j["parallel"]["moe_dispatcher"] = std::string(toString(p.moe_dispatcher));
    if (p.moe_overlap)
        j["parallel"]["moe_overlap"] = true;
    if (p.cp_comm != CpComm::Default)
        j["parallel"]["cp_comm"] = std::string(toString(p.cp_comm));
    // Written only when chosen: unset follows the framework (dropoutOn(), torchtitan's policy).
    if (t.dropout)
        j["training"]["dropout"] = *t.dropout;
    if (t.recompute_modules != kRecomputeCoreAttn) {
        json names = json::array();
        for (int bit = 0; bit < kRecomputeModuleCount; ++bit)
            if (t.recompute_modules & (1 << bit))
                names.push_back(std::string(toString(RecomputeModule(1 << bit))));
        j["training"]["recompute_modules"] = names;
    }
    if (t.recompute_num_layers != 0)
        j["training"]["recompute_num_layers"] = t.recompute_num_layers;
    if (t.attention_kernel != AttentionKernel::Default)
        j["training"]["attention_kernel"] = std::string(toString(t.attention_kernel));
    if (t.cross_entropy != CrossEntropy::Default)
        j["training"]["cross_entropy"] = std::string(toString(t.cross_entropy));
    if (t.rope_impl != RopeImpl::Default)
        j["training"]["rope_impl"] = std::string(toString(t.rope_impl));
    if (t.logit_metrics != 0)
        j["training"]["logit_metrics"] = t.logit_metrics;
    if (t.optimizer_impl != OptimizerImpl::Default)
        j["training"]["optimizer_impl"] = std::string(toString(t.optimizer_impl));
    if (t.fp8_recipe != Fp8Recipe::Default)
        j["training"]["fp8_recipe"] = std::string(toString(t.fp8_recipe));
    if (t.adam_moments_dtype != AdamMomentsDtype::Fp32)
        j["training"]["adam_moments_dtype"] = std::string(toString(t.adam_moments_dtype));
    if (t.fsdp_reshard_after_forward != ReshardAfterForward::Default)
        j["training"]["fsdp_reshard_after_forward"] =
            std::string(toString(t.fsdp_reshard_after_forward));
    if (t.fsdp_backward_prefetch != FsdpBackwardPrefetch::Default)
        j["training"]["fsdp_backward_prefetch"] = std::string(toString(t.fsdp_backward_prefetch));
    if (t.fsdp_version != 2)
        j["training"]["fsdp_version"] = t.fsdp_version;
    if (t.grad_reduce_dtype != GradReduceDtype::Default)
        j["training"]["grad_reduce_dtype"] = std::string(toString(t.grad_reduce_dtype));
    if (t.fp8_param_gather)
        j["training"]["fp8_param_gather"] = true;
    if (!s.calibration.empty())
        j["calibration"] = s.calibration;
    return j;
}

std::string scenarioToText(const Scenario& s)
{
    return ordered(scenarioToJson(s)).dump(2) + "\n";
}

Scenario defaultScenario(const PresetLibrary& presets)
{
    Scenario s;
    s.model_id = kDefaultModel;
    s.model = *presets.model(kDefaultModel);
    s.hardware_id = kDefaultHardware;
    s.cluster = *presets.hardware(kDefaultHardware);
    s.gpus = 64;
    auto& p = s.parallel;
    p.tp = 8; // inside one NVLink node
    p.pp = 4;
    p.dp = 2;
    p.sequence_parallel = true;
    p.schedule = Schedule::Interleaved1F1B;
    p.virtual_stages = 5; // 80 layers = 4 stages x 5 chunks x 4 layers
    p.zero = 1;           // distributed optimizer
    auto& t = s.training;
    t.seq_len = 8192;
    t.micro_batch = 1;
    t.global_batch = 128; // m = 64 micro-batches per pipeline
    t.precision = Precision::BF16;
    t.recompute = Recompute::Selective;
    return s;
}

bool operator==(const ParallelPlan& a, const ParallelPlan& b)
{
    return a.tp == b.tp && a.pp == b.pp && a.dp == b.dp && a.ep == b.ep && a.cp == b.cp &&
           a.sequence_parallel == b.sequence_parallel && a.virtual_stages == b.virtual_stages &&
           a.schedule == b.schedule && a.zero == b.zero && a.shard_group == b.shard_group &&
           a.offload_optimizer == b.offload_optimizer && a.tp_comm_overlap == b.tp_comm_overlap &&
           a.first_stage_layers == b.first_stage_layers &&
           a.last_stage_layers == b.last_stage_layers && a.expert_tp == b.expert_tp &&
           a.moe_dispatcher == b.moe_dispatcher && a.moe_overlap == b.moe_overlap &&
           a.cp_comm == b.cp_comm;
}

bool operator==(const TrainingSettings& a, const TrainingSettings& b)
{
    return a.seq_len == b.seq_len && a.micro_batch == b.micro_batch &&
           a.global_batch == b.global_batch && a.precision == b.precision &&
           a.recompute == b.recompute && a.recompute_modules == b.recompute_modules &&
           a.recompute_num_layers == b.recompute_num_layers &&
           a.flash_attention == b.flash_attention && a.attention_kernel == b.attention_kernel &&
           a.optimizer == b.optimizer && a.framework == b.framework &&
           a.overlap_grad_reduce == b.overlap_grad_reduce && a.compile == b.compile &&
           a.moe_load_imbalance == b.moe_load_imbalance && a.dropout == b.dropout &&
           a.fsdp_reshard_after_forward == b.fsdp_reshard_after_forward &&
           a.fp8_recipe == b.fp8_recipe && a.cross_entropy == b.cross_entropy &&
           a.rope_impl == b.rope_impl && a.logit_metrics == b.logit_metrics &&
           a.optimizer_impl == b.optimizer_impl &&
           a.fsdp_backward_prefetch == b.fsdp_backward_prefetch &&
           a.fsdp_version == b.fsdp_version && a.grad_reduce_dtype == b.grad_reduce_dtype &&
           a.fp8_param_gather == b.fp8_param_gather && a.adam_moments_dtype == b.adam_moments_dtype;
}

bool operator==(const Scenario& a, const Scenario& b)
{
    return a.model_id == b.model_id && a.model == b.model && a.hardware_id == b.hardware_id &&
           a.cluster == b.cluster && a.gpus == b.gpus && a.parallel == b.parallel &&
           a.training == b.training && a.calibration == b.calibration;
}

} // namespace paralens
