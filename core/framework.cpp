// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/framework.h"

namespace paralens {

FrameworkConventions conventions(Framework f, Optimizer o)
{
    FrameworkConventions c;
    switch (f) {
    case Framework::Megatron:
        c.grad_bytes = 4; // fp32 main grads
        c.grad_reduce_bytes = 4;
        c.split = LayerSplit::ShortEnds;
        // Transformer Engine's ring (Megatron --cp-comm-type default "p2p"): K/V and dK/dV in
        // bf16 in one buffer per step; outputs rescaled into an fp32 accumulator (read the bf16
        // partial, read and write fp32: 10 B), gradients added in bf16 (6 B).
        c.cp = CpConventions{CpComm::P2P, false, false, false, 2, 10, 6};
        break;
    case Framework::DeepSpeed:
        c.grad_bytes = 2;
        c.grad_reduce_bytes = 2;
        c.reduce_bucket_elements = 5e8;
        c.allgather_bucket_elements = 5e8;
        c.zero3_max_live_params = 1e9; // stage3_max_live_parameters
        c.zero3_unit_grad_bytes = 0;   // gradients go through the reduce bucket
        c.zero3_per_tensor = true;
        c.zero3_prefetch_params = 5e7; // stage3_prefetch_bucket_size
        c.split = LayerSplit::ShortEnds;
        c.attention_fa2 = true; // the flash-attn package (Megatron-DeepSpeed --use-flash-attn-v2)
        // DeepSpeed-Ulysses (deepspeed.sequence.layer.DistributedAttention): all-to-alls.
        c.cp = CpConventions{CpComm::AllToAll, false, false, false, 2, 0, 0};
        break;
    case Framework::FSDP:
        // PyTorch SDPA tries its backends flash (FA2), efficient, math, cuDNN in that order,
        // and torchtitan's CP allows only the first two; on Blackwell torchtitan asks for
        // cuDNN first (attentionSetup()).
        c.attention_fa2 = true;
        c.attention_sdpa = true;
        // torchtitan (Dec 2024): context_parallel_rotate_method "allgather" over PyTorch's ring
        // attention (torch.distributed.tensor.experimental). The all-gather is waited for after
        // the local block; dK/dV ride a ring in fp32 after each block; the fp32 merge of
        // _SDPAMerger reads and writes per element: cast 6, difference 12, sigmoid product 8,
        // update 12 = 38 B; the backward adds dQ (10 B), dK and dV (21 B each, with the copies
        // that assemble the next send): 17 B per element of dQ, dK, dV.
        c.cp = CpConventions{CpComm::AllGather, true, true, true, 4, 38, 17};
        // torchtitan compiles each TransformerBlock with fullgraph=True (apply_compile), so the
        // ring attention is traced into it. Traced functional collectives wait at once
        // (torch/distributed/_functional_collectives.py _maybe_wrap_tensor: "if
        // _are_we_tracing(): return wait_tensor(self)") and Inductor does not move waits
        // (torch/_inductor/config.py reorder_for_compute_comm_overlap = False): the gather and
        // every dK/dV hop run exposed. Inductor fuses the merge's element-wise chain: read the
        // fp32 running output (4) and the bf16 block output (2), write fp32 (4) = 10 B per
        // element; the backward's accumulations read fp32 (4) and the bf16 block gradient (2)
        // and write fp32 (4) = 10 B per element of dQ, dK, dV.
        c.cp.compiled_exchange_exposed = true;
        c.cp.compiled_merge_bytes_forward = 10;
        c.cp.compiled_merge_bytes_backward = 10;
        // _templated_ring_attention_backward: convert_to_f32 accumulators (grad_query,
        // grad_key, grad_value in float32) and the all-gather rotater's whole-sequence K/V.
        c.cp.fp32_grad_accumulators = true;
        // torchtitan's FSDP2 mixed precision: param_dtype bf16, reduce_dtype fp32
        // (training.mixed_precision_param / _reduce defaults); sharded fp32 parameters and
        // their fp32 gradients are what the optimizer sees.
        c.sharded_param_is_master = true;
        c.grad_bytes = 4;
        c.grad_reduce_bytes = 4;
        c.zero3_unit_grad_bytes = c.compute_grad_bytes + c.grad_reduce_bytes;
        c.zero3_gather_copy_bytes = 2 * c.weight_bytes;
        c.zero3_reduce_copy_bytes = c.compute_grad_bytes + c.grad_reduce_bytes;
        c.zero3_root_unsharded = true;
        c.zero3_last_layer_kept = true;
        c.zero3_regather_for_recompute = false;
        c.selective = SelectivePolicy::SaveMatmuls;
        c.pp_buffers_per_microbatch = true;
        c.tp_saves_gathered_input = true;
        c.loss_logit_copies = 3;
        c.loss_parallel_extra_copies = 1;
        c.split = LayerSplit::ExtraMiddle;
        break;
    }
    // Megatron-DeepSpeed and Megatron-LM share VocabParallelCrossEntropy; torchtitan calls
    // torch.nn.functional.cross_entropy on pred.float() (components/loss.py).
    const LossBytes loss =
        crossEntropyBytes(f == Framework::FSDP ? CrossEntropy::Eager : CrossEntropy::Megatron);
    c.loss_bytes_forward = loss.forward;
    c.loss_bytes_backward = loss.backward;
    if (o == Optimizer::SGD)
        c.moment_bytes = 4; // momentum only
    return c;
}

} // namespace paralens

