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
    /// The step on the GPU: the larger of its HBM streaming and the host's issue time (nothing in
    /// it synchronises the host with the GPU, so each runs while the other does).
    double gpu = 0;
    double offload = 0; ///< gradients down and weights up over PCIe, plus the CPU Adam
    double hbm = 0;     ///< the step's passes over the local shard at HBM bandwidth
    double host = 0;    ///< host seconds to issue its operator calls
};

/// The implementation a scenario's optimizer runs: training.optimizer_impl, or the framework's
/// default, fused for all three (Megatron-LM and DeepSpeed FusedAdam; torchtitan's
/// optimizer.implementation "fused" since 6e4988550, Feb 2025).
inline OptimizerImpl resolvedOptimizerImpl(const TrainingSettings& t)
{
    return t.optimizer_impl == OptimizerImpl::Default ? OptimizerImpl::Fused : t.optimizer_impl;
}

/// Host operator calls of one optimizer step over `params` local parameters in `tensors` tensors
/// (docs/model.md "Optimizer step"):
/// - fused: one multi-tensor-apply launch per chunk list, ⌈tensors / 36⌉ + ⌈params / (320 ·
///   65,536)⌉ (the list launches when either its tensors or its chunks fill; the sum bounds it);
/// - foreach: per tensor, kAdamKernelsPerTensor ops + kAdamForeachHostCallsPerTensor host-only
///   calls under FSDP2, whose parameters are DTensors, over which each _foreach_ op dispatches
///   tensor by tensor (pytorch/pytorch#134191); on plain tensors each _foreach_ op is one
///   multi-tensor-apply pass (the fused launches each), the CPU step counter still per tensor;
/// - for_loop: per tensor, kAdamKernelsPerTensor + kAdamForLoopHostCallsPerTensor.
/// SGD: kSgdKernelsPerTensor per tensor unfused, no step counter.
double optimizerHostCalls(const Scenario& s, double params, double tensors);

/// The optimizer step on the stage's local shard of `sp` (ZeRO >= 1 divides it by
/// zeroShards()), held in `tensors` parameter tensors (stageParameterTensors()): the larger of
/// ModelConstants::adam_bytes_per_param (plus kUnfusedAdamExtraBytesPerParam unfused) streamed at
/// `hbm_bytes_per_s` and optimizerHostCalls() × ModelConstants::kernel_launch_seconds; or, with
/// offload_optimizer, the framework's gradient and weight bytes over the host link (at least
/// kMinPcieBytesPerSecond) plus ModelConstants::cpu_adam_params_per_second.
OptimizerTimes optimizerTimes(const Scenario& s, const FrameworkConventions& fw,
                              const ModelConstants& k, const StageParams& sp, double tensors,
                              double hbm_bytes_per_s);

} // namespace paralens
