// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/cluster_spec.h"
#include "core/collective.h"
#include "core/constants.h"
#include "core/estimate.h"
#include "core/framework.h"
#include "core/kernel_time.h"
#include "core/params.h"
#include "core/pipeline_cost.h"
#include "core/scenario.h"
#include "core/topology.h"

#include <span>

namespace paralens {

/// Everything the step-time model needs that evaluate() already computed.
struct StepInputs
{
    const Scenario* scenario = nullptr;
    const FrameworkConventions* framework = nullptr;
    const ModelConstants* constants = nullptr;
    const Topology* topology = nullptr;
    std::span<const StageLayers> layers;
    std::span<const StageParams> params;
    const MeasuredPerformance* measured = nullptr;
    PipelineTimeline* timeline = nullptr; ///< receives the simulated schedule when given
};

/// Time of one optimizer step into est.time, in named steps: the kernel model per layer
/// (core/kernel_time.h: a roofline per op, QKV, attention core, output projection, MLP or
/// experts, router, LM head, element-wise traffic); the collectives of each dimension per
/// layer or hop (core/comm_time.h: TP all-reduce, or all-gather + reduce-scatter with SP; CP
/// ring overlapped with attention; EP all-to-all × load imbalance; PP p2p); the pipeline
/// (pipelineCost()); DP costs per stage (core/dp_time.h: gradient reduction overlapped with the
/// last backward, the distributed optimizer's parameter all-gather, ZeRO-2/3 per-micro-batch
/// collectives); the optimizer step and offload over PCIe (core/optimizer_time.h).
/// `stage_times` (size pp) receives each stage's per-micro-batch times and `inflight` (size pp)
/// the schedule's in-flight micro-batches.
void stepTime(const StepInputs& in, std::span<StageTimes> stage_times, std::span<double> inflight,
              Estimate& est);

} // namespace paralens
