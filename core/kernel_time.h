// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/cluster_spec.h"
#include "core/collective.h"
#include "core/constants.h"
#include "core/dims.h"
#include "core/framework.h"
#include "core/pipeline_cost.h"
#include "core/scenario.h"

#include <algorithm>
#include <cstdint>

namespace paralens {

/// Achievable fraction of the dense peak for an 8192³ GEMM (other shapes scale by
/// ModelConstants::gemm_half_size's shape factor) when no calibration profile says otherwise (🔢
/// from public cuBLAS / hipBLASLt figures: A100 ≈ 0.75 of 312 TF, H100/H200 ≈ 0.70 of the BF16
/// peak; B200/GB200/B300 0.66 and MI300X 0.46, H100's share scaled by measured GEMM rates on the
/// same shapes (OpenXLA's matmul table; SemiAnalysis' Dec 2024 GEMM benchmark); FP8 GEMMs reach
/// 0.9 of that share of the FP8 peak, 0.8 on MI300X). Matched on the GPU name; 0.70 for any
/// other GPU.
double defaultGemmEfficiency(const GpuSpec& gpu, bool fp8);

/// Streaming multiprocessors (compute units on AMD) of the GPU, matched on its name like
/// defaultGemmEfficiency(): A100 108, H100 PCIe 114, other Hopper parts 132, B200 / GB200 /
/// B300 148, MI300X 304; 132 for any other GPU (sources in kernel_time.cpp).
double streamingMultiprocessors(const GpuSpec& gpu);

/// Roofline time of one kernel: max(flops / (peak · efficiency), bytes / (hbm · hbm_efficiency)).
double rooflineSeconds(double flops, double peak_flops_per_s, double efficiency, double bytes,
                       double hbm_bytes_per_s);

/// The kernel model of one GPU: peaks, efficiencies and the optional measured profile.
struct KernelModel
{
    double peak_lin = 0;            ///< FLOP/s for linear layers (FP8 peak when training in FP8)
    double peak_bf16 = 0;           ///< FLOP/s for attention and the LM head
    double eff_lin = 0;             ///< GEMM efficiency of linear layers
    double eff_bf16 = 0;            ///< GEMM efficiency in BF16
    double attn_ratio = 0;          ///< flash attention's share of eff_bf16
    double half = 0;                ///< ModelConstants::gemm_half_size
    double tile_half = 0;           ///< ModelConstants::gemm_tile_half_outputs
    double latency = 0;             ///< ModelConstants::gemm_latency_seconds
    double inv_reference_shape = 1; ///< 1 / the shape factor of an 8192³ GEMM, where eff applies
    double hbm = 0;                 ///< achievable bytes/s, > 0
    double sms = 0;                 ///< streamingMultiprocessors() of the GPU
    bool fp8 = false;
    Fp8Recipe recipe = Fp8Recipe::Delayed; ///< resolved (never Default) when fp8
    /// FSDP shards over which torchao gathers the weights in float8 (fsdpFloat8AllGather());
    /// 1 = the weights arrive in bf16 and each linear casts its own.
    double weight_gather = 1;
    const MeasuredPerformance* measured = nullptr;

