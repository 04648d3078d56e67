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
        break;
    case Framework::FSDP:
        c.grad_bytes = 2;
        c.grad_reduce_bytes = 2;
        c.split = LayerSplit::ExtraFirst;
        break;
    }
    if (o == Optimizer::SGD)
        c.moment_bytes = 4; // momentum only
    return c;
}

} // namespace paralens
