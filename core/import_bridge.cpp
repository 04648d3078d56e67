// SPDX-License-Identifier: GPL-3.0-or-later
// A Megatron-Bridge run_recipe.py script read into a scenario: its --recipe and the
// section.field=value overrides, the inverse of launch_bridge.cpp.
#include "core/error.h"
#include "core/launch_args.h"
#include "core/launch_bridge.h"
#include "core/launch_import_detail.h"
#include "core/spec_io.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

namespace paralens::launch {
namespace {

// The items of a Hydra list override, "[a,b]" or "['a', \"b\"]": brackets, quotes and
// spaces stripped; "[]" is empty.
std::vector<std::string> listItems(std::string_view text)
{
    if (text.size() >= 2 && text.front() == '[' && text.back() == ']')
        text = text.substr(1, text.size() - 2);
    std::vector<std::string> items;
    std::string cur;
    const auto flush = [&] {
        if (!cur.empty())
            items.push_back(cur);
        cur.clear();
    };
    for (const char c : text) {
        if (c == ',')
            flush();
        else if (c != '\'' && c != '"' && c != ' ')
            cur += c;
    }
    flush();
    return items;
}

struct Override
{
    std::string value;
    int line = 0;
};

class Overrides
{
public:
    Overrides(const std::vector<Word>& words, const ImportContext& ctx) : m_ctx(ctx)
    {
        for (const Word& w : words) {
            const auto eq = w.text.find('=');
            if (eq == std::string::npos || eq == 0 || w.text[0] == '-' || w.text[0] == '$')
                continue;
            const std::string key = w.text.substr(0, eq);
            if (key.find('.') == std::string::npos && key != "mixed_precision")
                continue; // a shell variable, not an override
            m_items[key] = {w.text.substr(eq + 1), w.line};
        }
    }
    const Override* find(const std::string& key) const
    {
        m_read.insert(key);
        const auto it = m_items.find(key);
        return it == m_items.end() ? nullptr : &it->second;
    }
    bool isNull(const std::string& key) const
    {
        const Override* o = find(key);
        return !o || o->value == "null" || o->value == "None";
    }
    std::optional<std::int64_t> integer(const std::string& key, std::int64_t min,
                                        std::int64_t max) const
    {
        if (isNull(key))
            return std::nullopt;
        const Override* o = find(key);
        char* end = nullptr;
        errno = 0;
        const long long n = std::strtoll(o->value.c_str(), &end, 10);
        if (o->value.empty() || end != o->value.c_str() + o->value.size() || errno == ERANGE)
            fail(*o, key, "'" + o->value + "' is not an integer");
        if (n < min || n > max)
            fail(*o, key,
                 std::to_string(n) + " is out of bounds [" + std::to_string(min) + ", " +
                     std::to_string(max) + "]");
        return n;
    }
    std::optional<bool> boolean(const std::string& key) const
    {
        if (isNull(key))
            return std::nullopt;
        const Override* o = find(key);
        if (o->value == "true" || o->value == "True")
            return true;
        if (o->value == "false" || o->value == "False")
            return false;
        fail(*o, key, "'" + o->value + "' is not true or false");
    }
    std::optional<std::string> string(const std::string& key) const
    {
        if (isNull(key))
            return std::nullopt;
        return find(key)->value;
    }
    std::optional<double> number(const std::string& key) const
    {
        if (isNull(key))
            return std::nullopt;
        const Override* o = find(key);
        char* end = nullptr;
        const double d = std::strtod(o->value.c_str(), &end);
        if (o->value.empty() || end != o->value.c_str() + o->value.size() || !std::isfinite(d))
            fail(*o, key, "'" + o->value + "' is not a number");
        return d;
    }
    [[noreturn]] void fail(const Override& o, const std::string& key, const std::string& what) const
    {
        throw InputError(key,
                         m_ctx.source + ":" + std::to_string(o.line) + ": " + key + ": " + what);
    }
    std::vector<std::string> unread() const
    {
        std::vector<std::string> out;
        for (const auto& [k, v] : m_items)
            if (!m_read.count(k))
                out.push_back(k);
        return out;
    }

private:
    const ImportContext& m_ctx;
    std::map<std::string, Override> m_items;
    mutable std::set<std::string> m_read;
};

int readInt(const Overrides& o, const std::string& key, int fallback, std::int64_t min = 1,
            std::int64_t max = bounds::kMaxGpus)
{
    const auto v = o.integer(key, min, max);
    return v ? int(*v) : fallback;
}

// model.position_embedding_type (learned_absolute, rope, none) and model.normalization (LayerNorm,
// RMSNorm), Megatron-Core's GPTModel / TransformerConfig names. Absent: the convention of
// model.gated_linear_unit (the recipe's model is a Llama-style or a GPT-style one).
void readPositionsAndNorm(const Overrides& o, const ImportContext& ctx, ModelSpec& m)
{
    m.position_embedding = conventionalPositionEmbedding(m.gated_mlp);
    m.norm = conventionalNorm(m.gated_mlp);
    if (const auto type = o.string("model.position_embedding_type")) {
        if (const auto p = parseMegatronPositionType(*type))
            m.position_embedding = *p;
        else
            ctx.fail("model.position_embedding_type",
                     "'" + *type + "' is not modelled (learned_absolute, rope or none)");
    }
    if (const auto norm = o.string("model.normalization")) {
        if (*norm == megatronNormalization(NormType::RmsNorm))
            m.norm = NormType::RmsNorm;
        else if (*norm == megatronNormalization(NormType::LayerNorm))
            m.norm = NormType::LayerNorm;
        else
            ctx.fail("model.normalization", "'" + *norm + "' is not LayerNorm or RMSNorm");
    }
}

std::optional<ModelSpec> modelShape(const Overrides& o, const ImportContext& ctx)
{
    const auto layers = o.integer("model.num_layers", 1, bounds::kMaxLayers);
    if (!layers)
        return std::nullopt;
    ModelSpec m;
    m.layers = int(*layers);
    m.hidden = o.integer("model.hidden_size", 1, bounds::kMaxHidden).value_or(0);
    m.heads = readInt(o, "model.num_attention_heads", 0, 1, bounds::kMaxHeads);
    if (m.hidden == 0 || m.heads == 0)
        ctx.fail("model.hidden_size", "model.num_layers, hidden_size and num_attention_heads go "
                                      "together (one is missing)");
    m.kv_heads = readInt(o, "model.num_query_groups", m.heads, 1, bounds::kMaxHeads);
    m.head_dim = o.integer("model.kv_channels", 1, bounds::kMaxHidden).value_or(0);
    if (m.hidden % m.heads == 0 && m.head_dim == m.hidden / m.heads)
        m.head_dim = 0;
    m.ffn_hidden =
        o.integer("model.ffn_hidden_size", 1, bounds::kMaxFfnHidden).value_or(4 * m.hidden);
    m.gated_mlp = o.boolean("model.gated_linear_unit").value_or(false);
    readPositionsAndNorm(o, ctx, m);
    m.tied_embeddings = o.boolean("model.share_embeddings_and_output_weights").value_or(true);
    m.qk_norm = o.boolean("model.qk_layernorm").value_or(false);
    m.vocab = o.integer("model.vocab_size", 1, bounds::kMaxVocab).value_or(0);
    // TransformerConfig.mtp_num_layers: None (null) or a count of MTP modules.
    m.mtp_layers = readInt(o, "model.mtp_num_layers", 0, 0, bounds::kMaxLayers);
    if (m.vocab == 0)
        ctx.fail("model.vocab_size", "missing; the overrides give the rest of the shape");
    if (o.boolean("model.multi_latent_attention").value_or(false)) {
        // Every width but q_lora_rank (null: queries straight from h) is required: paralens
        // does not guess the recipe's values.
        auto need = [&](const std::string& key) {
            const auto v = o.integer(key, 1, bounds::kMaxHidden);
            if (!v)
                ctx.fail(key, "missing with model.multi_latent_attention=true");
            return *v;
        };
        m.mla.q_lora_rank = o.integer("model.q_lora_rank", 1, bounds::kMaxHidden).value_or(0);
        m.mla.kv_lora_rank = need("model.kv_lora_rank");
        m.mla.qk_nope_head_dim = need("model.qk_head_dim");
        m.mla.qk_rope_head_dim = need("model.qk_pos_emb_head_dim");
        m.mla.v_head_dim = need("model.v_head_dim");
    }
    m.moe.experts = readInt(o, "model.num_moe_experts", 0, 1, bounds::kMaxExperts);
    if (m.moe.experts == 0)
        return m;
    m.moe.top_k = readInt(o, "model.moe_router_topk", 2, 1, bounds::kMaxExperts);
    m.moe.expert_ffn_hidden =
        o.integer("model.moe_ffn_hidden_size", 1, bounds::kMaxFfnHidden).value_or(m.ffn_hidden);
    if (const auto shared = o.integer("model.moe_shared_expert_intermediate_size", 1,
                                      bounds::kMaxFfnHidden * bounds::kMaxExperts)) {
        if (*shared % m.moe.expert_ffn_hidden != 0)
            ctx.fail("model.moe_shared_expert_intermediate_size",
                     "must be a multiple of model.moe_ffn_hidden_size");
        m.moe.shared_experts = int(*shared / m.moe.expert_ffn_hidden);
    }
    if (const auto freq = o.string("model.moe_layer_freq"))
        readMoeLayerFreq(ctx, "model.moe_layer_freq", *freq, m.layers, m.moe);
    m.moe.groups = readInt(o, "model.moe_router_num_groups", 0, 1, bounds::kMaxExperts);
    m.moe.group_top_k = readInt(o, "model.moe_router_group_topk", 0, 1, bounds::kMaxExperts);
    return m;
}

void readParallel(const Overrides& o, Scenario& s)
{
    ParallelPlan& p = s.parallel;
    p.tp = readInt(o, "model.tensor_model_parallel_size", 1);
    p.pp = readInt(o, "model.pipeline_model_parallel_size", 1);
    p.virtual_stages =
        readInt(o, "model.virtual_pipeline_model_parallel_size", 1, 1, bounds::kMaxLayers);
    p.schedule = p.virtual_stages > 1 ? Schedule::Interleaved1F1B : Schedule::OneF1B;
    p.first_stage_layers =
        readInt(o, "model.num_layers_in_first_pipeline_stage", 0, 1, bounds::kMaxLayers);
    p.last_stage_layers =
        readInt(o, "model.num_layers_in_last_pipeline_stage", 0, 1, bounds::kMaxLayers);
    p.sequence_parallel = o.boolean("model.sequence_parallel").value_or(false);
    p.cp = readInt(o, "model.context_parallel_size", 1);
    if (const auto c = o.string("model.cp_comm_type")) {
        const auto* it = o.find("model.cp_comm_type");
        if (*c == "p2p")
            p.cp_comm = CpComm::P2P;
        else if (*c == "allgather")
            p.cp_comm = CpComm::AllGather;
        else if (*c == "a2a")
            p.cp_comm = CpComm::AllToAll;
        else
            o.fail(*it, "model.cp_comm_type", "'" + *c + "' is not p2p, allgather or a2a");
    }
    p.ep = readInt(o, "model.expert_model_parallel_size", 1);
    p.expert_tp = readInt(o, "model.expert_tensor_parallel_size", 0);
    p.tp_comm_overlap = o.boolean("comm_overlap.tp_comm_overlap").value_or(false);
    const bool dist = o.boolean("ddp.use_distributed_optimizer").value_or(false) ||
                      o.boolean("optimizer.use_distributed_optimizer").value_or(false);
    p.zero = dist ? 1 : 0;
    if (o.boolean("ddp.use_megatron_fsdp").value_or(false)) {
        const std::string strategy =
            o.string("ddp.data_parallel_sharding_strategy").value_or("no_shard");
        p.zero = strategy == "optim_grads_params" ? 3
                 : strategy == "optim_grads"      ? 2
                 : strategy == "optim"            ? 1
                                                  : p.zero;
    } else {
        (void)o.string("ddp.data_parallel_sharding_strategy");
    }
    p.offload_optimizer = o.boolean("optimizer.optimizer_cpu_offload").value_or(false);
    s.training.overlap_grad_reduce = o.boolean("ddp.overlap_grad_reduce").value_or(false);
    const auto ddpFp32 = o.boolean("ddp.grad_reduce_in_fp32");
    const auto mpFp32 = o.boolean("mixed_precision.grad_reduce_in_fp32");
    if (const auto fp32 = mpFp32 ? mpFp32 : ddpFp32) // the recipe's field wins at setup
        s.training.grad_reduce_dtype = *fp32 ? GradReduceDtype::Fp32 : GradReduceDtype::Bf16;
    (void)o.boolean("ddp.overlap_param_gather");
    if (const auto d = o.string("model.moe_token_dispatcher_type")) {
        const std::string backend =
            o.string("model.moe_flex_dispatcher_backend").value_or("deepep");
        p.moe_dispatcher = *d == "allgather"       ? MoeDispatcher::AllGather
                           : *d == "alltoall"      ? MoeDispatcher::AllToAll
                           : backend == "hybridep" ? MoeDispatcher::HybridEP
                                                   : MoeDispatcher::DeepEP;
        if (*d != "allgather" && *d != "alltoall" && *d != "flex")
            o.fail(*o.find("model.moe_token_dispatcher_type"), "model.moe_token_dispatcher_type",
                   "'" + *d + "' is not allgather, alltoall or flex");
    }
    p.moe_overlap = o.boolean("model.overlap_moe_expert_parallel_comm").value_or(false);
}

void readTraining(const Overrides& o, const ImportContext& ctx, Scenario& s)
{
    TrainingSettings& t = s.training;
    t.framework = Framework::Megatron;
    t.micro_batch = readInt(o, "train.micro_batch_size", 1, 1, bounds::kMaxBatch);
    t.global_batch = readInt(o, "train.global_batch_size", t.micro_batch, 1, bounds::kMaxBatch);
    (void)o.integer("train.train_iters", 0, bounds::kMaxBatch);
    t.seq_len = readInt(o, "model.seq_length", 0, 1, bounds::kMaxSeqLen);
    if (t.seq_len == 0)
        ctx.fail("model.seq_length", "missing (the recipe's sequence length is not known here)");
    (void)o.string("dataset.sequence_length");
    const std::string mp = o.string("mixed_precision").value_or("bf16_mixed");
    t.precision = mp.find("fp8") != std::string::npos    ? Precision::FP8
                  : mp.find("fp16") != std::string::npos ? Precision::FP16
                                                         : Precision::BF16;
    // Bridge's FP8 mixed-precision recipes (delayed, current scaling, MXFP8) set
    // fp8_param_gather (training/mixed_precision.py); the file's own value wins.
    const auto fp8Params = o.boolean("mixed_precision.fp8_param_gather");
    t.fp8_param_gather = t.precision == Precision::FP8 && fp8Params.value_or(true);
    const std::string g = o.string("model.recompute_granularity").value_or("");
    t.recompute = g == "full"        ? Recompute::Full
                  : g == "selective" ? Recompute::Selective
                                     : Recompute::None;
    if (const auto list = o.string("model.recompute_modules")) { // null: Megatron's default
        std::string bad;
        const auto modules = parseRecomputeModuleList(listItems(*list), bad);
        if (!modules)
            o.fail(*o.find("model.recompute_modules"), "model.recompute_modules",
                   "'" + bad + "' is not one of " +
                       recomputeModuleList(kAllRecomputeModules, ", "));
        t.recompute_modules = *modules;
    }
    // Full recompute's method: block recomputes the first N layers of each chunk.
    const std::string method = o.string("model.recompute_method").value_or("uniform");
    const auto n = o.integer("model.recompute_num_layers", 0, bounds::kMaxLayers);
    if (t.recompute == Recompute::Full && method == "block") {
        t.recompute_num_layers = int(n.value_or(1));
        if (t.recompute_num_layers == 0)
            t.recompute = Recompute::None;
    } else if (t.recompute == Recompute::Full && method != "uniform") {
        o.fail(*o.find("model.recompute_method"), "model.recompute_method",
               "'" + method + "' is not uniform or block");
    }
    const std::string backend = o.string("model.attention_backend").value_or("auto");
    if (!readMegatronAttentionBackend(backend, t))
        o.fail(*o.find("model.attention_backend"), "model.attention_backend",
               "'" + backend + "' is not flash, fused, unfused, local or auto");
    const std::string opt = o.string("optimizer.optimizer").value_or("adam");
    const auto parsed = parseOptimizer(opt);
    if (!parsed)
        o.fail(*o.find("optimizer.optimizer"), "optimizer.optimizer",
               "'" + opt + "' is not adam or sgd");
    t.optimizer = *parsed;
    std::string note;
    t.adam_moments_dtype = readAdamMoments(
        o.boolean("optimizer.use_precision_aware_optimizer").value_or(false),
        o.string("optimizer.exp_avg_dtype"), o.string("optimizer.exp_avg_sq_dtype"), note);
    if (!note.empty())
        ctx.notes.push_back(note);
    const auto hidden = o.number("model.hidden_dropout");
    const auto attention = o.number("model.attention_dropout");
    if (hidden || attention)
        t.dropout = hidden.value_or(0.1) > 0 || attention.value_or(0.1) > 0;
    if (o.boolean("model.moe_router_force_load_balancing").value_or(false))
        t.moe_load_imbalance = 1.0;
}

} // namespace

LaunchImport importBridgeScript(std::string_view text, ImportContext& ctx)
{
    const std::vector<Word> words = splitWords(text, ctx.source);
    const Flags f(words, ctx.source);
    const Overrides o(words, ctx);
    LaunchImport out;
    out.framework = LaunchFramework::MegatronBridge;
    Scenario& s = out.scenario;
    if (const auto recipe = f.value("--recipe"); recipe && ctx.header.model_id.empty())
        for (const auto& [id, name] : bridgeRecipes())
            if (name == *recipe)
                ctx.header.model_id = id;
    resolveModel(ctx, modelShape(o, ctx), s);
    resolveHardware(ctx, s);
    readParallel(o, s);
    readTraining(o, ctx, s);
    auto nodes = f.integer("--nnodes", 1, bounds::kMaxGpus);
    auto per = f.integer("--nproc-per-node", 1, bounds::kMaxGpus);
    if (!per)
        per = f.integer("--nproc_per_node", 1, bounds::kMaxGpus);
    const std::int64_t model = std::int64_t{s.parallel.tp} * s.parallel.pp * s.parallel.cp;
    if (!nodes && !per)
        ctx.notes.push_back("no torchrun line: one data-parallel replica assumed");
    setWorld(ctx, s, nodes || per ? nodes.value_or(1) * per.value_or(1) : model, "--nnodes");
    if (const auto instances =
            o.integer("ddp.num_distributed_optimizer_instances", 1, bounds::kMaxGpus);
        instances && *instances > 1) {
        if (s.parallel.dp % *instances != 0)
            ctx.fail("ddp.num_distributed_optimizer_instances", "does not divide the DP degree");
        s.parallel.shard_group = s.parallel.dp / int(*instances);
    }
    ctx.noteUnread(o.unread());
    return out;
}

} // namespace paralens::launch
