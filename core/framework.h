// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/plan.h"

namespace paralens {

/// How a framework places layers on pipeline stages when they do not divide evenly.
enum class LayerSplit
{
    ShortEnds,  ///< the shorter stages go to the first and last stage (embedding / loss), as
                ///< Llama 3 §3.3.2 does and Megatron's first/last-stage options allow
    ExtraFirst, ///< the first stages take one extra layer each (torch.distributed.pipelining)
    /// The first chunk takes the base count, the following chunks one extra each while extras
    /// last, the last chunk the rest (torchtitan's generate_split_points, Dec 2024).
    ExtraMiddle,
};

/// What a framework's "selective" recompute keeps for the backward.
enum class SelectivePolicy
{
    /// Megatron (Korthikanti et al. 2022 §4.2): everything but the attention core's score,
    /// softmax and dropout tensors, which are recomputed.
    AttentionCore,
    /// torchtitan's per-op SAC ("op"): the layer input, the outputs of every other matmul (the
    /// 1st, 3rd, 5th, 7th: Q, V, gate and down projections), the SDPA outputs and TP's
    /// reduce-scatter outputs are saved; every other tensor is recomputed in backward.
    SaveMatmuls,
};

/// How a framework runs context parallelism (docs/formulas.md §4, CP). Bytes of the partial
/// results are counted per element of the rank's attention output (forward) and of its dQ,
/// dK and dV (backward), once per block computed on a remote K/V chunk.
struct CpConventions
{
    CpComm comm = CpComm::P2P; ///< what parallel.cp_comm = "default" means
    /// GQA keys and values are repeated to every query head before the attention call, so CP
    /// moves and merges them at the query width (torchtitan's Llama calls repeat_kv first).
    bool kv_repeated = false;
    /// The K/V all-gather runs under the block on the rank's own chunk (pass-KV in PyTorch's
    /// ring attention) instead of before the attention (Transformer Engine, Llama 3).
    bool gather_under_first_block = false;
    /// The backward sends each block's dK/dV on after that block (PyTorch), so the last hop is
    /// exposed; Transformer Engine sends dK/dV with the next K/V chunk instead.
    bool dkv_trails = false;
    double dkv_bytes = 2;            ///< per dK/dV element on the wire (PyTorch: fp32)
    double merge_bytes_forward = 10; ///< LSE rescale of the partial outputs
    double merge_bytes_backward = 6; ///< accumulation of dQ, dK, dV
    /// Under torch.compile the ring attention is traced into the compiled layer, where each
    /// functional collective is waited for at once and Inductor keeps that order: no K/V or
    /// dK/dV transfer hides under a block (docs/model.md, "Context parallelism").
    bool compiled_exchange_exposed = false;
    /// The merge and accumulation bytes when Inductor fuses their element-wise chains.
    double compiled_merge_bytes_forward = 0;
    double compiled_merge_bytes_backward = 0;
    /// The backward holds the all-gathered K/V of the whole sequence and fp32 dQ, dK, dV
    /// accumulators beside the step's own gradients (memory.cpp ringBackwardBytes()).
    bool fp32_grad_accumulators = false;
};

/// One framework's conventions: the dtypes and buffers it keeps and what it overlaps. The
/// values of each framework, side by side, are in docs/model.md ("Framework conventions");
/// the formulas they feed in docs/formulas.md §3.1 and §4.
///
/// Sources: Megatron `docs/user-guide/features/dist_optimizer.md` (18 and 6 + 12/d bytes per
/// parameter); the ZeRO paper (16Ψ); DeepSpeed `runtime/zero/config.py` bucket defaults;
/// PyTorch FSDP docs. FSDP's sharded fp32 parameters double as master weights (16/N bytes
/// persistent); counting them as 2 + 2 + 12 gives the same total.
struct FrameworkConventions
{
    double weight_bytes = 2;      ///< per parameter, training copy
    double grad_bytes = 4;        ///< per parameter, gradient buffer
    double grad_reduce_bytes = 4; ///< per element on the wire for the DP gradient reduction
    double master_bytes = 4;      ///< fp32 master copy (part of the optimizer states)
    double moment_bytes = 8;      ///< Adam m + v (SGD momentum: 4)
    bool overlap_grad_reduce = true;
    bool overlap_param_gather = true;
    double reduce_bucket_elements = 0;    ///< extra reduce buffer (0 = none beyond the grads)
    double allgather_bucket_elements = 0; ///< extra all-gather buffer
    double zero3_live_layers = 2;         ///< gathered layers held at once under ZeRO-3 / FSDP
    double zero3_max_live_params = 0;     ///< cap on gathered parameters (0 = none)
    /// ZeRO-3 gathers each parameter tensor on its own (DeepSpeed's per-submodule fetch) rather
    /// than one flat unit per layer (FSDP, Megatron FSDP).
    bool zero3_per_tensor = false;
    /// Parameters prefetched ahead of compute (DeepSpeed stage3_prefetch_bucket_size 5e7); a
    /// tensor larger than this is fetched on demand and its gather is exposed. 0 = the next
    /// whole unit is prefetched (FSDP forward/backward prefetch).
    double zero3_prefetch_params = 0;
    LayerSplit split = LayerSplit::ShortEnds;
    /// The attention kernel is FlashAttention-2 (PyTorch SDPA's flash backend, the flash-attn
    /// package), which uses none of Hopper's wgmma/TMA nor Blackwell's tcgen05; Transformer
    /// Engine runs cuDNN's fused attention on Hopper and later.
    bool attention_fa2 = false;
    /// The attention is PyTorch SDPA, whose flash backend on ROCm is AOTriton's Triton kernels
    /// (the default of torch.backends.cuda.preferred_rocm_fa_library; Composable Kernel's only
    /// when asked for): priced as training.attention_kernel "triton" on AMD GPUs.
    bool attention_sdpa = false;
    CpConventions cp;

