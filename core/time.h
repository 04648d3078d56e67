// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/cluster_spec.h"
#include "core/collective.h"
#include "core/constants.h"
#include "core/estimate.h"
#include "core/framework.h"
#include "core/params.h"
#include "core/pipeline_cost.h"
#include "core/scenario.h"
#include "core/topology.h"

#include <span>

namespace paralens {

/// Achievable fraction of the dense peak for large GEMMs when no calibration profile says
/// otherwise (🔢 from public cuBLAS / hipBLASLt figures: A100 ≈ 0.75 of 312 TF, H100/H200/B200
/// ≈ 0.70 of the BF16 peak, MI300X ≈ 0.55; FP8 GEMMs reach ≈ 0.9 of that share of the FP8 peak).
/// Matched on the GPU name; 0.70 for any other GPU.
double defaultGemmEfficiency(const GpuSpec& gpu, bool fp8);

/// Roofline time of one kernel: max(flops / (peak · efficiency), bytes / (hbm · hbm_efficiency)).
double rooflineSeconds(double flops, double peak_flops_per_s, double efficiency, double bytes,
                       double hbm_bytes_per_s);

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

/// Time of one optimizer step into est.time: compute per stage from a
/// roofline per op (QKV, attention core, output projection, MLP or experts, router, LM head,
/// element-wise traffic), TP collectives per layer (all-reduce, or all-gather + reduce-scatter
/// with SP), CP ring exchange overlapped with attention, EP all-to-all × load imbalance, PP p2p,
/// the pipeline (pipelineCost()), DP gradient reduction overlapped with the last backward, the
/// distributed optimizer's parameter all-gather, ZeRO-2/3 per-micro-batch collectives, the
/// optimizer step and offload over PCIe. `stage_times` (size pp) receives each stage's
/// per-micro-batch times and `inflight` (size pp) the schedule's in-flight micro-batches.
void stepTime(const StepInputs& in, std::span<StageTimes> stage_times, std::span<double> inflight,
              Estimate& est);

} // namespace paralens
