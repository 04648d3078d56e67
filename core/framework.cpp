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
        c.zero3_layer_grads = false;   // gradients go through the reduce bucket
        c.zero3_per_tensor = true;
        c.zero3_prefetch_params = 5e7; // stage3_prefetch_bucket_size
        c.split = LayerSplit::ShortEnds;
        c.attention_fa2 = true; // the flash-attn package (Megatron-DeepSpeed --use-flash-attn-v2)
        // DeepSpeed-Ulysses (deepspeed.sequence.layer.DistributedAttention): all-to-alls.
        c.cp = CpConventions{CpComm::AllToAll, false, false, false, 2, 0, 0};
        break;
    case Framework::FSDP:
        c.grad_bytes = 2;
        c.grad_reduce_bytes = 2;
        c.split = LayerSplit::ExtraFirst;
        // PyTorch SDPA tries its backends flash (FA2), efficient, math, cuDNN in that order,
        // and torchtitan's CP allows only the first two.
        c.attention_fa2 = true;
        // torchtitan (Dec 2024): context_parallel_rotate_method "allgather" over PyTorch's ring
        // attention (torch.distributed.tensor.experimental). The all-gather is waited for after
        // the local block; dK/dV ride a ring in fp32 after each block; the fp32 merge of
        // _SDPAMerger reads and writes per element: cast 6, difference 12, sigmoid product 8,
        // update 12 = 38 B; the backward adds dQ (10 B), dK and dV (21 B each, with the copies
        // that assemble the next send): 17 B per element of dQ, dK, dV.
        c.cp = CpConventions{CpComm::AllGather, true, true, true, 4, 38, 17};
        break;
    }
    if (o == Optimizer::SGD)
        c.moment_bytes = 4; // momentum only
    return c;
}

} // namespace paralens