    // ---- FSDP2 (torch.distributed.fsdp.fully_shard) as torchtitan runs it ----
    /// The sharded fp32 parameter is the optimizer's master copy: there is no bf16 shard, the
    /// bf16 compute copy (weight_bytes) exists only unsharded. Persistent: master + grad +
    /// moments per parameter, all sharded under ZeRO-3.
    bool sharded_param_is_master = false;
    /// Bytes per element of a gradient as autograd makes it (the compute dtype), before any cast
    /// to the reduce dtype.
    double compute_grad_bytes = 2;
    /// Bytes per parameter of one gathered unit's gradients held while it is reduce-scattered
    /// under ZeRO-3 (Megatron: the fp32 main grads; FSDP2: the bf16 gradient and its fp32
    /// reduce-scatter input; DeepSpeed: none beyond its reduce bucket).
    double zero3_unit_grad_bytes = 4;
    /// The root unit (embedding, final norm, LM head) is not resharded after forward (FSDP2
    /// special-cases the root), and the LM head's gradient waits for the root's post-backward.
    bool zero3_root_unsharded = false;
    /// The last layer unit is not resharded after forward either: torchtitan's apply_fsdp sets
    /// reshard_after_forward False for it, as FSDP would prefetch it again at once. FSDP1
    /// reshards every unit but the root.
    bool zero3_last_layer_kept = false;
    /// A recomputed layer's forward gathers its parameters again (DeepSpeed's module hooks); FSDP2
    /// gathers once in pre-backward and runs the recompute inside that unit.
    bool zero3_regather_for_recompute = true;
    /// ZeRO-3 frees a unit's gathered parameters after its forward (FSDP2 reshard_after_forward);
    /// false keeps them until after its backward (one gather per micro-batch).
    bool zero3_reshard_after_forward = true;
    /// What of a ZeRO-3 backward's collectives its compute hides (training.fsdp_backward_prefetch):
    /// the next unit's gather (prefetched before the current gradients) and the reduce-scatters
    /// (run under the next unit's gradients).
    bool zero3_backward_gather_hidden = true;
    bool zero3_backward_reduce_hidden = true;
    /// ZeRO-2/3 under PP: the stage's parameters stay gathered after each backward and its
    /// gradients accumulate unsharded (in the reduce dtype) across micro-batches, reduce-scattered
    /// once after the last backward (torch.distributed.pipelining with FSDP:
    /// reshard_after_backward and gradient sync off until the last micro-batch).
    bool zero3_accumulate_unsharded = false;
    /// HBM bytes per parameter element that the compute stream copies around a ZeRO-3 / FSDP
    /// collective (0: the collective works in the framework's own buffers). Gather: FSDP2 copies
    /// each all-gather output into the unit's unsharded parameters (foreach_all_gather_copy_out,
    /// split_with_sizes_copy: read and write each bf16 element, 2 + 2). Reduce: it copies the
    /// unit's bf16 gradients into the fp32 reduce-scatter input (foreach_reduce_scatter_copy_in,
    /// torch.cat with the cast: read 2, write 4) and waits for it before the next unit's
    /// gradients (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py, torch 2.4-2.7).
    /// FSDP1 (training.fsdp_version 1) gathers straight into its flat parameter, whose views
    /// the layers use: no gather copy; its reduce costs fsdp1ReduceCopyBytes().
    double zero3_gather_copy_bytes = 0;
    double zero3_reduce_copy_bytes = 0;
    /// ZeRO-2 as PyTorch FSDP's SHARD_GRAD_OP runs it: FULL_SHARD without the reshard after
    /// forward, gathered and reduce-scattered unit by unit in every micro-batch (false: one
    /// gather after the optimizer step, DeepSpeed's and Megatron's ZeRO-2).
    bool zero2_per_unit = false;
    /// HBM bytes per local parameter, and host calls per parameter tensor, of a pass that runs
    /// after every micro-batch's backward (0: none): DeepSpeed's BF16_Optimizer adds each bf16
    /// gradient into its fp32 copy (bf16_optimizer.py _update_hp_grad: lp.grad.to(fp32) reads
    /// 2 and writes 4 bytes, hp_grad.add_ reads 4 + 4 and writes 4 = 18; to, view and add_ per
    /// tensor), called from every backward (engine.py backward, pipe/engine.py
    /// _exec_backward_pass), which clears the bf16 gradients before each one.
    double microbatch_grad_pass_bytes = 0;
    double microbatch_grad_pass_calls = 0;
    /// torch.distributed.pipelining keeps each in-flight micro-batch's stage output for its
    /// backward and allocates receive buffers (activations in, gradients back) for every
    /// micro-batch of every local stage up front (PipelineStage _prepare_forward_infra /
    /// _prepare_backward_infra); Megatron frees sent outputs and receives into fresh tensors.
    bool pp_buffers_per_microbatch = false;
    /// What selective recompute keeps.
    SelectivePolicy selective = SelectivePolicy::AttentionCore;
    /// With sequence parallelism the column-parallel linears save their all-gathered (replicated)
    /// input rather than the shard (DTensor TP in eager mode; Megatron saves the shard and
    /// gathers again in backward).
    bool tp_saves_gathered_input = false;
    /// FP8 training: each linear saves its input for the weight-gradient GEMM quantized, 1 byte
    /// an element (Transformer Engine: Linear keeps the FP8 inputmat, LayerNormLinear its FP8
    /// ln_out, GroupedLinear its FP8 inputs; linear.py / layernorm_linear.py forward, TE 1.x
    /// and 2.x). torchao's Float8Linear saves the bf16 input and casts again in backward
    /// (float8_linear.py matmul_with_hp_or_float8_args: save_for_backward(input_hp, ...)).
    /// Set by conventions(TrainingSettings, ...) only for FP8 runs of a TE framework.
    bool fp8_saves_quantized_inputs = false;
    /// Megatron-Core with a non-delayed FP8 recipe (current scaling, MXFP8, blockwise): the
    /// out-projection and the shared experts' fc1 save the bf16 input another op already holds
    /// (the fused attention's output, the router's input) instead of an FP8 copy of it
    /// (transformer/attention.py and moe/shared_experts.py pass the original input when
    /// fp8_recipe != 'delayed'; Megatron-LM d98e8a64). Set by conventions(TrainingSettings, ...).
    bool fp8_reuses_held_inputs = false;
    /// The MoE combine keeps the k expert outputs per token for the router probabilities'
    /// gradient (the probabilities multiply the outputs in the unpermute): DeepSpeed and
    /// torchtitan, and Megatron-Core up to v0.12 (token_dispatcher.py unpermute(...,
    /// probs=self.probs)). Megatron-Core since v0.13 multiplies them inside the experts'
    /// activation (fused_bias_swiglu.py WeightedSwiGLUFunction) and unpermutes without them, so
    /// the combine keeps index maps only (token_dispatcher.py, TE permutation.py moe_unpermute).
    bool moe_combine_keeps_outputs = true;
    /// Megatron in FP8: Transformer Engine holds quantized copies of the linear weights. With
    /// bf16 weights it quantizes each once per step into a cached workspace, kept across
    /// micro-batches (module base.py get_weight_workspace with cache_name "weight" when
    /// is_first_microbatch is not None, as Megatron-Core's TE wrappers pass it); FP8 parameters
    /// (fp8_params) are those quantized tensors themselves. Bytes: fp8WeightExtraBytes().
    bool fp8_quantized_weights = false;
    /// FP8 parameters (training.fp8_param_gather): the quantized weights replace the bf16 ones.
    bool fp8_params = false;
    /// Bytes per element a ZeRO parameter all-gather moves for the layers' linear weights:
    /// weight_bytes, or 1 when they are FP8 parameters (Megatron's distributed optimizer gathers
    /// them in FP8). Embedding, LM head and norms stay at weight_bytes.
    double linear_gather_bytes = 2;
    /// fp32 copies of the logits alive at the loss's backward peak (one of them is the stored
    /// log-probabilities). Megatron's fused vocab-parallel cross entropy: the fp32 softmax it
    /// stores and turns into the gradient, plus that gradient; torchtitan's cross_entropy on
    /// pred.float(): the log-probabilities, the NLL gradient and the log-softmax gradient.
    double loss_logit_copies = 2;
    /// Further fp32 copies with TP's loss parallel (DTensor's decomposed log-softmax and its
    /// fused backward keep zeros_like, exp and their sum besides the log-probabilities).
    double loss_parallel_extra_copies = 0;
    /// Bytes the loss streams per logit, forward and backward, beyond the LM head GEMM's own bf16
    /// output (training.cross_entropy; crossEntropyBytes()).
    double loss_bytes_forward = 0;
    double loss_bytes_backward = 0;

