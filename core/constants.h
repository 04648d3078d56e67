// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/units.h"

namespace paralens {

// Units of the figures in specs and profiles: bandwidths in GB/s (10^9 B/s, as datasheets and
// nccl-tests print them), peaks in TFLOP/s (10^12 FLOP/s), latencies in microseconds.
inline constexpr double kBytesPerGB = 1e9;
inline constexpr double kFlopsPerTflop = 1e12;
inline constexpr double kSecondsPerMicrosecond = 1e-6;

// Guards, not model figures: validate() rejects a zero or negative bandwidth, but evaluate()
// must stay finite on a scenario it was not given (and a profile may measure 0). Each stands
// in for a missing figure with a modest one of the same kind.
/// HBM bandwidth when neither the datasheet nor a profile gives a positive one: 1 TB/s, below
/// every preset's (an A100 40GB streams 1.555 TB/s, NVIDIA A100 datasheet).
inline constexpr double kFallbackHbmBytesPerSecond = 1e12;
/// Scale-out bandwidth when the cluster gives none: 1 GB/s, about one 10 Gb/s Ethernet port.
inline constexpr double kFallbackScaleOutBytesPerSecond = 1e9;
/// Floor on the host link of an offloaded optimizer: 1 GB/s, about one PCIe 3.0 lane (8 GT/s
/// with 128b/130b encoding, PCI-SIG PCIe 3.0 specification).
inline constexpr double kMinPcieBytesPerSecond = 1e9;

// Flash-attention kernels (docs/formulas.md §2.5). Head dimension 128, the
// Llama / GPT-3 shape; BF16.
/// Backward FLOPs over forward FLOPs: five matmuls (Q·Kᵀ recomputed, dV, dP, dQ, dK) against
/// the forward's two (Dao 2023, FlashAttention-2 §4.1, the benchmark's FLOP count).
inline constexpr double kFlashBackwardFlopsFactor = 2.5;
/// Backward FLOP rate over the forward's with that count: FA2 322/370, cuDNN 516/595 and FA3
/// 561/648 TFLOP/s (non-causal, 16k, H100 SXM5; Shah et al. 2024, FlashAttention-3, Figs. 5
/// and 6) all give 0.87. So the backward takes 2.5 / 0.87 ≈ 2.9 forwards.
inline constexpr double kFlashBackwardRateShare = 0.87;
/// FlashAttention-2 on Hopper, which uses none of its wgmma/TMA instructions, against cuDNN's
/// fused attention there: 370/595 forward, 335/539 causal forward, 322/516 backward at 16k
/// (FlashAttention-3 Figs. 5 and 6) = 0.62 each.
inline constexpr double kFa2OnHopperShare = 0.62;
/// FlashAttention-2 on Blackwell (B200, GB200, B300), whose warp-level mma.sync path uses none of
/// its tcgen05/TMEM instructions, against cuDNN's fused attention there: FA2 runs 352–362
/// TFLOP/s forward on a B200 at 2k–8k keys (head dim 128, batch 8, 16 heads; meta-pytorch/
/// tritonbench#171, flash_v2), about its H100 rate, while cuDNN runs 1,428 at 1k (head dim 128,
/// non-causal; Dao-AILab/flash-attention#2605) and gains at longer rows: 352 / 1,428 ≈ 0.25,
/// forward and backward alike (FA2's B200 backward is 0.87–0.95 of its forward,
/// Dao-AILab/flash-attention#1589, as on Hopper).
inline constexpr double kFa2OnBlackwellShare = 0.25;
/// FlashAttention in Triton (training.attention_kernel "triton") against FlashAttention-2, same
/// GPU: "FlashAttention-2 is around 1.3-1.5× faster than FlashAttention in Triton in the forward
/// pass and around 2× faster in the backward pass" (Dao 2023, FlashAttention-2, arXiv:2307.08691
/// §4.1, Figs. 5 and 6, A100 80GB SXM4; §4 sums it up as "1.3-2.5× faster than FlashAttention in
/// Triton"). The forward takes the range's midpoint, 1.4, the backward 2. With the backward at
/// kFlashBackwardFlopsFactor / kFlashBackwardRateShare = 2.9 forwards, a forward and backward
/// together take (1.4 + 2 · 2.9) / 3.9 = 1.85 times as long. The paper measures A100 only; the
/// same ratios are applied on other GPUs, to FlashAttention-2's rate there.
inline constexpr double kTritonForwardSlowdown = 1.4;
inline constexpr double kTritonBackwardSlowdown = 2.0;
/// HBM bytes per logit of one metric that a training loop computes from the logits after the
/// backward (training.logit_metrics): Composer's LanguageCrossEntropy runs
/// torch.nn.CrossEntropyLoss on the bf16 logits under autocast and no_grad, the forward of
/// PyTorch's eager cross-entropy as docs/formulas.md §2.6 counts it: the fp32 cast r2 w4 and
/// log-softmax's max, sum-of-exp and write passes r4 + r4 + r4 w4 = 22 (composer/metrics/nlp.py
/// LanguageCrossEntropy.update, run from composer/trainer/trainer.py _eval_train_metrics after
/// every micro-batch's backward; aten SoftMax.cu).
inline constexpr double kLogitMetricBytes = 22;
/// Bytes of Adam's fp32 m and v per parameter, read and written once each by the step: the
/// 8 · 2 of ModelConstants::adam_bytes_per_param. With bf16 moments
/// (training.adam_moments_dtype) the step streams half of them.
inline constexpr double kAdamFp32MomentBytes = 8;
/// Keys per tile of the key sequence (FA2 and FA3 tile head dimension 128 by 128 keys).
inline constexpr double kFlashTileKeys = 128;
/// A row of K keys runs at K / (K + 64) of the long-sequence rate: the fixed work per query
/// tile (load Q, rescale and write O) is worth half a tile of keys. Fits FlashAttention-3
/// Fig. 5's non-causal FA2 and cuDNN points (0.84 at 512, 0.95 at 1k, 0.98 at 2k; model 0.89,
/// 0.94, 0.97).
inline constexpr double kFlashHalfRateKeys = 64;
/// A causal block whose rows span n tiles of keys runs at 0.92 · n / (n + 2) of the non-causal
/// rate: the mask costs 8 % on every tile, the half-masked diagonal tile about two tiles. Fits
/// FlashAttention-3 Fig. 5, causal over non-causal for FA2 and cuDNN, 512 to 16k keys (0.62 …
/// 0.91), within 5 %.
inline constexpr double kCausalMaskedShare = 0.92;
inline constexpr double kCausalDiagonalTiles = 2;

/// Bus bandwidth one NCCL CTA carries. NCCL "uses the minimal number of SMs to achieve the
/// performance of the platform. [...] If you are on DGX with 8 NICs and a top speed of 190 GB/s,
/// then it would use 16 SMs", one CTA per channel, and "NCCL CTAs won't share an SM with compute
/// kernels" (S. Jeaugey, NCCL maintainer, NVIDIA/nccl#689, 2023): 190 / 16 ≈ 11.9 GB/s per SM.
/// A DP collective beside compute holds its bus bandwidth over this of the GPU's SMs.
inline constexpr double kNcclBusBytesPerSm = 190e9 / 16;
/// At most this many: NCCL runs one CTA per channel and has at most MAXCHANNELS = 32 channels
/// (NCCL src/include/device.h).
inline constexpr double kNcclMaxCtas = 32;
/// TransformerEngine's userbuffers TP overlap (Megatron --tp-comm-overlap without a config:
/// transformer_engine/pytorch/module/base.py initialize_ub, its default ub_cfgs): the
/// all-gathers of qkv_fprop, fc1_fprop, proj_dgrad and fc2_dgrad are "ring_exchange" on copy
/// engines, their GEMM split into one chunk per TP rank (num_splits = tp_size); the
/// reduce-scatters of proj_fprop and fc2_fprop are "pipeline", the GEMM split into
/// num_splits = 4 chunks; the input re-gathers (qkv_dgrad, fc1_dgrad) and the input-gradient
/// reduce-scatters (qkv_wgrad, fc1_wgrad) are "bulk", beside the whole GEMM. Pipeline and bulk
/// run their communication on num_sm = 16 SMs with set_sm_margin, so the GEMM beside them gets
/// the GPU's SMs less 16 (CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET).
inline constexpr double kUbPipelineSplits = 4;
inline constexpr double kUbCommSms = 16;
// The optimizer step's operator calls and passes (docs/model.md "Optimizer step"), counted from
// PyTorch's torch/optim/adamw.py (_single_tensor_adamw, _multi_tensor_adamw, _fused_adamw) and
// sgd.py, and from the multi-tensor-apply kernels of PyTorch (aten/src/ATen/native/cuda/
// MultiTensorApply.cuh), apex and Transformer Engine (multi_tensor_apply.cuh), which DeepSpeed's
// and Megatron's FusedAdam use.
/// CUDA kernels AdamW launches per parameter tensor unfused (weight decay on, no amsgrad):
/// param.mul_(1 − lr·wd), exp_avg.lerp_(grad), exp_avg_sq.mul_(β2), exp_avg_sq.addcmul_(grad,
/// grad), sqrt, div_ by the bias correction, add_(eps), param.addcdiv_(exp_avg, denom) = 8, in
/// the for-loop and, one _foreach_ op each, in the foreach implementation.
inline constexpr double kAdamKernelsPerTensor = 8;
/// Host-only operator calls per tensor beside them: the step counter lives on the CPU unless fused
/// or capturable ("Deliberately host `step` on CPU ... kernel launches are costly on CUDA",
/// init_state_per_param). The foreach implementation increments it with _foreach_add_, which on
/// CPU tensors "will fall back to the slow path, which is a for-loop calling t.add(1)", and reads
/// it twice per tensor (_get_value(step), an .item(), for each bias correction): 3. The for-loop:
/// step_t += 1 and one _get_value: 2.
inline constexpr double kAdamForeachHostCallsPerTensor = 3;
inline constexpr double kAdamForLoopHostCallsPerTensor = 2;
/// SGD with momentum and weight decay, per tensor: grad.add(param, alpha=wd), buf.mul_(momentum),
/// buf.add_(grad), param.add_(buf, alpha=−lr) = 4 (_single_tensor_sgd; _multi_tensor_sgd runs the
/// same four as _foreach_ ops); no step counter.
inline constexpr double kSgdKernelsPerTensor = 4;
/// HBM bytes per parameter the eight unfused AdamW passes stream beyond the fused kernel's 28
/// (read p, g, m, v; write p, m, v), all fp32: mul_ r4 w4, lerp_ r8 w4, mul_ r4 w4, addcmul_ r8
/// w4, sqrt r4 w4, div_ r4 w4, add_ r4 w4, addcdiv_ r12 w4 = 80, so 52 more.
inline constexpr double kUnfusedAdamExtraBytesPerParam = 52;
/// A multi-tensor-apply launch covers at most 320 chunks of 65,536 elements (depth_to_max_blocks,
/// kChunkSize 2048·32) and, with Adam's four lists (g, p, m, v), at most 36 tensors
/// (depth_to_max_tensors[3]); it launches when either fills.
inline constexpr double kMultiTensorChunkElements = 65536;
inline constexpr double kMultiTensorChunksPerLaunch = 320;
inline constexpr double kMultiTensorAdamTensorsPerLaunch = 36;

/// Named terms that the papers do not pin down; every default says where it comes from
/// (a section of docs/formulas.md; 🟡 = peers' figures, 🔢 = our estimate). Pass a modified
/// copy to evaluate() to override any of them.
struct ModelConstants
{
    // ---- memory (docs/formulas.md §3.4) ----
    /// CUDA context, cuBLAS/cuDNN workspaces, kernels: 300–500 MB per peers (🟡); we take 0.5
    /// GiB.
    double cuda_context_bytes = 0.5 * units::kGiB;
    /// NCCL buffers per communicator the GPU belongs to (groups larger than 1); peers quote up to
    /// ~0.5 GB (🟡); NCCL's 4 MiB per channel and peer gives a few hundred MiB: 0.25 GiB.
    double nccl_bytes_per_group = 0.25 * units::kGiB;
    /// Temporaries and allocator slack as a share of the stored activations (Megatron's
    /// theoretical_memory_usage.py multiplies activations by 1.05).
    double activation_temporaries_fraction = 0.05;
    /// Megatron pads the vocabulary to a multiple of this times TP (--make-vocab-size-divisible-by,
    /// docs/formulas.md §1).
    int vocab_divisible_by = 128;