    /// Seconds of one GEMM of M×K by K×N: roofline at the profile's efficiency for that shape,
    /// or the default shrunk for shallow and small shapes, eff · K / (K + half) · M·N / (M·N +
    /// tile_half), plus the kernel's fixed latency.
    double gemm(double M, double K, double N, bool linear) const
    {
        if (M <= 0 || K <= 0 || N <= 0)
            return 0;
        const bool f8 = linear && fp8;
        const double peak = f8 ? peak_lin : peak_bf16;
        const double outputs = M * N;
        // 1-byte FP8 or 2-byte inputs, 2-byte output.
        const double bytes = (f8 ? 1.0 : 2.0) * (M * K + K * N) + 2.0 * outputs;
        if (measured)
            if (auto e = measured->gemmEfficiency(M, N, K, f8))
                return rooflineSeconds(2 * M * K * N, peak, *e, bytes, hbm);
        // 2·M·K·N / (peak · eff) with the shape law's eff folded in: M·K·N cancels, leaving one
        // division (this runs a dozen times per layer per evaluation).
        const double rate = peak * (f8 ? eff_lin : eff_bf16) * inv_reference_shape;
        const double compute = rate > 0 ? 2 * (K + half) * (outputs + tile_half) / rate : 0.0;
        const double memory = hbm > 0 ? bytes / hbm : 0.0;
        return std::max(compute, memory) + latency;
    }
    /// Adds `count` times the forward, input-gradient and weight-gradient times of
    /// Y[M×N] = X[M×K]·W[K×N] to f, b and w. In FP8 training (`fp8_ok` and the model's fp8) it
    /// also adds the casts FP8 GEMMs need (fp8CastBytes()); `fp8_ok` false keeps a layer in BF16
    /// (the LM head: Megatron-Core and torchao's float8 skip the output layer).
    /// `in_gather` > 1: the input is cast to FP8 on its sequence shard, 1/in_gather of its rows,
    /// before an FP8 all-gather (torchao Float8ColwiseParallel with tensorwise scaling);
    /// `grad_gather` likewise for the output gradient (Float8RowwiseParallel).
    void linear(double M, double K, double N, double count, double& f, double& b, double& w,
                bool fp8_ok = true, double in_gather = 1, double grad_gather = 1) const;
    /// Seconds to stream `bytes` through HBM.
    double stream(double bytes) const { return bytes / hbm; }
};

/// The kernel model for the scenario's GPU and precision: the constants' GEMM efficiency or
/// the per-GPU default, the measured HBM bandwidth when the profile has one.
KernelModel kernelModel(const Scenario& s, const ModelConstants& k,
                        const MeasuredPerformance* measured);

/// Bytes the FP8 casts of one linear Y[M×N] = X[M×K]·W[K×N] stream, forward and backward, per
/// recipe (docs/model.md "FP8 recipes"); bytes per element of X, W and the output gradient dY:
/// - delayed (TE DelayedScaling, scales from the amax history, fused cast-transpose): X and W
///   cast in forward (read 2, write 1), their transposed FP8 copies written in backward (1);
///   dY cast in backward (3).
/// - tensorwise (torchao roofline_utils.py get_tensor_memory_traffic_ovhd_s): an amax pass
///   (read 2) and a cast that writes both layouts (read 2, write 1 + 1): X 6 forward, dY 6
///   backward; W 2 + 3 forward, 3 backward.
/// - rowwise (same source): X and dY 8 (a cast along rows that also writes the bf16 transpose,
///   read 2 + write 1 + 2, then the cast along columns, 3), X's 3 forward and 5 backward; W 3
///   forward, 4 + 3 backward.
/// - rowwise_with_gw_hp: one rowwise cast each of X and dY (3), W 3 forward and 3 backward;
///   the weight-gradient GEMM runs in BF16 on the bf16 tensors.
/// - mxfp8: two casts per tensor, one per layout (3 + 3).
/// `in_gather` / `grad_gather` > 1 (tensorwise only): X (dY) is cast on a 1/g shard (amax 2 +
/// cast 3 bytes per shard element) and only its transposed copy made from the gathered FP8
/// tensor (read 1, write 1). `weight_gather` > 1 (tensorwise, FSDP's float8 all-gather): W is
/// cast on its 1/g shard before the gather (fp32 read 4, write 1) and the backward makes only
/// its transposed copy (read 1, write 1; torchao float8/fsdp_utils.py).
struct Fp8CastBytes
{
    double forward = 0;
    double backward = 0;
};
Fp8CastBytes fp8CastBytes(double M, double K, double N, Fp8Recipe recipe = Fp8Recipe::Delayed,
                          double in_gather = 1, double grad_gather = 1, double weight_gather = 1);

/// torchtitan's selective ("op") activation checkpointing (training.recompute selective under
/// the FSDP framework): kernel_time.cpp says what it saves.
bool opLevelCheckpointing(const TrainingSettings& tr);

/// Per-micro-batch seconds of the GEMMs TP collectives can be fused with (AsyncTP's
/// micro-pipelining, torch/_inductor/fx_passes/micro_pipeline_tp.py): the forward GEMMs of the
/// attention input projections (q, k, v), the attention output projection, the MLP input
/// projections (w1, w3) and the MLP output projection, and the input-gradient GEMMs of the two
/// output projections; `rs_sum`: one fused reduce-scatter's reduction of its TP partial sums.
///
/// The GEMMs run as the overlap runs them: split into chunks (one per TP rank for AsyncTP and
/// TransformerEngine's ring exchange, kUbPipelineSplits for TE's pipelined reduce-scatter; each
/// chunk a GEMM of its own shape and start) and, under TE's pipeline and bulk overlaps, on the
/// SMs its communication leaves (kUbCommSms). `split_f` / `split_b` are what that adds to the
/// layer's forward and backward over the whole GEMMs.
struct TpGemmSeconds
{
    double qkv_f = 0, o_f = 0, up_f = 0, down_f = 0;
    double o_dgrad = 0, down_dgrad = 0;
    double rs_sum = 0;
    /// TransformerEngine's bulk overlaps: the input projections' input-gradient GEMMs (beside
    /// the input re-gathers) and weight-gradient GEMMs (beside the reduce-scatters).
    double qkv_dgrad = 0, up_dgrad = 0, qkv_wgrad = 0, up_wgrad = 0;
    double split_f = 0, split_b = 0;
};

/// The dense layer's GEMMs that TP collectives fuse with, as the overlap runs them: AsyncTP's
/// under FSDP, TransformerEngine's userbuffers (default configuration) otherwise.
TpGemmSeconds tpGemmSeconds(const ModelSpec& m, const Dims& d, const KernelModel& k,
                            const TrainingSettings& tr);

/// Kernels one layer launches per micro-batch in forward (see kernel_time.cpp for the count).
double forwardKernelsPerLayer(const ModelSpec& m, const ParallelPlan& pl,
                              const TrainingSettings& tr, bool moe);
/// PyTorch operator calls the host makes for one layer's forward per micro-batch: the kernels
/// of forwardKernelsPerLayer() and the calls that launch none (views, transposes, the RNG
/// tracker's state swaps; see kernel_time.cpp for the count). Each costs the host about
/// ModelConstants::kernel_launch_seconds.
double forwardHostOpsPerLayer(const ModelSpec& m, const ParallelPlan& pl,
                              const TrainingSettings& tr, bool moe);
/// How the attention core runs for a scenario, resolved once per evaluation.
struct AttentionSetup
{
    /// The forward kernel's rate over cuDNN fused attention's (training.attention_kernel):
    /// kFa2OnHopperShare for FlashAttention-2 on Hopper, else 1; Triton's FlashAttention runs
    /// FlashAttention-2's over kTritonForwardSlowdown.
    double kernel_share = 1;
    /// The backward kernel's rate over cuDNN's: kernel_share, but FlashAttention-2's over
    /// kTritonBackwardSlowdown for Triton.
    double backward_share = 1;
    CpComm comm = CpComm::P2P; ///< parallel.cp_comm with "default" resolved by the framework
    CpConventions cp;          ///< the framework's CP implementation
    /// cp > 1 with flash attention computed one block per K/V chunk, merged by LSE rescale
    /// (a p2p ring, or PyTorch's ring attention over all-gathered K/V).
    bool ring = false;
    /// The backward recomputes the attention forward, CP exchange included: full recompute, or
    /// Megatron's selective one (torchtitan's op-level selective checkpointing saves it).
    bool recomputed = false;
    /// Every CP exchange is exposed: a compiled ring (CpConventions::compiled_exchange_exposed
    /// under training.compile).
    bool exchange_exposed = false;
};

/// The attention setup of a scenario under its framework's conventions.
AttentionSetup attentionSetup(const Scenario& s, const FrameworkConventions& fw);

/// Seconds of one layer's attention core for one micro-batch on one GPU. With a CP ring the
/// rank computes its own queries on its own K/V chunk (causal, `first_*`), then cp − 1 blocks of
/// its queries on half a remote chunk (non-causal, load-balanced; `step_*` includes the merge
/// of the partial result). Without a ring, `first_*` is the whole core.
struct AttentionTimes
{
    double f = 0, b = 0;             ///< the whole core, forward and backward
    double first_f = 0, first_b = 0; ///< the block on the rank's own chunk
    double step_f = 0, step_b = 0;   ///< each block on a remote chunk (0 without a ring)
};

/// Per-micro-batch kernel times of one layer on one GPU, split the way the pipeline needs.
struct LayerTimes
{
    double f = 0;         ///< forward
    double b = 0;         ///< input gradients (+ recomputation)
    double w = 0;         ///< weight gradients
    AttentionTimes core;  ///< attention core (CP overlap, selective recompute)
    double recompute = 0; ///< the recomputed part of b
    double launch = 0;    ///< kernel-launch seconds included in f and b
    /// Host seconds to issue the forward and the backward (+ recomputation) of the layer:
    /// eager PyTorch cannot finish a pass before its host has issued it (docs/formulas.md §2.4).
    double host_f = 0, host_b = 0;
    double linear_f = 0;   ///< the linear layers' GEMMs in f (what TP overlap hides under)
    double linear_bw = 0;  ///< the linear layers' GEMMs in b and w
    TpGemmSeconds tp_gemm; ///< the GEMMs TP collectives can be fused with (tp > 1 only)
};

/// The attention core: flash kernels at the efficiency of their block shape (docs/formulas.md
/// §2.5), backward kFlashBackwardFlopsFactor / kFlashBackwardRateShare forwards; or batched
/// GEMMs plus the score traffic without flash attention, backward twice the forward.
AttentionTimes attentionTimes(const Dims& d, const KernelModel& k, const TrainingSettings& tr,
                              const ModelConstants& kc, const AttentionSetup& a);

/// Kernel times of one dense layer (`moe` false) or MoE layer: attention projections and core,
/// MLP or experts and router, element-wise traffic, and what recomputation repeats. The
/// backward of element-wise kernels costs twice their forward.
LayerTimes layerTimes(const ModelSpec& m, const Dims& d, const KernelModel& k,
                      const ParallelPlan& pl, const TrainingSettings& tr, const ModelConstants& kc,
                      const AttentionSetup& a, bool moe);

/// Kernel times of the LM head on the last stage for one micro-batch: its GEMM with the padded
/// vocabulary `vocab_pad` and the cross-entropy over fp32 logits.
StageTimes headTimes(const Dims& d, const KernelModel& k, std::int64_t vocab_pad,
                     const FrameworkConventions& fw);

/// Seconds of the metrics a training loop computes from one micro-batch's logits after its
/// backward (training.logit_metrics × kLogitMetricBytes per logit, the last stage's tokens ×
/// vocab_pad / t logits): streamed, no FLOPs to speak of.
double logitMetricSeconds(const Dims& d, const KernelModel& k, std::int64_t vocab_pad, int metrics);

/// Kernel times of what one multi-token-prediction module adds around its Transformer block for
/// one micro-batch (DeepSeek-V3 Technical Report §2.2, Fig. 3): the projection M_k,
/// Y[N × h/t] = [norm(h); norm(emb)][N × 2h] · W[2h × h/t], and the element-wise traffic of the
/// two RMSNorms (each reads and writes h bf16 elements per token) and of the concatenation (2h),
/// backward twice the forward. The block and the head pass are layerTimes() and headTimes().
StageTimes mtpProjectionTimes(const Dims& d, const KernelModel& k);

} // namespace paralens
