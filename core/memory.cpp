// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/memory.h"
#include "core/gpu_family.h"
#include "core/kernel_time.h"
#include "core/pipeline_cost.h"

#include <algorithm>

namespace paralens {
namespace {

// Bytes per token of a dropout mask (one byte per element) when dropout is on.
double maskBytes(const ActivationShape& a)
{
    return a.dropout ? 1.0 : 0.0;
}

// Bytes per element of a tensor a linear saves as its input for the weight gradient.
double linearInputBytes(const ActivationShape& a)
{
    return a.fp8_linear_inputs ? 1.0 : 2.0;
}

// Bytes per element of the attention output: the out-projection's input, which a flash
// kernel also keeps (bf16) for its own backward; an FP8 projection then saves its FP8 copy
// besides it, unless it saves the bf16 one instead (ActivationShape::fp8_reuses_held_inputs).
double attentionOutputBytes(const ActivationShape& a)
{
    if (!a.fp8_linear_inputs || a.fp8_reuses_held_inputs)
        return 2;
    return a.flash_attention ? 2 + 1 : 1;
}

// Whether the backward recomputes the attention scores: Megatron's selective recompute with
// core_attn in its modules, or a framework's own selective policy.
bool scoresRecomputed(const ActivationShape& a)
{
    return a.recompute == Recompute::Selective &&
           (a.selective == SelectivePolicy::SaveMatmuls || recomputes(a, kRecomputeCoreAttn));
}

// Attention block of one layer per micro-batch, before the division by CP: norm input 2,
// QKV input 2 (the gathered one when TP saves it; 1 in FP8), dropout mask 1 (replicated),
// Q/K/V and out-proj input (sharded), scores. MLA adds its latents (Dims::latent) and stores
// Q, K of n_h·d_qk and V, the output of n_h·d_v. Recompute modules drop what they rebuild:
// layernorm the output of MLA's input norm (a module of its own there; Transformer Engine fuses
// the other models' norm into the QKV GEMM), mla_up_proj the up-projected Q, K and V.
double attentionBlockBytes(const Dims& d, const ActivationShape& a)
{
    const double sb = d.s * d.b;
    const bool mla = d.latent > 0;
    const double qkvInput =
        mla && recomputes(a, kRecomputeLayernorm)
            ? 0.0
            : linearInputBytes(a) * sb * d.h / (a.tp_gathered_input ? 1.0 : d.tsp);
    const double qkv = mla && recomputes(a, kRecomputeMlaUpProj) ? 0.0 : 2 * (d.q + 2 * d.kv);
    double bytes = (2 + maskBytes(a)) * sb * d.h / d.tsp + qkvInput +
                   sb * (qkv + attentionOutputBytes(a) * d.o) / d.t;
    if (mla) // MLA: the latents the up-projections and their norms keep (2 bytes)
        bytes += 2 * sb * d.latent / d.tsp;
    if (a.flash_attention)
        bytes += 4 * d.heads * sb / d.t; // fp32 log-sum-exp per row (Dao et al. 2022)
    else if (!scoresRecomputed(a))
        // Softmax output 2; with dropout also its mask 1 and output 2 (Korthikanti Table 2).
        bytes += (2 + 3 * maskBytes(a)) * d.heads * d.s * sb / d.t;
    return bytes;
}

// Bytes per token per MLP hidden unit stored for the backward: Dims::mlpStoredBytes(), whose
// last 2 (the fc2 input) an FP8 fc2 saves in 1.
double mlpStored(const Dims& d, const ActivationShape& a)
{
    return d.mlpStoredBytes() - 2 + linearInputBytes(a);
}

// MLP block: norm input 2, fc1 input 2 (gathered when TP saves it; 1 in FP8), dropout mask 1
// (replicated) + the GeLU/SwiGLU tensors. The mlp recompute module checkpoints the MLP whole:
// only its input (the norm input, which Transformer Engine's fused norm takes) stays.
double mlpBlockBytes(const ModelSpec& m, const Dims& d, const ActivationShape& a)
{
    const double sb = d.s * d.b;
    if (recomputes(a, kRecomputeMlp))
        return (2 + maskBytes(a)) * sb * d.h / d.tsp;
    const double fc1Input = linearInputBytes(a) * sb * d.h / (a.tp_gathered_input ? 1.0 : d.tsp);
    return (2 + maskBytes(a)) * sb * d.h / d.tsp + fc1Input +
           sb * mlpStored(d, a) * double(m.ffn_hidden) / d.t;
}

// torchtitan's per-op selective AC (parallelisms/parallelize_llama.py, _save_list and its
// "every second mm" rule): the block input (the checkpoint's argument), the outputs of the odd
// matmuls of the block (Q, V, the first MLP matmul, and with a gated MLP the down projection,
// whose per-rank output is the un-reduced b·s × h partial sum), the SDPA output with its fp32
// log-sum-exp, and with SP the two reduce-scatter outputs. Dropout-free (Llama).
double opSacLayerBytes(const ModelSpec& m, const Dims& d)
{
    const double sb = d.s * d.b;
    const double ffn = double(m.ffn_hidden);
    double perToken = 2 * d.h / d.tsp;                   // checkpointed block input
    perToken += (2 * d.q + 2 * d.kv + 2 * ffn) / d.t;    // Q, V, first MLP matmul
    perToken += d.c > 2 ? 2 * d.h : 0.0;                 // down projection (7th matmul)
    perToken += (2 * d.o + 4 * d.heads) / d.t;           // SDPA output + log-sum-exp
    perToken += d.tsp > 1 ? 2 * (2 * d.h / d.tsp) : 0.0; // SP reduce-scatter outputs
    return sb * perToken;
}

// Communication buffers of one GPU: NCCL's per process group (`groups` of them), then under
// ZeRO-3 the gathered units (current + prefetch; FSDP2's root unit stays gathered) and one
// unit's gradients while they are reduce-scattered, and with a sharded optimizer the
// framework's reduce and all-gather buckets. A stage kept gathered whole (FSDP2 without
// reshard, or under PP) holds its parameters in ModelStateBytes instead.
double commBufferBytes(const ParallelPlan& pl, const FrameworkConventions& fw,
                       const ModelConstants& k, const StageLayers& st, const StageParams& sp,
                       double head_params, int groups)
{
    double buffers = groups * k.nccl_bytes_per_group;
    if (pl.zero >= 3) {
        if (!stageKeptGathered(fw, pl.zero)) {
            double live = fw.zero3_live_layers * sp.largest_layer;
            if (fw.zero3_max_live_params > 0)
                live = std::min(live, fw.zero3_max_live_params);
            // Gathered layers hold their elements as gathered (float8 with FSDP's FP8 gather).
            buffers += live * fw.linear_gather_bytes;
            if (fw.zero3_root_unsharded && (st.first || st.last))
                buffers += sp.embedding * fw.weight_bytes;
        }
        // With unsharded accumulation only the compute-dtype gradient waits to be added.
        const double unitGrad =
            fw.zero3_accumulate_unsharded ? fw.compute_grad_bytes : fw.zero3_unit_grad_bytes;
        buffers += sp.largest_layer * unitGrad;
        if (fw.zero3_root_unsharded && st.last && !fw.zero3_accumulate_unsharded)
            buffers += head_params * fw.compute_grad_bytes; // waits for the root's reduce
    }
    if (pl.zero >= 1 && pl.dp > 1) {
        buffers += std::min(fw.reduce_bucket_elements, sp.total()) * fw.grad_bytes;
        if (pl.zero <= 2)
            buffers += std::min(fw.allgather_bucket_elements, sp.total()) * fw.weight_bytes;
    }
    return buffers;
}

// torch.distributed.pipelining's per-micro-batch tensors on a stage of p with v local chunks
// and m micro-batches: the outputs kept for the in-flight micro-batches' backward, and receive
// buffers for every micro-batch of every chunk (activations in unless the chunk is the model's
// first, gradients back unless it is the last; both ends on stage 0 in a V), each one b·s·h
// hidden state (÷ t with SP).
double pipelineBufferBytes(const ParallelPlan& pl, const Dims& d, const StageLayers& st,
                           double inflight, double microbatches)
{
    const int p = std::max(1, pl.pp), v = std::max(1, pl.virtual_stages);
    if (p == 1)
        return 0;
    const double hidden = 2 * d.s * d.b * d.h / d.tsp / d.cp;
    const double recv = 2.0 * v - (st.first ? 1 : 0) - (st.last ? 1 : 0);
    const double kept = st.last && v == 1 ? 0.0 : inflight; // the last stage sends none
    return hidden * (kept + recv * microbatches);
}

// QK-norm's inputs, kept for its backward (2 bytes per q and k element; its per-row fp32
// statistics are negligible). torchtitan's per-op SAC recomputes it from the saved Q.
double qkNormBytes(const ModelSpec& m, const Dims& d)
{
    return m.qk_norm ? 2 * d.s * d.b * (d.q + d.kv) / d.t : 0.0;
}

// The activation formulas on precomputed sizes (stageMemory() computes them once for all).
double denseLayerBytes(const ModelSpec& m, const Dims& d, const ActivationShape& a)
{
    if (a.recompute == Recompute::Full)
        return 2 * d.s * d.b * d.h / d.tsp / d.cp;
    if (a.recompute == Recompute::Selective && a.selective == SelectivePolicy::SaveMatmuls)
        return opSacLayerBytes(m, d) / d.cp;
    return (attentionBlockBytes(d, a) + qkNormBytes(m, d) + mlpBlockBytes(m, d, a)) / d.cp;
}

double moeLayerBytes(const ModelSpec& m, const Dims& d, const ActivationShape& a)
{
    if (!m.isMoe())
        return denseLayerBytes(m, d, a);
    const double sb = d.s * d.b;
    if (a.recompute == Recompute::Full)
        return 2 * sb * d.h / d.tsp / d.cp;
    const double k = m.moe.top_k;
    const double fe = double(m.moe.expert_ffn_hidden);
    // Norm input 2h + mask 1h + router input 2h + permuted copies 2kh (the experts' fc1 input:
    // 1kh in FP8) + combine 2kh (where it keeps the expert outputs) + logits 4E. The shared
    // experts read the router's input; in FP8 their fc1 saves its own FP8 copy of it (not when
    // it reuses the held bf16 one). Recompute modules: moe keeps the layer's input alone (the
    // router input), layernorm drops that norm output, moe_act the routed experts' fc2 input,
    // shared_experts the shared experts' tensors.
    const std::uint8_t mods = recomputedModules(a);
    const bool shared = m.moe.shared_experts > 0 && !(mods & kRecomputeSharedExperts);
    const bool whole = mods & kRecomputeMoe;
    double permuted = whole ? 0.0 : linearInputBytes(a) * k * d.h;
    if (a.fp8_linear_inputs && !a.fp8_reuses_held_inputs && shared && !whole)
        permuted += d.h;
    const double routerInput = (mods & kRecomputeLayernorm) ? 0.0 : 2 * d.h;
    const double combine =
        whole ? 0.0 : (a.moe_combine_keeps_outputs ? 2 * k * d.h : 0.0) + 4.0 * m.moe.experts;
    const double replicated = ((2 + maskBytes(a)) * d.h + routerInput + permuted + combine) / d.tsp;
    const double stored = mlpStored(d, a);
    const double routed =
        whole ? 0.0 : k * (stored - ((mods & kRecomputeMoeAct) ? linearInputBytes(a) : 0.0)) * fe;
    const double experts =
        (routed + (shared && !whole ? m.moe.shared_experts * stored * fe : 0.0)) / d.t;
    ActivationShape attn = a;
    attn.tp_gathered_input = false; // the MoE estimate keeps Megatron's layout
    return (attentionBlockBytes(d, attn) + qkNormBytes(m, d) + sb * (replicated + experts)) / d.cp;
}

// What one layer's backward rebuilds on top of the stored activations: with full recompute
// the whole layer, with per-op SAC what it did not save (the largest of dense and MoE).
double recomputeWorkingSet(const ModelSpec& m, const Dims& d, const ActivationShape& a)
{
    const bool opSac =
        a.recompute == Recompute::Selective && a.selective == SelectivePolicy::SaveMatmuls;
    if (a.recompute == Recompute::Selective && !opSac) {
        // Megatron's modules beyond core_attn rebuild what they dropped, one layer at a time.
        if ((a.recompute_modules & ~kRecomputeCoreAttn) == 0)
            return 0;
        ActivationShape kept = a;
        kept.recompute_modules &= kRecomputeCoreAttn;
        const double dense = denseLayerBytes(m, d, kept) - denseLayerBytes(m, d, a);
        const double moe = m.isMoe() ? moeLayerBytes(m, d, kept) - moeLayerBytes(m, d, a) : 0.0;
        return std::max({0.0, dense, moe});
    }
    if (a.recompute != Recompute::Full && !opSac)
        return 0;
    ActivationShape none = a;
    none.recompute = Recompute::None;
    const double dense = denseLayerBytes(m, d, none) - (opSac ? denseLayerBytes(m, d, a) : 0.0);
    const double moe = m.isMoe() && !opSac ? moeLayerBytes(m, d, none) : 0.0;
    return std::max({0.0, dense, moe});
}

// What PyTorch's ring attention (torch.distributed.tensor.experimental._attention,
// _templated_ring_attention_backward) allocates while one layer's attention backward runs, on
// top of that layer's stored and recomputed tensors: with the all-gather rotater the K/V of
// the whole sequence (b·s tokens, K and V in bf16), with the all-to-all one the K/V chunk it
// sends and the one it receives; the fp32 accumulators of dQ (convert_to_f32); dK and dV in
// fp32 three times (the received running sum, its partial update, the concatenated buffer in
// flight to the next rank, and the buffer receiving the next: the last two exist only while
// the send runs, when the received one is free); and the block's own bf16 dQ, dK, dV.
// Frameworks whose ring keeps no such buffers (CpConventions::fp32_grad_accumulators false)
// count none.
double ringBackwardBytes(const Dims& d, const ActivationShape& a, const FrameworkConventions& fw,
                         CpComm comm)
{
    if (d.cp <= 1 || !a.flash_attention || !fw.cp.fp32_grad_accumulators ||
        comm == CpComm::AllToAll)
        return 0;
    const double kvWide = (fw.cp.kv_repeated ? d.q : d.kv) / d.t, qWide = d.q / d.t;
    const double n = d.tokens;
    const double kv = comm == CpComm::AllGather ? 2 * 2 * d.b * d.s * kvWide // gathered K, V
                                                : 2 * (2 * 2 * n * kvWide);  // sent + received
    const double fp32 = 4 * n * qWide + 3 * (2 * 4 * n * kvWide);
    const double block = 2 * n * (qWide + 2 * kvWide);
    return kv + fp32 + block;
}

double embeddingBytes(const Dims& d, const ActivationShape& a)
{
    return (8 * d.s * d.b + maskBytes(a) * d.s * d.b * d.h / d.tsp) / d.cp;
}

// Per in-flight micro-batch: final-norm input 2h, LM-head input 2h, and one fp32 copy of the
// logits (the stored softmax or log-probabilities).
double headBytes(const Dims& d, std::int64_t vocab_pad)
{
    const double sb = d.s * d.b;
    return (4 * sb * d.h / d.tsp + 4 * sb * double(vocab_pad) / d.t) / d.cp;
}

// Per in-flight micro-batch, one MTP module besides its block (DeepSeek-V3 §2.2, Fig. 3): the
// inputs of its two RMSNorms (the previous depth's hidden state and the embedding of token
// i + k, 2h each) and of the projection M_k (their concatenation, 4h), then what the shared head
// keeps again (headBytes: a second fp32 logits tensor).
double mtpExtraBytes(const Dims& d, std::int64_t vocab_pad)
{
    return 8 * d.s * d.b * d.h / d.tsp / d.cp + headBytes(d, vocab_pad);
}

// The loss's further fp32 logits copies at its backward peak, once per step (docs/model.md).
double lossTransientBytes(const FrameworkConventions& fw, const Dims& d, std::int64_t vocab_pad)
{
    const double copies =
        fw.loss_logit_copies - 1 + (d.t > 1 ? fw.loss_parallel_extra_copies : 0.0);
    return std::max(0.0, copies) * 4 * d.s * d.b * double(vocab_pad) / d.t / d.cp;
}

} // namespace

bool stageKeptGathered(const FrameworkConventions& fw, int zero)
{
    return fw.sharded_param_is_master &&
           (zero <= 2 || !fw.zero3_reshard_after_forward || fw.zero3_accumulate_unsharded);
}

double denseLayerActivationBytes(const ModelSpec& m, const ActivationShape& a)
{
    return denseLayerBytes(m, dimsOf(m, a), a);
}

double moeLayerActivationBytes(const ModelSpec& m, const ActivationShape& a)
{
    return moeLayerBytes(m, dimsOf(m, a), a);
}

double embeddingActivationBytes(const ModelSpec& m, const ActivationShape& a)
{
    return embeddingBytes(dimsOf(m, a), a);
}

double headActivationBytes(const ModelSpec& m, const ActivationShape& a, std::int64_t vocab_pad)
{
    return headBytes(dimsOf(m, a), vocab_pad);
}

ModelStateBytes modelStateBytes(double params, const FrameworkConventions& fw, int zero,
                                double shard, bool offload)
{
    shard = std::max(1.0, shard);
    ModelStateBytes b;
    if (fw.sharded_param_is_master) {
        // FSDP2: fp32 sharded parameters (the master) and gradients, moments; CPU offload moves
        // all three off the GPU. The bf16 compute copy is held whole while gathered.
        const double optShard = zero >= 1 ? shard : 1.0;
        b.parameters = offload ? 0.0 : params * fw.master_bytes / optShard;
        b.gradients = offload ? 0.0 : params * fw.grad_bytes / (zero >= 2 ? shard : 1.0);
        b.optimizer_states = offload ? 0.0 : params * fw.moment_bytes / optShard;
        if (stageKeptGathered(fw, zero))
            b.parameters += params * fw.weight_bytes;
        // Under PP the gradients accumulate unsharded in the reduce dtype until the last
        // micro-batch; the shard exists only after that reduce-scatter, the accumulator freed.
        if (zero >= 2 && fw.zero3_accumulate_unsharded && !offload)
            b.gradients = params * fw.grad_reduce_bytes;
        return b;
    }
    b.parameters = params * fw.weight_bytes / (zero >= 3 ? shard : 1.0);
    b.gradients = params * fw.grad_bytes / (zero >= 2 ? shard : 1.0);
    b.optimizer_states = offload ? 0.0 : params * fw.optimizerBytes() / (zero >= 1 ? shard : 1.0);
    return b;
}

// What a layer full recompute leaves alone stores per micro-batch (all recompute none keeps);
// zero without a layer count.
struct StoredLayerBytes
{
    double dense = 0, moe = 0;
};

StoredLayerBytes storedLayerBytes(const Scenario& s, const ModelSpec& m, const Dims& d,
                                  const ActivationShape& shape)
{
    if (s.training.recomputedPerChunk() <= 0)
        return {};
    ActivationShape none = shape;
    none.recompute = Recompute::None;
    return {denseLayerBytes(m, d, none), moeLayerBytes(m, d, none)};
}

double linearWeights(const StageParams& sp)
{
    return sp.dense - sp.embedding + sp.expert;
}

void stageMemory(const Scenario& s, const FrameworkConventions& fw, const ModelConstants& k,
                 std::span<const StageLayers> layers, std::span<const StageParams> params,
                 std::span<const double> inflight, Estimate& est)
{
    const ParallelPlan& pl = s.parallel;
    const ModelSpec& m = s.model;
    const int p = std::max(1, pl.pp);
    est.stages.resize(std::size_t(p));

    const ActivationShape shape = ActivationShape::of(s, fw);
    const Dims d = dimsOf(m, shape);
    const double denseAct = denseLayerBytes(m, d, shape);
    const double moeAct = moeLayerBytes(m, d, shape);
    const std::int64_t vpad = paddedVocab(m.vocab, pl.tp, k.vocab_divisible_by);
    const double embAct = embeddingBytes(d, shape);
    const double headAct = headBytes(d, vpad);
    const double mtpAct =
        m.mtp_layers > 0 ? (m.mtpIsMoe() ? moeAct : denseAct) + mtpExtraBytes(d, vpad) : 0.0;
    // One at a time: the loss's copies are freed before the last layer's backward rebuilds it.
    const double lossPeak = lossTransientBytes(fw, d, vpad);
    double recomputeLayer = recomputeWorkingSet(m, d, shape);
    // A layer's attention backward adds the ring's buffers to what of the layer is live then:
    // with full recompute its rebuilt attention block (the MLP's backward, which runs first, has
    // freed the rest).
    const CpComm cpComm = pl.cp_comm == CpComm::Default ? fw.cp.comm : pl.cp_comm;
    const double ring = ringBackwardBytes(d, shape, fw, cpComm);
    if (ring > 0) {
        ActivationShape none = shape;
        none.recompute = Recompute::None;
        const double live =
            shape.recompute == Recompute::Full ? attentionBlockBytes(d, none) / d.cp : 0.0;
        recomputeLayer = std::max(recomputeLayer, live + ring);
    }
    const StoredLayerBytes storedAct = storedLayerBytes(s, m, d, shape);
    const double headParams = double(vpad) * d.h / d.t;
    const double headInflight = headInflightMicrobatches(
        effectiveSchedule(pl.schedule, pl.virtual_stages), p, safeMicrobatches(s.training, pl));

    // FSDP2's gradients are plain .grad tensors that the step's zero_grad() frees (set_to_none):
    // with one micro-batch and no PP none exists yet at the peak, the loss at the start of the
    // backward; the shards appear as the backward frees the activations.
    const bool gradsAtPeak = !fw.sharded_param_is_master || fw.zero3_accumulate_unsharded ||
                             safeMicrobatches(s.training, pl) > 1;
    const double mb = safeMicrobatches(s.training, pl);
    const ZeroShards shards = zeroShards(pl);
    const double fp8Extra =
        fp8WeightExtraBytes(fw, s.training.fp8_recipe, isBlackwell(s.cluster.gpu.name));
    int groups = 0;
    for (int g : {pl.tp, pl.cp, pl.dp, pl.ep, pl.pp})
        groups += g > 1 ? 1 : 0;

    struct States
    {
        double parameters = 0, gradients = 0, optimizer_states = 0, comm_buffers = 0;
    } states;
    for (int r = 0; r < p; ++r) {
        const StageLayers& st = layers[std::size_t(r)];
        const StageParams& sp = params[std::size_t(r)];
        StageMemory& out = est.stages[std::size_t(r)];
        // Every field is set below (no zeroing pass first: this runs per stage per evaluation).
        out.stage = r;
        out.layers = st.layers;
        out.stored_layers = st.stored;
        out.stored_moe_layers = st.stored_moe;
        out.inflight_microbatches = inflight[std::size_t(r)];
        out.holds_embedding = st.first;
        out.holds_lm_head = st.last;
        out.mtp_layers = st.mtp;

        // A stage with its neighbour's layers and parameters (most middle stages) holds the
        // same model states and communication buffers: only its in-flight count differs.
        const bool same =
            r > 0 && st == layers[std::size_t(r) - 1] && sp == params[std::size_t(r) - 1];
        if (!same) {
            const ModelStateBytes dense =
                modelStateBytes(sp.dense, fw, pl.zero, shards.dense, pl.offload_optimizer);
            const ModelStateBytes expert =
                modelStateBytes(sp.expert, fw, pl.zero, shards.expert, pl.offload_optimizer);
            // Transformer Engine's FP8 copies of the (replicated) linear weights.
            const double fp8Weights = pl.zero <= 2 ? fp8Extra * linearWeights(sp) : 0.0;
            states = {dense.parameters + expert.parameters + fp8Weights,
                      gradsAtPeak ? dense.gradients + expert.gradients : 0.0,
                      dense.optimizer_states + expert.optimizer_states,
                      commBufferBytes(pl, fw, k, st, sp, st.last ? headParams : 0.0, groups)};
        }
        out.parameters = states.parameters;
        out.gradients = states.gradients;
        out.optimizer_states = states.optimizer_states;

        double perMb = (st.layers - st.moe_layers) * denseAct + st.moe_layers * moeAct;
        // Layers full recompute leaves alone keep what they would keep with none.
        if (st.stored > 0) [[unlikely]]
            perMb += (st.stored - st.stored_moe) * (storedAct.dense - denseAct) +
                     st.stored_moe * (storedAct.moe - moeAct);
        if (st.first)
            perMb += embAct;
        // The head's extras are held for the micro-batches between the last chunk's F and its
        // B and its pending W (headInflightMicrobatches), not for all the stage holds: under a V
        // the stage with the head (stage 0) holds about p micro-batches of its layers, but one
        // of the head's.
        // The MTP modules run right after the head, in the same chunk: held as long as it is.
        const double head =
            (st.last ? headAct : 0.0) * headInflight + st.mtp * mtpAct * headInflight;
        // A layer count leaves every chunk at least one recomputed layer, so any stage with
        // layers rebuilds one at a time.
        const double transient =
            std::max(st.last ? lossPeak : 0.0, st.layers > 0 ? recomputeLayer : 0.0);
        out.activations = perMb * out.inflight_microbatches + head + transient;

        out.comm_buffers = states.comm_buffers;
        if (fw.pp_buffers_per_microbatch)
            out.comm_buffers += pipelineBufferBytes(pl, d, st, out.inflight_microbatches, mb);
        out.runtime_overhead =
            k.cuda_context_bytes + k.activation_temporaries_fraction * out.activations;
        out.outside_allocator = k.cuda_context_bytes + groups * k.nccl_bytes_per_group;
        // Where the loss's fp32 copies set the peak, the blocks a layer's forward freed (what
        // it did not keep for backward) lie between the stored activations, too small for those
        // copies: the caching allocator maps new memory and keeps them cached. Where a layer's
        // recompute sets the peak, it reuses them.
        out.allocator_cached = st.last && lossPeak > recomputeLayer ? recomputeLayer : 0.0;
    }
}

} // namespace paralens