    // ---- kernels (🔢; a calibration profile replaces them) ----
    /// Achievable fraction of the dense peak for large GEMMs; 0 = per-hardware default
    /// (defaultGemmEfficiency()).
    double gemm_efficiency = 0;
    /// A long non-causal flash-attention forward reaches this share of the GEMM efficiency:
    /// cuDNN's fused attention runs 595 TFLOP/s at 16k (head dim 128, FlashAttention-3 Fig. 5)
    /// on an H100 SXM5 whose default GEMM efficiency is 0.70 of 989: 595 / 692 = 0.86. Causal
    /// masks, short key rows and FA2 on Hopper lower it (kCausalMaskedShare, ...).
    double attention_efficiency_ratio = 0.86;
    /// A GEMM of reduction depth K and M·N outputs runs at eff · K / (K + gemm_half_size) ·
    /// M·N / (M·N + gemm_tile_half_outputs) and takes gemm_latency_seconds more: a short K loop
    /// pays the tile pipeline's fill and epilogue, few output tiles leave SMs idle, and every
    /// kernel has a fixed start. Least-squares fit (log error, rms 4 %, worst 16 %) to the 81 BF16
    /// shapes with at least 4,096 rows of OpenXLA's measured H100 matmul table
    /// (xla/service/gpu/model/matmul_interpolator_data.h, kDefaultMatmulPTable "sm_90": b 1–4,
    /// m 256–4096, n and k 256–4096): 159 deep, 3.96e5 outputs, 5.45 µs. Only the shape's
    /// relative rate is taken; eff sets the level (the fit's large-shape limit, 0.88 of 989
    /// TFLOP/s, is a benchmark's and not a training run's). Applied on every GPU.
    double gemm_half_size = 159;
    double gemm_tile_half_outputs = 3.96e5;
    double gemm_latency_seconds = 5.45e-6;
    /// Achieved share of the datasheet HBM bandwidth for streaming kernels.
    double hbm_efficiency = 0.85;
    /// Elements of width h (÷ t with SP) that one layer's norm, residual and dropout kernels read
    /// and write per token in forward: two norms (read h, write h: 4), two residual adds (read
    /// 2h, write h: 6), two dropouts (read h, write h: 4) = 14 (🔢).
    double elementwise_hidden_elements = 14;
    /// Bytes streamed per attention-score element in forward without flash attention: the
    /// softmax writes 2 and reads 2, its mask 1, the dropout reads 2, writes 2 and its mask 1
    /// (🔢 from the stored tensors of Korthikanti et al. 2022 §4.1).
    double score_bytes_per_element = 10;

