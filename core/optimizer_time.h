// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/constants.h"
#include "core/framework.h"
#include "core/params.h"
#include "core/scenario.h"

namespace paralens {

/// Seconds of one stage's optimizer step: on the GPU, or on the host when offloaded.
struct OptimizerTimes
{
    double gpu = 0;     ///< HBM-bound Adam over the local shard
    double offload = 0; ///< gradients down and weights up over PCIe, plus the CPU Adam
};

/// The optimizer step on the stage's local shard of `sp` (ZeRO >= 1 divides it by
/// zeroShards()): ModelConstants::adam_bytes_per_param streamed at `hbm_bytes_per_s`, or, with
/// offload_optimizer, the framework's gradient and weight bytes over the host link (at least
/// kMinPcieBytesPerSecond) plus ModelConstants::cpu_adam_params_per_second.
OptimizerTimes optimizerTimes(const Scenario& s, const FrameworkConventions& fw,
                              const ModelConstants& k, const StageParams& sp,
                              double hbm_bytes_per_s);

} // namespace paralens
