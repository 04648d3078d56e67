// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Which of a scenario's framework settings the model reads for its plan: the controls offer
// only these, so a setting the step time ignores never looks as if it mattered.
#include "core/scenario.h"

namespace paralens {

struct FrameworkOptions
{
    bool fp8_recipe = false;      ///< training.fp8_recipe: precision fp8
    bool tp_comm_overlap = false; ///< parallel.tp_comm_overlap: TP > 1 with SP
    bool compile = false;         ///< training.compile: FSDP (Megatron and DeepSpeed always fuse)
    /// training.fp8_param_gather: Megatron in FP8 (its weights and their gather); FSDP ZeRO 3
    /// with FP8 tensorwise (torchao's float8 all-gather).
    bool fp8_param_gather = false;
    bool fsdp_version = false; ///< training.fsdp_version: FSDP sharding (zero 2 or 3)
    /// training.fsdp_reshard_after_forward: FSDP zero 3.
    bool fsdp_reshard = false;
    /// training.fsdp_backward_prefetch: FSDP gathers in backward (zero 3, resharded).
    bool fsdp_prefetch = false;
    /// training.recompute_modules: Megatron with selective recompute.
    bool recompute_modules = false;
    /// training.adam_moments_dtype: Megatron with Adam on the GPU (not offloaded).
    bool adam_moments = false;
};

FrameworkOptions frameworkOptions(const Scenario& s);

} // namespace paralens