    // ---- network (docs/formulas.md §5) ----
    /// nccl-tests busbw over per-direction NVLink line rate (≈ 370/450 on H100, 240/300 on A100).
    double scale_up_efficiency = 0.80;
    /// Achieved over nominal per-NIC rate (≈ 46–49 GB/s of 50 on NDR 400G).
    double scale_out_efficiency = 0.92;
    /// Tokens on the busiest EP rank over the mean for a dropless router that is not forced to
    /// balance (Megatron-Core and torchtitan defaults); the scenario's
    /// training.moe_load_imbalance replaces it (🔢: no publication pins it; routers trained
    /// with an auxiliary loss or DeepSeek-V3's bias balancing (§2.1.2) stay near balance).
    double ep_load_imbalance = 1.2;
    /// Share of the SMs that EP dispatch / combine kernels hold while they run beside compute
    /// (DualPipe, Megatron-Core's EP overlap): DeepSeek-V3 §3.2.2 reserves 20 of the H800's 132
    /// SMs for them, and Megatron-Core gives DeepEP 20 SMs by default (moe_deepep_num_sms).
    /// Overlapped compute loses this share of the GPU for as long as the communication runs.
    double ep_comm_sm_share = 20.0 / 132.0;
    /// Share of the backward window under which a framework that overlaps the DP gradient
    /// reduction hides it (1 = all of it; bucketing and stream contention hide less). Fitted
    /// from measured runs (docs/fit.md); frameworks that do not overlap ignore it.
    double dp_overlap_fraction = 1.0;

