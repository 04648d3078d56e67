// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/optimizer_time.h"
#include "core/dims.h"

#include <algorithm>
#include <cstdint>

namespace paralens {

namespace {

// ⌈x⌉ for 0 ≤ x < 2^63 without a libm call (evaluate()'s hot path runs this per stage).
double ceilNonNegative(double x)
{
    const double t = double(static_cast<std::int64_t>(x));
    return t < x ? t + 1 : t;
}

} // namespace

double optimizerHostCalls(const Scenario& s, double params, double tensors)
{
    const bool adam = s.training.optimizer == Optimizer::Adam;
    const double kernels = adam ? kAdamKernelsPerTensor : kSgdKernelsPerTensor;
    constexpr double perTensorList = 1 / kMultiTensorAdamTensorsPerLaunch;
    constexpr double perChunkList = 1 / (kMultiTensorChunkElements * kMultiTensorChunksPerLaunch);
    const double fusedLaunches =
        ceilNonNegative(tensors * perTensorList) + ceilNonNegative(params * perChunkList);
    switch (resolvedOptimizerImpl(s.training)) {
    case OptimizerImpl::Foreach: {
        const double steps = adam ? kAdamForeachHostCallsPerTensor * tensors : 0.0;
        // FSDP2's DTensor parameters: every _foreach_ op runs tensor by tensor.
        if (s.training.framework == Framework::FSDP)
            return kernels * tensors + steps;
        return kernels * fusedLaunches + steps;
    }
    case OptimizerImpl::ForLoop:
        return (kernels + (adam ? kAdamForLoopHostCallsPerTensor : 0.0)) * tensors;
    case OptimizerImpl::Default:
    case OptimizerImpl::Fused:
        break;
    }
    return fusedLaunches;
}

OptimizerTimes optimizerTimes(const Scenario& s, const FrameworkConventions& fw,
                              const ModelConstants& k, const StageParams& sp, double tensors,
                              double hbm_bytes_per_s)
{
    const ParallelPlan& pl = s.parallel;
    const ZeroShards shards = pl.zero >= 1 ? zeroShards(pl) : ZeroShards{};
    const double local = sp.dense / shards.dense + sp.expert / shards.expert;
    OptimizerTimes t;
    if (pl.offload_optimizer) {
        const double pcie = std::max(kMinPcieBytesPerSecond, s.cluster.pcie_gbps * kBytesPerGB);
        t.offload =
            local * (fw.grad_bytes + fw.weight_bytes) / pcie + local / k.cpu_adam_params_per_second;
        return t;
    }
    const bool unfusedAdam = s.training.optimizer == Optimizer::Adam &&
                             resolvedOptimizerImpl(s.training) != OptimizerImpl::Fused;
    double bytes = k.adam_bytes_per_param + (unfusedAdam ? kUnfusedAdamExtraBytesPerParam : 0);
    if (s.training.optimizer == Optimizer::Adam) // bf16 moments: m and v read and written in 2 B
        bytes -= 2 * (kAdamFp32MomentBytes - fw.moment_bytes);
    t.hbm = local * bytes / hbm_bytes_per_s;
    t.host = optimizerHostCalls(s, local, tensors) * k.kernel_launch_seconds;
    // torch's AdamW keeps the unfused step counter on the CPU and reads it there, the fused
    // kernels take theirs on the GPU: no call in the step waits for the GPU, so the host issues
    // while the GPU streams and the slower of the two sets the time.
    t.gpu = std::max(t.hbm, t.host);
    return t;
}

} // namespace paralens
