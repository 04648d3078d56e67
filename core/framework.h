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
    bool zero3_layer_grads = true; ///< a layer's unsharded gradient is held before its reduce
    /// ZeRO-3 gathers each parameter tensor on its own (DeepSpeed's per-submodule fetch) rather
    /// than one flat unit per layer (FSDP, Megatron FSDP).
    bool zero3_per_tensor = false;
    /// Parameters prefetched ahead of compute (DeepSpeed stage3_prefetch_bucket_size 5e7); a
    /// tensor larger than this is fetched on demand and its gather is exposed. 0 = the next
    /// whole unit is prefetched (FSDP forward/backward prefetch).
    double zero3_prefetch_params = 0;
    LayerSplit split = LayerSplit::ShortEnds;
    /// The attention kernel is FlashAttention-2 (PyTorch SDPA's flash backend, the flash-attn
    /// package), which uses none of Hopper's wgmma/TMA; Transformer Engine runs cuDNN's fused
    /// attention on Hopper and later.
    bool attention_fa2 = false;
    CpConventions cp;

    /// Optimizer-state bytes per parameter (master + moments), the ZeRO paper's K.
    double optimizerBytes() const { return master_bytes + moment_bytes; }
};

/// The conventions for a framework and optimizer (precision changes no persistent dtype:
/// FP8 training keeps bf16 weights and fp32 master weights in all three frameworks).
FrameworkConventions conventions(Framework f, Optimizer o);

} // namespace paralens