namespace paralens {

LossBytes crossEntropyBytes(CrossEntropy kind)
{
    switch (kind) {
    case CrossEntropy::Eager:
        return {22, 26};
    case CrossEntropy::Fused:
        return {2, 4};
    case CrossEntropy::Default:
    case CrossEntropy::Megatron:
        break;
    }
    return {38, 14};
}

// FSDP1 (FullyShardedDataParallel, torch 2.1-2.5) per element of a unit's gradients, each
// backward. Compute stream: the layers' gradients reach the flat parameter through the backward
// of the split that made their views (_use_unsharded_views; split_with_sizes' derivative is a
// cat: read and write the compute dtype). Post-backward stream (_post_backward_hook,
// _reduce_grad in torch/distributed/fsdp/_runtime_utils.py): the cast to the reduce dtype
// (flat_param.grad.to(reduce_dtype): read compute, write reduce) and the in-place pre-divide by
// the gradient_predivide_factor (> 1 from 2 ranks on: read and write reduce). The side stream's
// kernels are full grids that take SMs as the backward's kernels free them, so their streaming
// time adds to the GPU's.
double fsdp1ReduceCopyBytes(const FrameworkConventions& c)
{
    const double cat = 2 * c.compute_grad_bytes;
    const double cast = c.compute_grad_bytes == c.grad_reduce_bytes
                            ? 0.0
                            : c.compute_grad_bytes + c.grad_reduce_bytes;
    const double predivide = 2 * c.grad_reduce_bytes;
    return cat + cast + predivide;
}

namespace {

// training.grad_reduce_dtype: the bytes of the gradients the reduction moves and, where the
// framework keeps them in that dtype, of the gradient buffer. Megatron's main grads are the
// reduce buffer (mcore DDP grad_reduce_in_fp32); DeepSpeed accumulates and communicates in it
// (data_types.grad_accum_dtype, communication_data_type); FSDP2 reduce-scatters in it and casts
// the shard back to its fp32 parameter's dtype, so only the reduce side and the copies into the
// reduce-scatter input change.
void applyGradReduceDtype(const TrainingSettings& t, FrameworkConventions& c)
{
    if (t.grad_reduce_dtype == GradReduceDtype::Default)
        return;
    const double bytes = t.grad_reduce_dtype == GradReduceDtype::Bf16 ? 2.0 : 4.0;
    c.grad_reduce_bytes = bytes;
    if (t.framework != Framework::FSDP) {
        c.grad_bytes = bytes;
        return;
    }
    c.zero3_unit_grad_bytes = c.compute_grad_bytes + bytes;
    c.zero3_reduce_copy_bytes = c.compute_grad_bytes + bytes;
}

} // namespace

Fp8Recipe resolvedFp8Recipe(const TrainingSettings& tr)
{
    if (tr.fp8_recipe != Fp8Recipe::Default)
        return tr.fp8_recipe;
    // torchao's Float8LinearConfig defaults to tensorwise dynamic scaling (torchtitan's
    // float8.recipe_name unset); Megatron-LM's --fp8-recipe defaults to delayed
    // (kMegatronFp8Recipe), as does DeepSpeed's TransformerEngine path.
    return tr.framework == Framework::FSDP ? Fp8Recipe::Tensorwise : Fp8Recipe::Delayed;
}

bool fsdpFloat8AllGather(const TrainingSettings& t)
{
    return t.framework == Framework::FSDP && t.precision == Precision::FP8 && t.fp8_param_gather &&
           resolvedFp8Recipe(t) == Fp8Recipe::Tensorwise;
}

double fp8WeightExtraBytes(const FrameworkConventions& c, Fp8Recipe recipe, bool blackwell)
{
    if (!c.fp8_quantized_weights)
        return 0;
    const double copies = recipe == Fp8Recipe::Mxfp8 || !blackwell ? 2.0 : 1.0;
    return c.fp8_params ? copies - c.weight_bytes : copies;
}

FrameworkConventions conventions(const TrainingSettings& t, const ParallelPlan& p)
{
    FrameworkConventions c = conventions(t.framework, t.optimizer);
    // torchtitan compiles the loss with the blocks under compile (components/loss.py
    // build_cross_entropy_loss since bbb1b616e, April 2025; compile.components defaults to
    // ["model", "loss"]): Inductor fuses the fp32 cast, log-softmax and its backward into
    // kernels that read the bf16 logits and write a bf16 gradient, as the fused kernel does.
    // Before (train.py at 9dec370, Dec 2024) the compile of the loss was commented out: such
    // runs say training.cross_entropy eager.
    const CrossEntropy ce =
        t.cross_entropy == CrossEntropy::Default && t.framework == Framework::FSDP && t.compile
            ? CrossEntropy::Fused
            : t.cross_entropy;
    if (ce != CrossEntropy::Default) {
        const LossBytes loss = crossEntropyBytes(ce);
        c.loss_bytes_forward = loss.forward;
        c.loss_bytes_backward = loss.backward;
        // The fused kernel keeps the bf16 logits and writes a bf16 gradient: one fp32 copy's
        // bytes; the others keep the framework's own fp32 copies.
        if (ce == CrossEntropy::Fused)
            c.loss_logit_copies = 1;
    }
    c.overlap_grad_reduce = c.overlap_grad_reduce && t.overlap_grad_reduce;
    // DeepSpeed wraps bf16 training in its BF16_Optimizer unless ZeRO 2 or 3 does the gradient
    // bookkeeping (engine.py _do_optimizer_sanity_check: bf16 with fp32 gradient accumulation,
    // ZeRO 0 or 1); fp16 takes the FP16 optimizer, whose gradients accumulate in place.
    if (t.framework == Framework::DeepSpeed && t.precision == Precision::BF16 && p.zero <= 1) {
        c.microbatch_grad_pass_bytes = 2 + 4 + 4 + 4 + 4;
        c.microbatch_grad_pass_calls = 3;
    }
    applyGradReduceDtype(t, c);
    // The precision-aware optimizer keeps Adam's m and v in bf16 (2 + 2 bytes).
    if (t.adam_moments_dtype == AdamMomentsDtype::Bf16 && t.optimizer == Optimizer::Adam)
        c.moment_bytes = 4;
    // Megatron-LM and DeepSpeed run FP8 through Transformer Engine's modules.
    c.fp8_saves_quantized_inputs = t.precision == Precision::FP8 && t.framework != Framework::FSDP;
    c.fp8_reuses_held_inputs = c.fp8_saves_quantized_inputs && t.framework == Framework::Megatron &&
                               resolvedFp8Recipe(t) != Fp8Recipe::Delayed;
    c.moe_combine_keeps_outputs = t.framework != Framework::Megatron;
    c.linear_gather_bytes = c.weight_bytes;
    c.fp8_quantized_weights = t.precision == Precision::FP8 && t.framework == Framework::Megatron;
    c.fp8_params = c.fp8_quantized_weights && t.fp8_param_gather;
    if (c.fp8_params)
        c.linear_gather_bytes = 1;
    // torchao's float8 all-gather (enable_fsdp_float8_all_gather, tensorwise only): FSDP2 casts
    // each fp32 shard to float8 before its gather and gathers, and copies out, 1-byte elements
    // (torchao float8/fsdp_utils.py fsdp_pre_all_gather / fsdp_post_all_gather).
    if (fsdpFloat8AllGather(t)) {
        c.linear_gather_bytes = 1;
        if (c.zero3_gather_copy_bytes > 0)
            c.zero3_gather_copy_bytes = 2 * c.linear_gather_bytes;
    }
    if (t.framework == Framework::FSDP && p.zero >= 2) {
        // torchtitan's "default": reshard after forward except under PP, "to avoid
        // per-microbatch all-gathers" (distributed/fsdp.py); zero 2 is SHARD_GRAD_OP.
        const bool pp = p.pp > 1;
        c.zero3_reshard_after_forward =
            p.zero >= 3 && (t.fsdp_reshard_after_forward == ReshardAfterForward::Always ||
                            (t.fsdp_reshard_after_forward == ReshardAfterForward::Default && !pp));
        // torch.distributed.pipelining turns gradient sync and reshard-after-backward off for
        // every backward but the last, whatever the forward policy (PipelineStage).
        c.zero3_accumulate_unsharded = pp;
        c.zero2_per_unit = !pp;
        // NCCL serialises the group's collectives on one stream (BackwardPrefetch, torch/
        // distributed/fsdp/api.py): backward_post issues the next unit's all-gather after the
        // current gradients, so the next unit waits for it; none issues it in the unit's own
        // pre-backward, behind the reduce-scatter just issued, which it then waits for too.
        const FsdpBackwardPrefetch bp = t.fsdp_backward_prefetch;
        c.zero3_backward_gather_hidden =
            bp == FsdpBackwardPrefetch::Default || bp == FsdpBackwardPrefetch::Pre;
        // Without gathers in backward (zero 2, no reshard after forward) nothing queues behind
        // the reduce-scatters: they hide whatever the prefetch setting says.
        c.zero3_backward_reduce_hidden =
            bp != FsdpBackwardPrefetch::None || !c.zero3_reshard_after_forward;
        if (t.fsdp_version == 1) {
            c.zero3_gather_copy_bytes = 0;
            c.zero3_reduce_copy_bytes = fsdp1ReduceCopyBytes(c);
            c.zero3_last_layer_kept = false;
        }
    }
    return c;
}

} // namespace paralens