    /// Elements of width h that eager PyTorch's RMSNorm streams per token in forward: it upcasts
    /// to fp32 and runs x.float(), pow, mean, x·rsqrt, type_as and ·weight as six kernels (read
    /// 2 + write 4, r4 w4, r4, r4 w4, r4 w2, r2 w2 bytes = 36 bytes = 18 two-byte elements;
    /// torchtitan models/norms.py RMSNorm, the default norm_type "rmsnorm").
    double eager_norm_elements = 18;
    /// Two-byte elements eager PyTorch's LayerNorm streams per token and h in forward: one native
    /// layer_norm kernel reads x (2 bytes) and writes y (2 bytes) in a single vectorized pass,
    /// plus two fp32 statistics per row, negligible (aten/src/ATen/native/cuda/
    /// layer_norm_kernel.cu, vectorized_layer_norm_kernel; llm-foundry's LPLayerNorm calls it in
    /// bf16). The fused path's norms stream the same (elementwise_hidden_elements).
    double eager_layernorm_elements = 2;
    /// Two-byte elements eager RoPE streams per q/k element in forward: float() (r2 w4), the
    /// complex multiply (r4 w4) and type_as (r4 w2) = 20 bytes (torchtitan apply_rotary_emb).
    double eager_rope_elements = 10;
    /// Two-byte elements eager SwiGLU streams per FFN element: silu (r2 w2) and the product with
    /// the up projection (r4 w2) = 10 bytes (torchtitan FeedForward: w2(silu(w1 x) · w3 x)).
    double eager_swiglu_elements = 5;