    /// Optimizer-state bytes per parameter (master + moments), the ZeRO paper's K.
    double optimizerBytes() const { return master_bytes + moment_bytes; }
};

/// Bytes per logit a loss kernel streams (docs/formulas.md §2.6), counted pass by pass from each
/// implementation (bf16 logits in, fp32 work tensors):
/// - megatron (megatron/core/tensor_parallel/cross_entropy.py, VocabParallelCrossEntropy; the
///   same passes under --cross-entropy-loss-fusion's jit_fuser, which merges only the
///   all-reduces): forward .float() r2 w4, max r4, in-place subtract r4 w4, in-place exp r4 w4,
///   sum r4, in-place divide r4 w4 = 38; backward in-place multiply by the loss gradient r4 w4,
///   the cast back to bf16 r4 w2 = 14.
/// - eager (torch.nn.functional.cross_entropy on logits.float(); aten SoftMax.cu and
///   LossNLL.cu): forward .float() r2 w4, log_softmax's max, sum-of-exp and write passes r4 r4
///   r4 w4 = 22; backward nll_loss_backward's zero-filled gradient w4, log_softmax_backward's
///   sum and write passes r4 + r4 r4 w4, the cast back r4 w2 = 26.
/// - fused (flash-attn losses/cross_entropy.py, Triton): the forward kernel reads each bf16
///   logit once for its log-sum-exp (2); the backward kernel reads it again and writes its bf16
///   gradient (4).
struct LossBytes
{
    double forward = 0;
    double backward = 0;
};
LossBytes crossEntropyBytes(CrossEntropy kind);

/// The FP8 recipe a scenario runs: training.fp8_recipe, or the framework's default (Fp8Recipe).
Fp8Recipe resolvedFp8Recipe(const TrainingSettings& tr);

/// torchao's float8 all-gather under PyTorch FSDP (training.fp8_param_gather with FP8 and the
/// tensorwise recipe, torchtitan enable_fsdp_float8_all_gather): the layers' weights are cast to
/// float8 on their shards and gathered in it; rowwise recipes gather bf16. False outside FSDP.
bool fsdpFloat8AllGather(const TrainingSettings& t);

/// Bytes per linear weight element that FP8 weights add to a GPU's bf16 weights (negative when
/// FP8 parameters hold fewer): Transformer Engine's quantized copies, one per usage the GEMMs
/// need, rowwise for the forward and columnwise for the data gradient. Hopper and earlier run
/// FP8 GEMMs on one layout only, so the columnwise copy is a transposed one; Blackwell (B200,
/// B300, GB200) takes either layout, and a per-tensor FP8 weight serves both usages from one
/// copy; MXFP8 scales along rows and along columns apart, two copies anywhere (TE docs,
/// "Performance Considerations: Handling transposes"). A cache beside bf16 weights adds the
/// copies; FP8 parameters replace the bf16 weight with them. 0 outside Megatron FP8.
double fp8WeightExtraBytes(const FrameworkConventions& c, Fp8Recipe recipe, bool blackwell);

/// HBM bytes per gradient element that FSDP1's reduce path streams each backward around its
/// reduce-scatter: the split-backward cat into the flat gradient, the cast to the reduce dtype
/// and the in-place pre-divide (4 + 6 + 8 = 18 with bf16 compute and fp32 reduce).
double fsdp1ReduceCopyBytes(const FrameworkConventions& c);

/// The conventions for a framework and optimizer (precision changes no persistent dtype:
/// FP8 training keeps bf16 weights and fp32 master weights in all three frameworks).
FrameworkConventions conventions(Framework f, Optimizer o);

/// The conventions a scenario runs with: conventions(framework, optimizer) with its settings
/// applied (overlap_grad_reduce; FSDP's reshard policy, which under PP keeps the stage gathered).
FrameworkConventions conventions(const TrainingSettings& t, const ParallelPlan& p);

} // namespace paralens
