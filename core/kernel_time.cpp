// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/kernel_time.h"
#include "core/gpu_family.h"
#include "core/moe_dispatch.h"
#include "core/params.h"

#include <algorithm>
#include <string_view>

namespace paralens {

namespace {

// The per-GPU efficiencies (core/gpu_family.cpp) are those of an 8192 × 8192 × 8192 GEMM (the width
// of a 70B layer); the shape factor (ModelConstants::gemm_half_size) is taken relative to that
// shape.
constexpr double kGemmReferenceSide = 8192;
// FP8 GEMMs with rowwise scales (PyTorch's CUTLASS f8f8bf16_rowwise kernel behind
// torch._scaled_mm) run at this share of the tensorwise (cuBLAS) rate. Fitted to torchao's
// end-to-end table (torchao/float8/README.md "Training benchmarks": Llama 3 8B, 8 H100, FSDP2,
// batch 1 × 8192, compile, per-op SAC: tensorwise 7689.5, rowwise 6768 tokens/s, a 1.136 step
// ratio, which the model's rowwise cast bytes alone put at 1.02). Consistent with
// pytorch/torchtitan#1207, which reads "at least 1.11x" for Llama 3 70B's TP-8 w1 (131072 ×
// 8192 × 5632) off torchao's rowwise speedup table (the model: 1.18×); held out: the rowwise rows
// of the torchtitan AsyncTP benchmark (June 2025).
constexpr double kRowwiseGemmRateShare = 0.78;

// Whether the element-wise ops run as fused kernels: Megatron-LM and DeepSpeed always fuse them
// (apex / TransformerEngine kernels); FSDP runs eager PyTorch unless torch.compile is on.
bool fusedElementwise(const TrainingSettings& tr)
{
    return tr.framework != Framework::FSDP || tr.compile;
}

// Two-byte elements per token one layer's sequence-parallel collectives copy in forward, and as
// many in backward, with PyTorch's DTensor TP: torchtitan's activations are batch-first and SP
// shards dimension 1, so every all-gather's output and every reduce-scatter's input is
// re-laid out by a chunk + cat of the full b·s·h tensor (read and write; torch
// distributed/_functional_collectives.py all_gather_tensor / reduce_scatter_tensor for a
// gather or scatter dim other than 0). Two all-gathers and two reduce-scatters per layer.
// Megatron's activations are sequence-first: its SP collectives run on dimension 0, no copy.
double sequenceRelayoutElements(const Dims& d, const ParallelPlan& pl, const TrainingSettings& tr)
{
    if (tr.framework != Framework::FSDP || pl.tp <= 1 || !pl.sequence_parallel)
        return 0;
    return 4 * 2 * d.h;
}

// Two-byte elements per q or k element RoPE streams in forward: eager kernels
// (ModelConstants::eager_rope_elements, counted from torchtitan's complex form; the rotate_half
// form's five kernels stream about as much) or one fused kernel reading and writing once (2).
// torch.compile fuses the real-valued form only: Inductor runs complex operators as eager
// kernels (RopeImpl).
double ropeElements(const TrainingSettings& tr, const ModelConstants& kc)
{
    RopeImpl r = tr.rope_impl;
    if (r == RopeImpl::Default)
        r = tr.framework == Framework::FSDP ? RopeImpl::Complex : RopeImpl::Fused;
    const bool eager = r == RopeImpl::Complex || (r == RopeImpl::Real && !fusedElementwise(tr));
    return eager ? kc.eager_rope_elements : 2.0;
}

// Two-byte elements per token one layer's element-wise kernels stream in forward: fused (two
// norms, two residual adds, two dropouts as ModelConstants::elementwise_hidden_elements, RoPE
// read + write of q and k, the activation / MoE copies of `ffn_elems`) or eager PyTorch. Only
// RoPE models rotate q and k (learned positions are added once, to the embeddings); the fused
// path's LayerNorm and RMSNorm kernels (Apex / TransformerEngine) stream alike, eager RMSNorm
// runs six kernels where eager LayerNorm runs one.
double elementwiseElements(const ModelSpec& m, const Dims& d, const TrainingSettings& tr,
                           const ModelConstants& kc, double ffn_elems, bool moe)
{
    const double qk = m.position_embedding == PositionEmbedding::Rope ? (d.q + d.kv) / d.t : 0.0;
    // QK-norm normalises the q and k elements of the rank's heads.
    const double qkNormed = m.qk_norm ? (d.q + d.kv) / d.t : 0.0;
    if (fusedElementwise(tr)) {
        // Two dropouts (read h, write h each) run only when the recipe has dropout; a fused
        // norm reads and writes each element once, as the two of the hidden figure do.
        const double hidden = kc.elementwise_hidden_elements - (tr.dropoutOn() ? 0.0 : 4.0);
        return hidden * d.h / d.tsp + ropeElements(tr, kc) * qk + 2 * qkNormed + ffn_elems;
    }
    const double perNorm =
        m.norm == NormType::LayerNorm ? kc.eager_layernorm_elements : kc.eager_norm_elements;
    const double norms = 2 * perNorm * d.h / d.tsp + perNorm * qkNormed;
    const double residuals = 2 * 3 * d.h / d.tsp; // read 2 + 2, write 2 bytes each
    const double rope = ropeElements(tr, kc) * qk;
    const double attnOut = 2 * d.o / d.t; // the attention output made contiguous
    double act = ffn_elems;
    if (!moe || !m.isMoe())
        act = (m.gated_mlp ? kc.eager_swiglu_elements : 2.0) * double(m.ffn_hidden) / d.t;
    return norms + residuals + rope + attnOut + act;
}

// Forward seconds of a flash-attention block of `rows` query rows (all heads of the rank, q/t
// wide) on `keys` keys; a causal block computes half of it. Its rate is the long non-causal
// one, lowered for short key rows and for the masked tiles of a causal block.
double flashBlockSeconds(const Dims& d, const KernelModel& k, const AttentionSetup& a, double rows,
                         double keys, bool causal)
{
    if (rows <= 0 || keys <= 0)
        return 0;
    const double flops = 4 * rows * keys * d.core / d.t * (causal ? 0.5 : 1.0);
    double eff = k.eff_bf16 * k.attn_ratio * a.kernel_share * keys / (keys + kFlashHalfRateKeys);
    if (causal) {
        const double tiles = keys / kFlashTileKeys;
        eff *= kCausalMaskedShare * tiles / (tiles + kCausalDiagonalTiles);
    }
    return rooflineSeconds(flops, k.peak_bf16, eff, 0, k.hbm);
}

// Without flash attention: batched GEMMs over the full s² scores (causal masks save nothing)
// plus the softmax / dropout kernels streaming the a·s² score tensors; the backward runs the
// two GEMMs' four gradient products and the same traffic. CP blocks are equal shares.
AttentionTimes unfusedAttention(const Dims& d, const KernelModel& k, const ModelConstants& kc)
{
    const double flops = 4 * d.tokens * d.s * d.core / d.t;
    const double scores = d.heads / d.t * (d.s / d.cp) * d.s * d.b;
    AttentionTimes t;
    t.f = rooflineSeconds(flops, k.peak_bf16, k.eff_bf16, 0, k.hbm) +
          k.stream(kc.score_bytes_per_element * scores);
    t.b = 2 * t.f;
    t.first_f = t.f / d.cp;
    t.first_b = t.b / d.cp;
    if (d.cp > 1) {
        t.step_f = t.first_f;
        t.step_b = t.first_b;
    }
    return t;
}

// The feed-forward part of one layer's forward, as the recompute modules repeat it: GEMM
// seconds and element-wise elements per token (FfnForward::elements() is what the layer's
// element-wise kernels stream for it).
struct FfnForward
{
    double gemm = 0;        ///< every GEMM of the MLP, or of the experts, shared experts, router
    double shared_gemm = 0; ///< the shared experts' GEMMs (part of gemm)
    double act = 0;         ///< activation function of the MLP or routed experts
    double shared_act = 0;  ///< the shared experts' activation function
    double permute = 0;     ///< MoE permute / unpermute copies
    double elements() const { return act + shared_act + permute; }
};

// Adds the MLP (or the experts, shared experts and router) of one layer to lt and returns its
// forward parts. `imbalance` is the busiest EP rank's load over the mean (moeLoadImbalance()).
FfnForward addFeedForward(const ModelSpec& m, const Dims& d, const KernelModel& k, bool moe,
                          double imbalance, double gather, LayerTimes& lt)
{
    FfnForward ff;
    const double f0 = lt.f;
    if (!moe || !m.isMoe()) {
        const double ffn = double(m.ffn_hidden);
        k.linear(d.tokens, d.h, (d.c - 1) * ffn / d.t, 1, lt.f, lt.b, lt.w, true, gather);
        k.linear(d.tokens, ffn / d.t, d.h, 1, lt.f, lt.b, lt.w, true, 1, gather);
        ff.gemm = lt.f - f0;
        ff.act = 3 * ffn / d.t;
        return ff;
    }
    const double fe = double(m.moe.expert_ffn_hidden);
    const double E = std::max(1.0, double(m.moe.experts)), kk = m.moe.top_k;
    // N/t tokens enter each rank (sequence-parallel shards); the expert TP × EP group's tokens
    // reach its experts, so each of the E/ep local experts (1/etp of each) runs one GEMM of
    // N/t·etp·ep·k/E rows, times the busiest rank's excess (grouped GEMM: one GEMM per expert,
    // thin when few rows reach it).
    const double rows = d.tokens / d.t * d.etp * d.ep * kk / E * imbalance;
    const double local = std::max(1.0, E / d.ep);
    k.linear(rows, d.h, (d.c - 1) * fe / d.etp, local, lt.f, lt.b, lt.w);
    k.linear(rows, fe / d.etp, d.h, local, lt.f, lt.b, lt.w);
    if (m.moe.shared_experts > 0) { // on the attention TP group (Megatron-Core SharedExpertMLP)
        const double fs = fe * m.moe.shared_experts;
        const double s0 = lt.f;
        k.linear(d.tokens, d.h, (d.c - 1) * fs / d.t, 1, lt.f, lt.b, lt.w);
        k.linear(d.tokens, fs / d.t, d.h, 1, lt.f, lt.b, lt.w);
        ff.shared_gemm = lt.f - s0;
        ff.shared_act = 3 * m.moe.shared_experts * fe / d.t;
    }
    k.linear(d.tokens / d.tsp, d.h, E, 1, lt.f, lt.b, lt.w); // router, on the SP shard
    ff.gemm = lt.f - f0;
    ff.act = 3 * kk * imbalance * fe / d.t;
    ff.permute = 4 * kk * d.h / d.tsp; // permute / unpermute copies
    return ff;
}

// MLA's projections to and from the latents (Megatron-Core MLASelfAttention): every TP rank runs
// the down-projections whole on its tokens (all N without SP, its N/t sequence shard with SP),
// the up-projections split by heads on all N tokens.
// Returns the up-projections' forward seconds (what the mla_up_proj recompute module repeats).
double addMlaProjections(const ModelSpec& m, const Dims& d, const KernelModel& k, LayerTimes& lt)
{
    const MlaSpec& a = m.mla;
    const double n = m.heads, qr = double(a.q_lora_rank), kvr = double(a.kv_lora_rank);
    const double down = qr + kvr + double(a.qk_rope_head_dim);
    k.linear(d.tokens / d.tsp, d.h, down, 1, lt.f, lt.b, lt.w);
    const double f0 = lt.f;
    if (qr > 0)
        k.linear(d.tokens, qr, d.q / d.t, 1, lt.f, lt.b, lt.w);
    else
        k.linear(d.tokens, d.h, d.q / d.t, 1, lt.f, lt.b, lt.w);
    k.linear(d.tokens, kvr, n * double(a.qk_nope_head_dim + a.v_head_dim) / d.t, 1, lt.f, lt.b,
             lt.w);
    return lt.f - f0;
}

// The TP degree over which torchao's Float8ColwiseParallel / Float8RowwiseParallel gather FP8
// activations (casting them on the sequence shard first): torchtitan applies them with TP for
// tensorwise recipes only; rowwise ones gather in BF16 (enable_float8_tensorwise_tp in
// torchtitan models/llama3/parallelize_llama.py, 820504e). 1 = no FP8 gather.
double fp8GatherDegree(const Dims& d, const KernelModel& k, const ParallelPlan& pl,
                       const TrainingSettings& tr)
{
    const bool gathers = k.fp8 && k.recipe == Fp8Recipe::Tensorwise &&
                         tr.framework == Framework::FSDP && pl.sequence_parallel && d.t > 1;
    return gathers ? d.t : 1.0;
}

// Calls of one layer's forward that launch no kernel (forwardHostOpsPerLayer()).
double hostOnlyCallsPerLayer(const ModelSpec& m, const ParallelPlan& pl, const TrainingSettings& tr)
{
    double ops = 0;
    if (tr.framework == Framework::FSDP)
        return ops; // torchtitan's eager element-wise ops are already counted one by one
    // Megatron's GPT layer (megatron/model/transformer.py, ParallelAttention.forward, in
    // Megatron-LM's legacy model and Megatron-DeepSpeed) makes calls that launch no kernel:
    // without flash attention the QKV view and split, the query and key views, torch.empty for
    // the scores, three transposes, the score view, the fused softmax's view in and out, the
    // CUDA RNG tracker's fork (get and set the state on entry and exit: 4), the value and
    // probability views, the value transpose, the context view, permute, the .contiguous()
    // copy and the final view (22); with flash attention the q, k, v and output rearranges (5).
    ops += tr.flash_attention ? 5 : 22;
    if (!m.gated_mlp)
        ops += 2; // bias.expand_as(residual) before each fused bias-dropout-add (GPT biases)
    if (pl.tp > 1)
        ops += 2; // copy_to_tensor_model_parallel_region before the QKV and the MLP input GEMMs
    return ops;
}

// Host calls of Megatron's activation-checkpoint function per checkpointed layer and micro-batch
// (CheckpointFunction in megatron/core/tensor_parallel/random.py, mpu/random.py in the legacy
// tree; checkpoint_num_layers 1): the forward saves the CPU, CUDA and tracker RNG states (3); the
// backward reads the current three, restores the saved three, detaches the two inputs, enters
// enable_grad, puts the three states back after the recomputed forward, runs
// torch.autograd.backward and gathers the two input gradients (14).
double checkpointHostCalls(const TrainingSettings& tr)
{
    return tr.recompute == Recompute::Full && tr.framework != Framework::FSDP ? 3 + 14 : 0;
}

// Kernels Megatron's selective recompute launches again per layer, module by module: the
// attention core (one flash kernel, or four); a separate norm one each; MLA's two
// up-projections and the RoPE kernel; a dense MLP's two GEMMs and activation, with TP its
// all-gather and reduce-scatter; an MoE layer's router, softmax + top-k, permute and unpermute
// (7), its experts' GEMMs (forwardKernelsPerLayer()'s count), activation and the two
// all-to-alls, or the activation alone; the shared experts' two GEMMs and activation.
double recomputedKernels(const ModelSpec& m, const ParallelPlan& pl, const TrainingSettings& tr,
                         bool moeLayer)
{
    const double core = tr.flash_attention ? 1 : 4;
    if (tr.recompute_modules == kRecomputeCoreAttn)
        return core;
    double n = 0;
    if (tr.recomputes(kRecomputeCoreAttn))
        n += core;
    if (tr.recomputes(kRecomputeLayernorm))
        n += (m.isMla() ? 1 : 0) + (moeLayer ? 1 : 0);
    if (tr.recomputes(kRecomputeMlaUpProj) && m.isMla())
        n += 3;
    if (!moeLayer)
        return n + (tr.recomputes(kRecomputeMlp) ? 3 + (pl.tp > 1 ? 2 : 0) : 0);
    const double local = std::max(1.0, double(m.moe.experts) / std::max(1, pl.ep));
    if (tr.recomputes(kRecomputeMoe))
        return n + 7 + 2 * local + 1 + 2 + (m.moe.shared_experts > 0 ? 3 : 0);
    if (tr.recomputes(kRecomputeMoeAct))
        n += 1;
    if (tr.recomputes(kRecomputeSharedExperts) && m.moe.shared_experts > 0)
        n += 3;
    return n;
}

// Matmuls whose outputs torchtitan's per-op SAC saves in a layer (opSacRecomputeSeconds()): Q,
// V, the MLP's first and, gated, its last; half of them in an MoE or MLA layer.
double opSacSavedMatmuls(const ModelSpec& m, bool moeLayer)
{
    const int c = mlpMatrices(m);
    return moeLayer || m.isMla() ? (4 + c) / 2 : 1 + c;
}

// Kernel-launch time of one layer per micro-batch: the forward's kernels, twice as many in
// backward (each op's input and weight gradient), and what recomputation launches again.
void addLaunches(const ModelSpec& m, const ParallelPlan& pl, const TrainingSettings& tr,
                 const ModelConstants& kc, bool moe, LayerTimes& lt)
{
    const double fwd = forwardKernelsPerLayer(m, pl, tr, moe);
    double rec = 0;
    if (tr.recompute == Recompute::Full)
        rec = fwd;
    else if (opLevelCheckpointing(tr))
        rec = fwd - opSacSavedMatmuls(m, moe && m.isMoe()); // all but the saved matmuls
    else if (tr.recompute == Recompute::Selective)
        rec = recomputedKernels(m, pl, tr, moe && m.isMoe());
    const double t = kc.kernel_launch_seconds;
    lt.f += fwd * t;
    lt.b += (2 * fwd + rec) * t;
    lt.launch = (3 * fwd + rec) * t;
    // The host issues every operator call, kernel or not: the forward's; in backward the
    // autograd engine dispatches one node per differentiable forward call and the node issues
    // about two ops (a GEMM's two gradient GEMMs, a view's reshape of its gradient, the
    // parameters' gradient accumulation), three calls per forward call; and the recomputed
    // forward again.
    const double ops = fwd + hostOnlyCallsPerLayer(m, pl, tr);
    const double recOps = rec == fwd ? ops : rec;
    lt.host_f = ops * t;
    lt.host_b = (3 * ops + recOps + checkpointHostCalls(tr)) * t;
}

} // namespace

// The GEMMs TP collectives are fused with (TpGemmSeconds), for the dense layer: AsyncTP's
// (FSDP) or TransformerEngine's userbuffers (Megatron, DeepSpeed).
TpGemmSeconds tpGemmSeconds(const ModelSpec& m, const Dims& d, const KernelModel& k,
                            const TrainingSettings& tr)
{
    TpGemmSeconds g;
    if (d.t <= 1)
        return g;
    const double qkv = m.isMla() ? 0.0 : (d.q + 2 * d.kv) / d.t;
    const double ffn = double(m.ffn_hidden), up = (d.c - 1) * ffn / d.t;
    // The fused GEMMs whole: the forward's four and the output projections' input gradients.
    const double qkvF = k.gemm(d.tokens, d.h, qkv, true), upF = k.gemm(d.tokens, d.h, up, true);
    const double oF = k.gemm(d.tokens, d.o / d.t, d.h, true);
    const double downF = k.gemm(d.tokens, ffn / d.t, d.h, true);
    const double oDgrad = k.gemm(d.tokens, d.h, d.o / d.t, true);
    const double downDgrad = k.gemm(d.tokens, d.h, ffn / d.t, true);
    // A GEMM of the layer's tokens split into n row chunks, each its own kernel.
    const auto split = [&](double whole, double K, double N, double n) {
        return n == 1 ? whole : n * k.gemm(d.tokens / n, K, N, true);
    };
    const double tn = d.t;
    if (tr.framework == Framework::FSDP) {
        // AsyncTP: every fused GEMM in t chunks; with rowwise Float8 the all-gathers do not fuse
        // (a cast sits between), only the forward reduce-scatters.
        const Fp8Recipe r = resolvedFp8Recipe(tr);
        const bool agFuses = !(k.fp8 && (r == Fp8Recipe::Rowwise || r == Fp8Recipe::RowwiseGwHp));
        const double agSplit = agFuses ? tn : 1.0;
        g.qkv_f = split(qkvF, d.h, qkv, agSplit);
        g.up_f = split(upF, d.h, up, agSplit);
        g.o_f = split(oF, d.o / d.t, d.h, tn);
        g.down_f = split(downF, ffn / d.t, d.h, tn);
        g.o_dgrad = split(oDgrad, d.h, d.o / d.t, agSplit);
        g.down_dgrad = split(downDgrad, d.h, ffn / d.t, agSplit);
    } else {
        // TransformerEngine: ring exchange in t chunks on copy engines; pipeline in 4 chunks and
        // bulk whole, both on the SMs their communication leaves.
        const double slow = k.sms > kUbCommSms ? k.sms / (k.sms - kUbCommSms) : 1.0;
        g.qkv_f = split(qkvF, d.h, qkv, tn);
        g.up_f = split(upF, d.h, up, tn);
        g.o_f = slow * split(oF, d.o / d.t, d.h, kUbPipelineSplits);
        g.down_f = slow * split(downF, ffn / d.t, d.h, kUbPipelineSplits);
        g.o_dgrad = split(oDgrad, d.h, d.o / d.t, tn);
        g.down_dgrad = split(downDgrad, d.h, ffn / d.t, tn);
        g.qkv_dgrad = slow * k.gemm(d.tokens, qkv, d.h, true);
        g.up_dgrad = slow * k.gemm(d.tokens, up, d.h, true);
        g.qkv_wgrad = slow * k.gemm(d.h, d.tokens, qkv, true);
        g.up_wgrad = slow * k.gemm(d.h, d.tokens, up, true);
        g.split_b = (g.qkv_dgrad + g.up_dgrad + g.qkv_wgrad + g.up_wgrad) * (1 - 1 / slow);
    }
    g.split_f = std::max(0.0, g.qkv_f + g.up_f + g.o_f + g.down_f - (qkvF + upF + oF + downF));
    g.split_b += std::max(0.0, g.o_dgrad + g.down_dgrad - (oDgrad + downDgrad));
    // torch.distributed._symmetric_memory's fused matmul + reduce-scatter writes each of the t
    // partial products to its owner and sums the t received chunks (torch.sum over the stacked
    // partials): it reads the whole bf16 output once and writes 1/t of it on the compute stream.
    if (tr.framework == Framework::FSDP)
        g.rs_sum = k.stream(2 * d.tokens * d.h * (1 + 1 / d.t));
    return g;
}

// torchtitan's selective ("op") activation checkpointing: it saves the outputs of matmuls,
// attention and reduce-scatters except every second matmul, and recomputes everything else,
// all-gathers included (_save_list in torchtitan models/llama3/parallelize_llama.py, 820504e;
// distributed/activation_checkpoint.py later). Megatron's selective recompute repeats only the
// attention core (Korthikanti et al. 2022 §5).
bool opLevelCheckpointing(const TrainingSettings& tr)
{
    return tr.framework == Framework::FSDP && tr.recompute == Recompute::Selective;
}

AttentionSetup attentionSetup(const Scenario& s, const FrameworkConventions& fw)
{
    AttentionSetup a;
    // cuDNN's fused attention sets the rate (1); FlashAttention-2 runs at its share of it on
    // Hopper and Blackwell and at the same rate elsewhere (docs/formulas.md §2.5).
    const GpuTraits& gpu = gpuTraits(s.cluster.gpu.name);
    const double fa2 = gpu.hopper ? kFa2OnHopperShare : gpu.blackwell ? kFa2OnBlackwellShare : 1.0;
    switch (s.training.attention_kernel) {
    case AttentionKernel::Default:
        if (fw.attention_sdpa && gpu.instinct) {
            a.kernel_share = 1 / kTritonForwardSlowdown;
            a.backward_share = 1 / kTritonBackwardSlowdown;
            break;
        }
        // torchtitan puts SDPA's cuDNN backend first on Blackwell (models/attention.py,
        // pytorch/torchtitan#1196, May 2025). On Hopper it kept flash first until Oct 2025
        // (#1776), which the measured FSDP runs predate: FA2 stays Hopper's default.
        a.kernel_share = fw.attention_fa2 && !(fw.attention_sdpa && gpu.blackwell) ? fa2 : 1.0;
        a.backward_share = a.kernel_share;
        break;
    case AttentionKernel::Flash2:
        a.kernel_share = a.backward_share = fa2;
        break;
    case AttentionKernel::Fused:
        a.kernel_share = a.backward_share = 1.0;
        break;
    case AttentionKernel::Triton:
        a.kernel_share = fa2 / kTritonForwardSlowdown;
        a.backward_share = fa2 / kTritonBackwardSlowdown;
        break;
    }
    a.cp = fw.cp;
    a.comm = s.parallel.cp_comm == CpComm::Default ? fw.cp.comm : s.parallel.cp_comm;
    a.ring =
        s.parallel.cp > 1 && s.training.flash_attention &&
        (a.comm == CpComm::P2P || (a.comm == CpComm::AllGather && fw.cp.gather_under_first_block));
    if (s.training.compile && fw.cp.compiled_exchange_exposed) {
        a.exchange_exposed = true;
        a.cp.merge_bytes_forward = fw.cp.compiled_merge_bytes_forward;
        a.cp.merge_bytes_backward = fw.cp.compiled_merge_bytes_backward;
    }
    const Recompute r = s.training.recompute;
    a.recomputed = r == Recompute::Full ||
                   (!opLevelCheckpointing(s.training) && s.training.recomputes(kRecomputeCoreAttn));
    return a;
}

AttentionTimes attentionTimes(const Dims& d, const KernelModel& k, const TrainingSettings& tr,
                              const ModelConstants& kc, const AttentionSetup& a)
{
    if (!tr.flash_attention)
        return unfusedAttention(d, k, kc);
    // The backward's FLOPs at its rate, in forwards of this kernel (the shares are equal, and
    // their quotient exactly 1, for every kernel but Triton's).
    const double bwd =
        kFlashBackwardFlopsFactor / kFlashBackwardRateShare * (a.kernel_share / a.backward_share);
    AttentionTimes t;
    if (!a.ring) {
        // The rank's queries on every key (no CP, gathered K/V, or Ulysses' head split): one
        // causal attention over the whole sequence, 1/cp of its rows.
        t.first_f = flashBlockSeconds(d, k, a, d.tokens, d.s, true);
        t.first_b = bwd * t.first_f;
        t.f = t.first_f;
        t.b = t.first_b;
        return t;
    }
    // Load-balanced ring (Megatron context_parallel.md; PyTorch _templated_ring_attention):
    // each rank holds chunks i and 2·cp − 1 − i; its own pair is a causal block of s/cp keys,
    // every remote pair half a block (all queries on the earlier chunk, or the later queries on
    // both), s/(2cp) keys on the rank that does all-queries steps.
    const double chunk = d.s / d.cp;
    t.first_f = flashBlockSeconds(d, k, a, d.tokens, chunk, true);
    t.first_b = bwd * t.first_f;
    const double kvWide = (a.cp.kv_repeated ? d.q : d.kv) / d.t;
    const double mergeF = k.stream(a.cp.merge_bytes_forward * d.tokens * d.o / d.t);
    const double mergeB = k.stream(a.cp.merge_bytes_backward * d.tokens * (d.o / d.t + 2 * kvWide));
    t.step_f = flashBlockSeconds(d, k, a, d.tokens, chunk / 2, false) + mergeF;
    t.step_b = bwd * (t.step_f - mergeF) + mergeB;
    t.f = t.first_f + (d.cp - 1) * t.step_f;
    t.b = t.first_b + (d.cp - 1) * t.step_b;
    return t;
}

double streamingMultiprocessors(const GpuSpec& gpu)
{
    return gpuTraits(gpu.name).family.sms;
}

double defaultGemmEfficiency(const GpuSpec& gpu, bool fp8)
{
    const FamilyEfficiency& e = gpuTraits(gpu.name).family;
    const double bf16 = e.bf16Share(gpu.bf16_tflops);
    return fp8 ? e.fp8_share * bf16 : bf16;
}

double rooflineSeconds(double flops, double peak_flops_per_s, double efficiency, double bytes,
                       double hbm_bytes_per_s)
{
    const double c =
        peak_flops_per_s > 0 && efficiency > 0 ? flops / (peak_flops_per_s * efficiency) : 0.0;
    const double mem = hbm_bytes_per_s > 0 ? bytes / hbm_bytes_per_s : 0.0;
    return std::max(c, mem);
}

// Out of line: the layer model calls it a dozen times, and three GEMMs inlined at every call
// would grow the evaluator's code past what the instruction cache holds.
void KernelModel::linear(double M, double K, double N, double count, double& f, double& b,
                         double& w, bool fp8_ok, double in_gather, double grad_gather) const
{
    f += count * gemm(M, K, N, fp8_ok);
    b += count * gemm(M, N, K, fp8_ok);
    // rowwise_with_gw_hp keeps the weight-gradient GEMM in BF16 (torchao Float8LinearConfig).
    w += count * gemm(K, M, N, fp8_ok && recipe != Fp8Recipe::RowwiseGwHp);
    if (fp8 && fp8_ok) {
        const Fp8CastBytes c = fp8CastBytes(M, K, N, recipe, in_gather, grad_gather, weight_gather);
        f += count * stream(c.forward);
        b += count * stream(c.backward);
    }
}

Fp8CastBytes fp8CastBytes(double M, double K, double N, Fp8Recipe recipe, double in_gather,
                          double grad_gather, double weight_gather)
{
    const double x = M * K, wt = K * N, dy = M * N;
    // Tensorwise with an FP8 all-gather: amax + cast on the shard, transposed copy of the whole.
    const auto gathered = [](double g) { return g > 1 ? 5 / g + 2 : 6.0; };
    Fp8CastBytes c;
    switch (recipe) {
    case Fp8Recipe::Tensorwise:
        c.forward = gathered(in_gather) * x + (weight_gather > 1 ? 5 / weight_gather : 5) * wt;
        c.backward = gathered(grad_gather) * dy + (weight_gather > 1 ? 2 : 3) * wt;
        break;
    case Fp8Recipe::Rowwise:
        c.forward = 3 * x + 3 * wt;
        c.backward = 5 * x + 7 * wt + 8 * dy;
        break;
    case Fp8Recipe::RowwiseGwHp:
        c.forward = 3 * x + 3 * wt;
        c.backward = 3 * wt + 3 * dy;
        break;
    case Fp8Recipe::Mxfp8:
        c.forward = 3 * x + 3 * wt;
        c.backward = 3 * x + 3 * wt + 6 * dy;
        break;
    case Fp8Recipe::Default:
    case Fp8Recipe::Delayed:
        c.forward = 3 * (x + wt);
        c.backward = 3 * dy + (x + wt);
        break;
    }
    return c;
}

double forwardKernelsPerLayer(const ModelSpec& m, const ParallelPlan& pl,
                              const TrainingSettings& tr, bool moe)
{
    const bool megatron = tr.framework != Framework::FSDP;
    // GEMMs: Megatron fuses QKV into one and the gate with the up projection (2 + 2);
    // torchtitan's Llama runs q, k, v, o and w1, w3, w2 separately (4 + 3).
    double k = megatron ? 4 : 4 + mlpMatrices(m);
    if (m.isMla()) { // q down/up, kv down/up and the latent norms replace the QKV GEMM(s)
        const bool qLatent = m.mla.q_lora_rank > 0;
        k += (megatron ? 3 : 1) - (qLatent ? 0 : 1) + (qLatent ? 2 : 1);
    }
    // Attention core: one flash kernel, or baddbmm, fused softmax, dropout and bmm.
    k += tr.flash_attention ? 1 : 4;
    const bool rope = m.position_embedding == PositionEmbedding::Rope;
    const int qkNorms = m.qk_norm ? 2 : 0;
    if (fusedElementwise(tr)) {
        k += 2 + qkNorms + 2 + 1 + (rope ? 1 : 0); // norms, two residual adds, act, RoPE
    } else {
        const int normKernels = m.norm == NormType::LayerNorm ? 1 : 6; // native layer_norm
        k += (2 + qkNorms) * normKernels + 2 + (rope ? 2 * 3 : 0) + 1 +
             (m.gated_mlp ? 2 : 1); // norms, adds, RoPE q/k, copy, act
    }
    if (moe && m.isMoe()) {
        k += 1 + 2 + 2 + 2; // router GEMM, softmax + top-k, permute, unpermute
        // The routed experts' two grouped GEMMs replace the MLP's two. TransformerEngine's
        // GroupedLinear (Megatron-Core --moe-grouped-gemm) issues one cuBLAS GEMM per local expert
        // on its compute streams (multi_stream_cublas_gemm in TE common/gemm/cublaslt_gemm.cu;
        // its CUTLASS grouped path is BF16-only and opt-in, NVTE_USE_CUTLASS_GROUPED_GEMM), and
        // DeepSpeed-MoE runs its local experts in a loop (deepspeed/moe/experts.py); torchtitan's
        // GroupedExperts is one torch._grouped_mm per weight. Shared experts add their own MLP.
        const double local = std::max(1.0, double(m.moe.experts) / std::max(1, pl.ep));
        if (megatron)
            k += 2 * (local - 1) + (m.moe.shared_experts > 0 ? 2 : 0);
        else
            k += m.moe.shared_experts > 0 ? mlpMatrices(m) : 0;
    }
    if (pl.tp > 1)
        k += pl.sequence_parallel ? 4 : 2; // all-gather + reduce-scatter pairs, or all-reduces
    return k;
}

double forwardHostOpsPerLayer(const ModelSpec& m, const ParallelPlan& pl,
                              const TrainingSettings& tr, bool moe)
{
    return forwardKernelsPerLayer(m, pl, tr, moe) + hostOnlyCallsPerLayer(m, pl, tr);
}

KernelModel kernelModel(const Scenario& s, const ModelConstants& kc,
                        const MeasuredPerformance* measured)
{
    const GpuSpec& gpu = s.cluster.gpu;
    KernelModel k;
    k.fp8 = s.training.precision == Precision::FP8 && gpu.fp8_tflops > 0;
    k.recipe = resolvedFp8Recipe(s.training);
    if (k.fp8 && s.parallel.zero >= 3 && fsdpFloat8AllGather(s.training))
        k.weight_gather =
            double(std::max(1, s.parallel.shardGroup())) * double(std::max(1, s.parallel.cp));
    k.peak_bf16 = gpu.bf16_tflops * kFlopsPerTflop;
    k.peak_lin = k.fp8 ? gpu.fp8_tflops * kFlopsPerTflop : k.peak_bf16;
    if (kc.gemm_efficiency > 0) {
        k.eff_bf16 = k.eff_lin = kc.gemm_efficiency;
    } else {
        const FamilyEfficiency& family = gpuTraits(gpu.name).family;
        k.eff_bf16 = family.bf16Share(gpu.bf16_tflops);
        k.eff_lin = k.fp8 ? family.fp8_share * k.eff_bf16 : k.eff_bf16;
    }
    if (k.fp8 && (k.recipe == Fp8Recipe::Rowwise || k.recipe == Fp8Recipe::RowwiseGwHp))
        k.eff_lin *= kRowwiseGemmRateShare;
    k.attn_ratio = kc.attention_efficiency_ratio;
    k.half = kc.gemm_half_size;
    k.tile_half = kc.gemm_tile_half_outputs;
    k.latency = kc.gemm_latency_seconds;
    const double ref = kGemmReferenceSide;
    k.inv_reference_shape = (ref + k.half) * (ref * ref + k.tile_half) / (ref * ref * ref);
    double hbm = gpu.hbm_gbps * kBytesPerGB * kc.hbm_efficiency;
    if (measured)
        if (auto g = measured->hbmGbps())
            hbm = *g * kBytesPerGB;
    k.hbm = hbm > 0 ? hbm : kFallbackHbmBytesPerSecond;
    k.sms = streamingMultiprocessors(gpu);
    k.measured = measured;
    return k;
}

namespace {

// Forward seconds Megatron's selective recompute repeats in the backward, module by module
// (TrainingSettings::recompute_modules): the attention core; the norms that are modules of
// their own (MLA's input norm, an MoE layer's pre-MLP norm; each reads and writes h bf16
// elements); MLA's up-projection GEMMs; a dense layer's MLP, or the whole MoE layer, or its
// routed experts' activation and its shared experts. Layer-level forward parts from
// layerTimes(); RoPE and FP8 casts inside a module are left out.
double moduleRecomputeSeconds(const ModelSpec& m, const Dims& d, const KernelModel& k,
                              const TrainingSettings& tr, bool moeLayer, double mlaUp,
                              const FfnForward& ff, const LayerTimes& lt)
{
    if (tr.recompute_modules == kRecomputeCoreAttn) // the default, on the search's hot path
        return lt.core.f;
    double rec = 0;
    if (tr.recomputes(kRecomputeCoreAttn))
        rec += lt.core.f;
    if (tr.recomputes(kRecomputeLayernorm)) {
        const double norms = (m.isMla() ? 1.0 : 0.0) + (moeLayer ? 1.0 : 0.0);
        rec += k.stream(2 * 2 * d.tokens * d.h / d.tsp * norms);
    }
    if (tr.recomputes(kRecomputeMlaUpProj))
        rec += mlaUp;
    if (!moeLayer) {
        if (tr.recomputes(kRecomputeMlp))
            rec += ff.gemm + k.stream(2 * d.tokens * ff.act);
        return rec;
    }
    if (tr.recomputes(kRecomputeMoe))
        return rec + ff.gemm + k.stream(2 * d.tokens * ff.elements());
    if (tr.recomputes(kRecomputeMoeAct))
        rec += k.stream(2 * d.tokens * ff.act);
    if (tr.recomputes(kRecomputeSharedExperts))
        rec += ff.shared_gemm + k.stream(2 * d.tokens * ff.shared_act);
    return rec;
}

// torchtitan's per-op SAC counts matmuls afresh in each checkpointed block call (the policy's
// counter dict is made by the context_fn that torch.utils.checkpoint calls per forward;
// parallelize_llama.py at 9dec370 and 820504e, infra/parallelize.py at 6fc499f6) and saves the
// odd ones: of q, k, v, o, w1, w3, w2 it saves Q, V, w1 and w2 (memory.cpp opSacLayerBytes)
// and replays the rest of the forward in backward: K, O and the MLP's other matmul (w3, or a
// plain MLP's fc2), every cast and element-wise op. Dense, non-MLA layers; an MoE or MLA layer
// repeats half its matmuls (no measured run fixes their order).
double opSacRecomputeSeconds(const ModelSpec& m, const Dims& d, const KernelModel& k, bool moeLayer,
                             const LayerTimes& lt, double elem)
{
    if (moeLayer || m.isMla())
        return 0.5 * lt.linear_f + elem;
    const double ffn = double(m.ffn_hidden) / d.t;
    const double qkv = k.gemm(d.tokens, d.h, (d.q + 2 * d.kv) / d.t, true);
    double saved = qkv * (d.q + d.kv) / (d.q + 2 * d.kv) + k.gemm(d.tokens, d.h, ffn, true);
    if (m.gated_mlp)
        saved += k.gemm(d.tokens, ffn, d.h, true);
    return std::max(0.0, lt.linear_f - saved) + elem;
}

} // namespace

LayerTimes layerTimes(const ModelSpec& m, const Dims& d, const KernelModel& k,
                      const ParallelPlan& pl, const TrainingSettings& tr, const ModelConstants& kc,
                      const AttentionSetup& a, bool moe)
{
    LayerTimes lt;
    const double g = fp8GatherDegree(d, k, pl, tr);
    // Attention projections.
    double mlaUp = 0;
    if (m.isMla())
        mlaUp = addMlaProjections(m, d, k, lt);
    else
        k.linear(d.tokens, d.h, (d.q + 2 * d.kv) / d.t, 1, lt.f, lt.b, lt.w, true, g);
    k.linear(d.tokens, d.o / d.t, d.h, 1, lt.f, lt.b, lt.w, true, 1, g);
    lt.core = attentionTimes(d, k, tr, kc, a);
    const FfnForward ff = addFeedForward(m, d, k, moe, moe ? moeLoadImbalance(tr, kc) : 1.0, g, lt);
    const double elemFfn = ff.elements();
    lt.linear_f = lt.f;
    lt.linear_bw = lt.b + lt.w;
    if (pl.tp > 1 && pl.tp_comm_overlap && pl.sequence_parallel) {
        lt.tp_gemm = tpGemmSeconds(m, d, k, tr);
        // An MoE layer's MLP runs the dispatcher's collectives, not the fused TP ones: its
        // GEMMs are not split (the dense layer's split times price the dense layers only).
        if (!(moe && m.isMoe())) {
            lt.f += lt.tp_gemm.split_f;
            lt.b += lt.tp_gemm.split_b;
        }
    }
    lt.f += lt.core.f;
    lt.b += lt.core.b;
    // Element-wise traffic (norms, residuals, RoPE, activation function), 2-byte elements.
    const double elem = k.stream(2 * d.tokens * elementwiseElements(m, d, tr, kc, elemFfn, moe));
    lt.f += elem;
    lt.b += 2 * elem;
    const double relayout = k.stream(2 * d.tokens * sequenceRelayoutElements(d, pl, tr));
    lt.f += relayout;
    lt.b += relayout;
    if (tr.recompute == Recompute::Full)
        lt.recompute = lt.f;
    else if (opLevelCheckpointing(tr))
        lt.recompute = opSacRecomputeSeconds(m, d, k, moe && m.isMoe(), lt, elem);
    else if (tr.recompute == Recompute::Selective)
        lt.recompute = moduleRecomputeSeconds(m, d, k, tr, moe && m.isMoe(), mlaUp, ff, lt);
    lt.b += lt.recompute;
    addLaunches(m, pl, tr, kc, moe, lt);
    return lt;
}

StageTimes headTimes(const Dims& d, const KernelModel& k, std::int64_t vocab_pad,
                     const FrameworkConventions& fw)
{
    StageTimes t;
    k.linear(d.tokens, d.h, double(vocab_pad) / d.t, 1, t.forward_seconds, t.backward_seconds,
             t.weight_seconds, false);
    const double logits = d.tokens * double(vocab_pad) / d.t;
    t.forward_seconds += k.stream(fw.loss_bytes_forward * logits);
    t.backward_seconds += k.stream(fw.loss_bytes_backward * logits);
    return t;
}

double logitMetricSeconds(const Dims& d, const KernelModel& k, std::int64_t vocab_pad, int metrics)
{
    if (metrics <= 0)
        return 0;
    return k.stream(kLogitMetricBytes * metrics * d.tokens * double(vocab_pad) / d.t);
}

StageTimes mtpProjectionTimes(const Dims& d, const KernelModel& k)
{
    StageTimes t;
    k.linear(d.tokens, 2 * d.h, d.h / d.t, 1, t.forward_seconds, t.backward_seconds,
             t.weight_seconds);
    // Two norms of h and the concatenation of 2h elements, each read and written in bf16.
    const double elem = k.stream(2 * 2 * d.tokens * (2 * d.h + 2 * d.h) / d.tsp);
    t.forward_seconds += elem;
    t.backward_seconds += 2 * elem;
    return t;
}

} // namespace paralens