    // ---- host and kernel launches (docs/formulas.md §2.4) ----
    /// Seconds each kernel launch costs the step: the CPU side of a CUDA launch is 5–20 µs
    /// (Meta's Holistic Trace Analysis docs, "CUDA kernel launch statistics"); the midpoint.
    /// Megatron-LM, DeepSpeed and FSDP synchronise the host every micro-batch (p2p waits, loss
    /// scaling, FSDP's stream waits), so the launches of a layer are not hidden behind earlier
    /// kernels when those are short.
    /// The same figure is the host cost of any PyTorch operator call, kernel or not (views,
    /// transposes, RNG-state swaps, autograd nodes): a layer's pass takes at least its calls ×
    /// this (the eager dispatch floor, docs/formulas.md §2.4; calls counted from Megatron's
    /// megatron/model/transformer.py and its CheckpointFunction).
    double kernel_launch_seconds = 12.5e-6;

    // ---- fixed costs (0 until fitted to measured runs, docs/fit.md) ----
    /// Seconds per transformer layer per micro-batch (forward + backward, split 1 : 2) that no
    /// FLOP or byte explains: kernel launches, framework hooks.
    double layer_overhead_seconds = 0;
    /// Seconds per optimizer step that no FLOP or byte explains: gradient clipping, loss
    /// scaling, host synchronisation, logging.
    double step_overhead_seconds = 0;

    // ---- optimizer ----
    /// Bytes an Adam step streams per local parameter: fp32 master, m, v read+write, fp32 grad
    /// read, bf16 weight write (4·2 + 8·2 + 4 + 2 = 30, 🔢).
    double adam_bytes_per_param = 30;
    /// CPU Adam throughput per GPU's share of the host when the optimizer is offloaded (🔢).
    double cpu_adam_params_per_second = 1.0e9;

    // ---- pipeline (docs/formulas.md §6) ----
    /// Step time, bubble and in-flight micro-batches from the schedule simulator (the op order
    /// of the chosen schedule run with each stage's times; ~10 ns per op, so 5 µs to 1 ms for a
    /// new plan, repeats memoised). false = the closed forms (~50 ns): for screening millions of
    /// plans in a search, whose best plans are then re-evaluated with the simulator.
    bool simulate_pipeline = true;
};

// ---- launch configurations (docs/launch-config.md) ----
/// Megatron-LM's --hidden-dropout and --attention-dropout default (megatron/training/arguments.py,
/// core_v0.15.0), written when a scenario turns dropout on explicitly.
inline constexpr double kMegatronDefaultDropout = 0.1;
/// Placeholders for what a scenario does not hold but a launch line needs to start: the run
/// length and peak learning rate. Not model figures; the user sets their own. 3e-4 is the
/// Llama 3 8B peak rate (Dubey et al. 2024, arXiv:2407.21783 Table 3).
inline constexpr int kLaunchTrainIters = 1000;
inline constexpr double kLaunchPeakLr = 3e-4;
/// Megatron-LM's FP8 settings for training.precision fp8: the hybrid format (E4M3 forward,
/// E5M2 backward) with delayed scaling, --fp8-recipe's default (arguments.py, core_v0.15.0).
inline constexpr const char* kMegatronFp8Format = "hybrid";
inline constexpr const char* kMegatronFp8Recipe = "delayed";

} // namespace paralens
