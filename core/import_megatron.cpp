// SPDX-License-Identifier: GPL-3.0-or-later
// A Megatron-LM launch script (or bare argument list) and a Megatron-DeepSpeed one, read into a
// scenario: the inverse of launch_megatron.cpp and the script half of launch_deepspeed.cpp.
#include "core/error.h"
#include "core/launch_args.h"
#include "core/launch_deepspeed.h"
#include "core/launch_import_detail.h"
#include "core/spec_io.h"

namespace paralens::launch {
namespace {

using bounds::kMaxGpus;
using bounds::kMaxLayers;

int readInt(const Flags& f, std::string_view name, int fallback, std::int64_t min = 1,
            std::int64_t max = kMaxGpus)
{
    const auto v = f.integer(name, min, max);
    return v ? static_cast<int>(*v) : fallback;
}

// Full recompute's --recompute-method and --recompute-num-layers (Megatron's default 1):
// block recomputes the first N layers of each chunk, uniform every layer.
void readRecomputeMethod(const Flags& f, TrainingSettings& t, std::vector<std::string>& notes)
{
    const std::string method = f.value("--recompute-method").value_or("uniform");
    const int n = readInt(f, "--recompute-num-layers", 1, 0, kMaxLayers);
    if (method == "block") {
        t.recompute_num_layers = n;
        if (n == 0)
            t.recompute = Recompute::None;
    } else if (method == "uniform") {
        if (n > 1)
            notes.push_back("--recompute-method uniform with " + std::to_string(n) +
                            " layers per checkpoint: modelled with one layer per checkpoint "
                            "(every layer recomputed; the run stores fewer layer inputs)");
    } else {
        f.fail("--recompute-method", "'" + method + "' is not uniform or block");
    }
}

// The world size from the launcher's options: torchrun, the deepspeed launcher or srun.
std::optional<std::int64_t> worldSize(const Flags& f)
{
    auto nodes = f.integer("--nnodes", 1, kMaxGpus);
    if (!nodes)
        nodes = f.integer("--num_nodes", 1, kMaxGpus);
    if (!nodes)
        nodes = f.integer("--nodes", 1, kMaxGpus);
    auto per = f.integer("--nproc-per-node", 1, kMaxGpus);
    if (!per)
        per = f.integer("--nproc_per_node", 1, kMaxGpus);
    if (!per)
        per = f.integer("--num_gpus", 1, kMaxGpus);
    if (!nodes && !per)
        return std::nullopt;
    return nodes.value_or(1) * per.value_or(1);
}

// The positions and norm the flags name; absent flags take the framework's defaults (Megatron-LM
// and Megatron-DeepSpeed arguments.py: --normalization LayerNorm, learned absolute positions).
// Megatron-LM spells them --position-embedding-type learned_absolute | rope | none and
// --normalization LayerNorm | RMSNorm; Megatron-DeepSpeed --use-rotary-position-embeddings,
// --no-position-embedding and --normalization layernorm | rmsnorm (read in either case here).
void readPositionsAndNorm(const Flags& f, ModelSpec& m)
{
    m.position_embedding = PositionEmbedding::Learned;
    if (f.has("--no-position-embedding"))
        m.position_embedding = PositionEmbedding::None;
    if (f.has("--use-rotary-position-embeddings"))
        m.position_embedding = PositionEmbedding::Rope;
    if (const auto type = f.value("--position-embedding-type")) {
        if (const auto p = parseMegatronPositionType(*type))
            m.position_embedding = *p;
        else if (*type == "alibi") // the BigScience fork (BLOOM)
            m.position_embedding = PositionEmbedding::None;
        else
            f.fail("--position-embedding-type",
                   "'" + *type + "' is not modelled (learned_absolute, rope, none or alibi)");
    }
    m.norm = NormType::LayerNorm;
    if (const auto norm = f.value("--normalization")) {
        std::string n = *norm;
        for (char& c : n)
            c = char(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
        if (n == "rmsnorm")
            m.norm = NormType::RmsNorm;
        else if (n != "layernorm")
            f.fail("--normalization", "'" + *norm + "' is not LayerNorm or RMSNorm");
    }
}

// The model shape the flags give, or nullopt when they give none. `deepspeed`: Megatron-
// DeepSpeed's names for heads and experts.
std::optional<ModelSpec> modelShape(const Flags& f, const ImportContext& ctx, bool deepspeed)
{
    const auto layers = f.integer("--num-layers", 1, kMaxLayers);
    const auto hidden = f.integer("--hidden-size", 1, bounds::kMaxHidden);
    const auto heads = f.integer("--num-attention-heads", 1, bounds::kMaxHeads);
    if (!layers && !hidden && !heads)
        return std::nullopt;
    if (!layers || !hidden || !heads)
        ctx.fail("--num-layers", "--num-layers, --hidden-size and --num-attention-heads go "
                                 "together (one is missing)");
    ModelSpec m;
    m.layers = int(*layers);
    m.hidden = *hidden;
    m.heads = int(*heads);
    m.kv_heads = m.heads;
    if (deepspeed)
        m.kv_heads = readInt(f, "--num-key-value-heads", m.heads, 1, bounds::kMaxHeads);
    else if (f.has("--group-query-attention"))
        m.kv_heads = readInt(f, "--num-query-groups", 1, 1, bounds::kMaxHeads);
    m.head_dim = f.integer("--kv-channels", 1, bounds::kMaxHidden).value_or(0);
    if (m.head_dim == m.hidden / m.heads && m.hidden % m.heads == 0)
        m.head_dim = 0;
    if (f.has("--multi-latent-attention")) {
        // Every width is required: paralens does not guess Megatron's defaults.
        auto need = [&](std::string_view name) {
            const auto v = f.integer(name, 1, bounds::kMaxHidden);
            if (!v)
                ctx.fail(std::string(name), "missing with --multi-latent-attention");
            return *v;
        };
        m.mla.q_lora_rank = f.integer("--q-lora-rank", 1, bounds::kMaxHidden).value_or(0);
        m.mla.kv_lora_rank = need("--kv-lora-rank");
        m.mla.qk_nope_head_dim = need("--qk-head-dim");
        m.mla.qk_rope_head_dim = need("--qk-pos-emb-head-dim");
        m.mla.v_head_dim = need("--v-head-dim");
    }
    m.gated_mlp = f.has("--swiglu");
    readPositionsAndNorm(f, m);
    const auto ffn = f.integer("--ffn-hidden-size", 1, bounds::kMaxFfnHidden);
    if (!ffn)
        ctx.fail("--ffn-hidden-size", "missing (paralens does not guess Megatron's default FFN)");
    m.ffn_hidden = *ffn;
    m.tied_embeddings = !f.has("--untie-embeddings-and-output-weights");
    m.qk_norm = f.has("--qk-layernorm");
    if (!deepspeed)
        m.mtp_layers = readInt(f, "--mtp-num-layers", 0, 0, kMaxLayers);
    const auto vocab = f.integer("--vocab-size", 1, bounds::kMaxVocab);
    const auto tokenizer = f.value("--tokenizer-type");
    if (!vocab)
        return m; // vocab 0: resolveModel names it by a preset or fails
    // The null tokenizer adds the end-of-document id to --vocab-size.
    m.vocab = *vocab + (tokenizer == std::string("NullTokenizer") ? 1 : 0);
    return m;
}

void readMoe(const Flags& f, const ImportContext& ctx, bool deepspeed, ModelSpec& m)
{
    MoeSpec& moe = m.moe;
    if (deepspeed) {
        moe.experts = readInt(f, "--num-experts", 0, 0, bounds::kMaxExperts);
        if (moe.experts <= 1) {
            moe = MoeSpec{};
            return;
        }
        moe.top_k = readInt(f, "--topk", 1, 1, bounds::kMaxExperts);
        moe.expert_ffn_hidden = m.ffn_hidden;
        moe.layer_frequency = readInt(f, "--expert-interval", 2, 1, kMaxLayers);
        return;
    }
    moe.experts = readInt(f, "--num-experts", 0, 0, bounds::kMaxExperts);
    if (moe.experts == 0)
        return;
    moe.top_k = readInt(f, "--moe-router-topk", 2, 1, bounds::kMaxExperts);
    moe.expert_ffn_hidden =
        f.integer("--moe-ffn-hidden-size", 1, bounds::kMaxFfnHidden).value_or(m.ffn_hidden);
    if (const auto shared = f.integer("--moe-shared-expert-intermediate-size", 1,
                                      bounds::kMaxFfnHidden * bounds::kMaxExperts)) {
        if (*shared % moe.expert_ffn_hidden != 0)
            f.fail("--moe-shared-expert-intermediate-size",
                   "must be a multiple of --moe-ffn-hidden-size (paralens holds whole shared "
                   "experts)");
        moe.shared_experts = int(*shared / moe.expert_ffn_hidden);
    }
    if (const auto freq = f.value("--moe-layer-freq"))
        readMoeLayerFreq(ctx, "--moe-layer-freq", *freq, m.layers, moe);
    moe.groups = readInt(f, "--moe-router-num-groups", 0, 1, bounds::kMaxExperts);
    moe.group_top_k = readInt(f, "--moe-router-group-topk", 0, 1, bounds::kMaxExperts);
}

void readParallel(const Flags& f, const ImportContext& ctx, int layers, Scenario& s)
{
    ParallelPlan& p = s.parallel;
    p.tp = readInt(f, "--tensor-model-parallel-size", 1);
    p.pp = readInt(f, "--pipeline-model-parallel-size", 1);
    p.virtual_stages = readInt(f, "--num-virtual-stages-per-pipeline-rank", 1, 1, kMaxLayers);
    if (const auto per = f.integer("--num-layers-per-virtual-pipeline-stage", 1, kMaxLayers)) {
        const std::int64_t stage = layers / p.pp;
        if (layers % p.pp != 0 || stage % *per != 0)
            ctx.fail("--num-layers-per-virtual-pipeline-stage",
                     "does not divide the layers per pipeline stage");
        p.virtual_stages = int(stage / *per);
    }
    p.schedule = p.virtual_stages > 1 ? Schedule::Interleaved1F1B : Schedule::OneF1B;
    p.first_stage_layers = readInt(f, "--decoder-first-pipeline-num-layers", 0, 1, kMaxLayers);
    p.last_stage_layers = readInt(f, "--decoder-last-pipeline-num-layers", 0, 1, kMaxLayers);
    p.sequence_parallel = f.has("--sequence-parallel");
    p.cp = readInt(f, "--context-parallel-size", 1);
    if (const auto c = f.value("--cp-comm-type")) {
        if (*c == "p2p")
            p.cp_comm = CpComm::P2P;
        else if (*c == "allgather")
            p.cp_comm = CpComm::AllGather;
        else if (*c == "a2a")
            p.cp_comm = CpComm::AllToAll;
        else
            f.fail("--cp-comm-type", "'" + *c + "' is not one of p2p, allgather, a2a");
    }
    p.ep = readInt(f, "--expert-model-parallel-size", 1);
    p.expert_tp = readInt(f, "--expert-tensor-parallel-size", 0);
    p.tp_comm_overlap = f.has("--tp-comm-overlap");
    p.moe_overlap = f.has("--overlap-moe-expert-parallel-comm");
    if (const auto d = f.value("--moe-token-dispatcher-type")) {
        if (*d == "allgather")
            p.moe_dispatcher = MoeDispatcher::AllGather;
        else if (*d == "alltoall")
            p.moe_dispatcher = MoeDispatcher::AllToAll;
        else if (*d == "flex")
            p.moe_dispatcher = MoeDispatcher::DeepEP;
        else
            f.fail("--moe-token-dispatcher-type",
                   "'" + *d + "' is not allgather, alltoall or flex");
    }
    (void)f.has("--moe-enable-deepep");
}

// ZeRO: the distributed optimizer is 1; Megatron-FSDP's strategies are 0 to 3.
void readSharding(const Flags& f, Scenario& s)
{
    ParallelPlan& p = s.parallel;
    p.zero = f.has("--use-distributed-optimizer") ? 1 : 0;
    if (f.has("--use-megatron-fsdp")) {
        const std::string strategy =
            f.value("--data-parallel-sharding-strategy").value_or("no_shard");
        if (strategy == "no_shard")
            p.zero = std::max(p.zero, 0);
        else if (strategy == "optim")
            p.zero = 1;
        else if (strategy == "optim_grads")
            p.zero = 2;
        else if (strategy == "optim_grads_params")
            p.zero = 3;
        else
            f.fail("--data-parallel-sharding-strategy",
                   "'" + strategy + "' is not no_shard, optim, optim_grads or optim_grads_params");
    }
    p.offload_optimizer = f.has("--optimizer-cpu-offload");
    s.training.overlap_grad_reduce = f.has("--overlap-grad-reduce");
    if (f.has("--grad-reduce-in-bf16"))
        s.training.grad_reduce_dtype = GradReduceDtype::Bf16;
}

void readTraining(const Flags& f, const ImportContext& ctx, bool deepspeed, Scenario& s)
{
    TrainingSettings& t = s.training;
    t.framework = deepspeed ? Framework::DeepSpeed : Framework::Megatron;
    t.micro_batch = readInt(f, "--micro-batch-size", 1, 1, bounds::kMaxBatch);
    if (const auto g = f.integer("--global-batch-size", 1, bounds::kMaxBatch))
        t.global_batch = int(*g);
    if (const auto n = f.integer("--seq-length", 1, bounds::kMaxSeqLen))
        t.seq_len = int(*n);
    else
        ctx.fail("--seq-length", "missing");
    t.precision = f.has("--fp8-format") ? Precision::FP8
                  : f.has("--fp16")     ? Precision::FP16
                                        : Precision::BF16;
    t.fp8_param_gather = t.precision == Precision::FP8 && f.has("--fp8-param-gather");
    if (!f.has("--fp16") && !f.has("--bf16"))
        ctx.notes.push_back("neither --bf16 nor --fp16: fp32 training, modelled as bf16");
    const std::string granularity = f.value("--recompute-granularity").value_or("");
    if (granularity == "full")
        t.recompute = Recompute::Full;
    else if (granularity == "selective" || f.has("--recompute-activations"))
        t.recompute = Recompute::Selective;
    else if (granularity.empty())
        t.recompute = Recompute::None;
    else
        f.fail("--recompute-granularity", "'" + granularity + "' is not full or selective");
    if (t.recompute == Recompute::Full)
        readRecomputeMethod(f, t, ctx.notes);
    if (!deepspeed)
        if (const auto names = f.values("--recompute-modules")) {
            std::string bad;
            const auto modules = parseRecomputeModuleList(*names, bad);
            if (!modules)
                f.fail("--recompute-modules", "'" + bad + "' is not one of " +
                                                  recomputeModuleList(kAllRecomputeModules, ", "));
            t.recompute_modules = *modules;
        }
    if (deepspeed) {
        t.flash_attention = f.has("--use-flash-attn-v2") || f.has("--use-flash-attn");
    } else {
        const std::string backend = f.value("--attention-backend").value_or("auto");
        if (!readMegatronAttentionBackend(backend, t))
            f.fail("--attention-backend",
                   "'" + backend + "' is not flash, fused, unfused, local or auto");
    }
    const std::string optimizer = f.value("--optimizer").value_or("adam");
    const auto o = parseOptimizer(optimizer);
    if (!o)
        f.fail("--optimizer", "'" + optimizer + "' is not adam or sgd");
    t.optimizer = *o;
    if (!deepspeed) {
        std::string note;
        t.adam_moments_dtype =
            readAdamMoments(f.has("--use-precision-aware-optimizer"), f.value("--exp-avg-dtype"),
                            f.value("--exp-avg-sq-dtype"), note);
        if (!note.empty())
            ctx.notes.push_back(note);
    }
    const auto hidden = f.number("--hidden-dropout");
    const auto attention = f.number("--attention-dropout");
    if (hidden || attention)
        t.dropout = hidden.value_or(0.1) > 0 || attention.value_or(0.1) > 0;
    if (f.has("--moe-router-force-load-balancing"))
        t.moe_load_imbalance = 1.0;
}

// Megatron-DeepSpeed: the plan's batch and ZeRO settings live in the JSON the script names.
void readDeepSpeedConfig(const Flags& f, ImportContext& ctx, Scenario& s)
{
    s.parallel.zero = readInt(f, "--zero-stage", 0, 0, 3);
    s.parallel.cp = readInt(f, "--ds-sequence-parallel-size", 1);
    s.parallel.ep = readInt(f, "--moe-expert-parallel-size", 1);
    if (f.has("--no-pipeline-parallel"))
        s.parallel.pp = 1;
    const auto name = f.value("--deepspeed_config");
    if (!name) {
        ctx.notes.push_back("no --deepspeed_config: the ZeRO and batch settings are the flags'");
        return;
    }
    if (!ctx.read_sibling)
        ctx.fail("--deepspeed_config", "names " + *name + ", which cannot be read here");
    const std::string json = ctx.read_sibling(*name);
    const int zero = s.parallel.zero;
    const DeepSpeedJson ds = readDeepSpeedJson(json, *name, s, ctx.notes);
    if (f.has("--zero-stage") && zero != s.parallel.zero)
        ctx.notes.push_back("--zero-stage " + std::to_string(zero) + " differs from the JSON's " +
                            "stage " + std::to_string(s.parallel.zero) + "; the JSON's is used");
    if (ds.micro_batch > 0 && f.has("--micro-batch-size") &&
        ds.micro_batch != s.training.micro_batch)
        ctx.fail("--micro-batch-size", "differs from train_micro_batch_size_per_gpu in " + *name);
}

// Under --attention-backend auto (the default) Transformer Engine picks the attention kernel
// and its environment switches decide: NVTE_FUSED_ATTN=0 leaves flash-attn (FlashAttention-2),
// NVTE_FLASH_ATTN=0 cuDNN's fused attention, both the unfused path (DotProductAttention in
// transformer_engine/pytorch/attention.py; NeMo-Framework-Launcher set NVTE_FUSED_ATTN: 0 for
// every job at its tags 24.01-24.07, docs/model.md "Attention kernels").
void readAttentionEnvironment(const std::vector<Word>& words, const Flags& f,
                              const ImportContext& ctx, TrainingSettings& t)
{
    if (f.value("--attention-backend").value_or("auto") != "auto" || !t.flash_attention)
        return;
    const auto fused = lastAssignment(words, "NVTE_FUSED_ATTN");
    const auto flash = lastAssignment(words, "NVTE_FLASH_ATTN");
    const bool fusedOff = fused && fused->text == "0";
    const bool flashOff = flash && flash->text == "0";
    const auto at = [](const std::optional<Word>& w) {
        return " (line " + std::to_string(w->line) + ")";
    };
    if (fusedOff && flashOff) {
        t.flash_attention = false;
        ctx.notes.push_back("NVTE_FUSED_ATTN=0" + at(fused) + " and NVTE_FLASH_ATTN=0" + at(flash) +
                            ": Transformer Engine runs unfused attention");
    } else if (fusedOff) {
        t.attention_kernel = AttentionKernel::Flash2;
        ctx.notes.push_back("NVTE_FUSED_ATTN=0" + at(fused) +
                            ": Transformer Engine runs flash-attn (attention_kernel flash2)");
    } else if (flashOff) {
        t.attention_kernel = AttentionKernel::Fused;
        ctx.notes.push_back("NVTE_FLASH_ATTN=0" + at(flash) +
                            ": Transformer Engine runs cuDNN fused attention "
                            "(attention_kernel fused)");
    }
}

} // namespace

LaunchImport importMegatronScript(std::string_view text, ImportContext& ctx)
{
    const std::vector<Word> words = splitWords(text, ctx.source);
    const Flags f(words, ctx.source);
    const bool deepspeed = f.has("--deepspeed") || f.has("--deepspeed_config");
    LaunchImport out;
    out.framework = deepspeed ? LaunchFramework::DeepSpeed : LaunchFramework::Megatron;
    Scenario& s = out.scenario;
    std::optional<ModelSpec> shape = modelShape(f, ctx, deepspeed);
    if (shape)
        readMoe(f, ctx, deepspeed, *shape);
    if (shape && shape->vocab == 0) {
        // No --vocab-size: one preset of this shape names it, or --model must.
        std::vector<std::string> matches;
        ModelSpec probe = *shape;
        for (const auto& id : ctx.presets.modelIds()) {
            probe.vocab = ctx.presets.model(id)->vocab;
            if (sameShape(probe, *ctx.presets.model(id)))
                matches.push_back(id);
        }
        if (ctx.options.model_id.empty()) {
            if (matches.empty())
                ctx.fail("--vocab-size", "missing and no preset has this shape; give --model");
            if (matches.size() > 1) {
                std::string list;
                for (const auto& id : matches)
                    list += (list.empty() ? "" : ", ") + id;
                ctx.fail("--vocab-size", "missing, and presets " + list +
                                             " have this shape with different vocabularies; "
                                             "give --model");
            }
            shape->vocab = ctx.presets.model(matches.front())->vocab;
        } else {
            shape.reset(); // --model names it
        }
    }
    resolveModel(ctx, shape, s);
    resolveHardware(ctx, s);
    readParallel(f, ctx, s.model.layers, s);
    readSharding(f, s);
    readTraining(f, ctx, deepspeed, s);
    if (deepspeed)
        readDeepSpeedConfig(f, ctx, s);
    else
        readAttentionEnvironment(words, f, ctx, s.training);
    if (const auto world = worldSize(f)) {
        setWorld(ctx, s, *world, "--nnodes");
    } else {
        ctx.notes.push_back("no launcher line (torchrun, deepspeed): one data-parallel replica "
                            "assumed");
        setWorld(ctx, s, std::int64_t{s.parallel.tp} * s.parallel.pp * s.parallel.cp, "gpus");
    }
    if (const auto instances = f.integer("--num-distributed-optimizer-instances", 1, kMaxGpus);
        instances && *instances > 1) {
        if (s.parallel.dp % *instances != 0)
            f.fail("--num-distributed-optimizer-instances", "does not divide the DP degree");
        s.parallel.shard_group = s.parallel.dp / int(*instances);
    }
    if (!f.has("--global-batch-size"))
        s.training.global_batch = s.training.micro_batch * s.parallel.dp;
    ctx.noteUnread(f.unread());
    return out;
}

} // namespace paralens::launch
