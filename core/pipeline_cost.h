// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/pipeline_sim.h"
#include "core/plan.h"
#include "core/schedule.h"

#include <span>

namespace paralens {

/// Compute time of one micro-batch through all of one stage's layers (all its chunks).
struct StageTimes
{
    double forward_seconds = 0;  ///< F
    double backward_seconds = 0; ///< B: input gradients (+ recomputation)
    double weight_seconds = 0;   ///< W: weight gradients (run with B except in zero-bubble)
    double total() const { return forward_seconds + backward_seconds + weight_seconds; }
};

/// What the pipeline schedule costs for one optimizer step.
struct PipelineCost
{
    double step_seconds = 0;        ///< wall time from the first forward to the last backward
    double bubble_seconds = 0;      ///< idle time of the busiest stage
    double bubble_fraction = 0;     ///< idle share of the step, averaged over stages
    double bubble_overhead = 0;     ///< total idle over total busy; (p − 1)/m for uniform 1F1B
    double p2p_exposed_seconds = 0; ///< p2p transfers on the critical path (fill and drain)
};

/// The simulated op timeline behind a PipelineCost (Gantt chart, `paralens schedule`).
struct PipelineTimeline
{
    PipelineSchedule schedule;
    SimulationResult result;
    bool simulated = false; ///< false when the plan was above kMaxPipelineOps (closed form used)
};

/// The pipeline's step time and bubble for `schedule` with p = stages.size() stages,
/// m micro-batches and v virtual stages, given each stage's per-micro-batch times and the
/// seconds of one p2p transfer between neighbouring stages. Writes the micro-batches whose
/// activations each stage holds at its peak into `inflight` (size p; in units of one
/// micro-batch through all of that stage's layers).
///
/// Runs the schedule's op order (buildSchedule) through the event simulator
/// (PipelineSimulator): every chunk of stage r takes 1/v of r's times, p2p_seconds on every
/// boundary between devices (none inside a device, e.g. the tip of a V), F/B/W as split by the
/// schedule. step_seconds is the simulated span, bubble_seconds the idle time of the busiest
/// stage, p2p_exposed_seconds the transfer time on the critical path. In flight is the peak of
/// held activations, chunk-micro-batches / v, plus kZbWeightStashRatio per pending W where
/// the schedule splits the backward (Qi et al. §3.2: worker i of ZB-H1 holds
/// (p − i + 1)·M_B + (i − 1)·M_W).
///
/// Cost is linear in p·v·m (≈ 10 ns per op); each thread keeps its buffers, the last op order
/// and the last result, so evaluating the same inputs again costs a comparison and no heap
/// allocation. Plans above kMaxPipelineOps, and plans the schedule cannot run (buildSchedule
/// throws; validate() reports them), fall back to closedFormPipelineCost(); then
/// timeline->simulated is false.
/// `timeline`, when given, receives the op order and its timing.
PipelineCost pipelineCost(Schedule schedule, int microbatches, int virtual_stages,
                          std::span<const StageTimes> stages, double p2p_seconds,
                          std::span<double> inflight, PipelineTimeline* timeline = nullptr);

/// As above with a p2p time per link: p2p_links[r] (p entries) is one transfer between devices
/// r and r + 1 (mod p; the last entry is the wrap-around link interleaved schedules use from
/// device p − 1 back to device 0), so boundaries that leave a node can cost more than those
/// inside one. Throws InputError when p2p_links.size() != stages.size().
PipelineCost pipelineCost(Schedule schedule, int microbatches, int virtual_stages,
                          std::span<const StageTimes> stages, std::span<const double> p2p_links,
                          std::span<double> inflight, PipelineTimeline* timeline = nullptr);

/// The closed forms (docs/formulas.md §6), generalised to unequal stages with t_r = F_r + B_r +
/// W_r: the slowest stage runs m micro-batches, the others add their fill and drain once:
///   GPipe, 1F1B      m·max t + (Σ t − max t)                      ((m + p − 1)·t if equal)
///   interleaved      m·max t + (Σ t − max t)/v
///   ZB-H1            m·max t + Σ' (F + B − W)                     ((p − 1)(F + B − W))
///   ZB-V             m·max t + max(0, Σ' (F + B − 2W))            (0 when F = B = W)
///   DualPipeV        m·max t + max(0, Σ' (F + 2B − 3W)/2)         ((PP/2 − 1)(F&B + B − 3W))
/// (Σ' sums over all stages but the slowest), plus 2·(p·v' − 1) p2p hops for fill and drain
/// (v' = p2pHopsPerMicrobatch: v interleaved, 2 for V shapes). In flight: GPipe m; 1F1B
/// min(p − r, m); interleaved min(2(p − r − 1) + (v − 1)·p + 1, m·v)/v (Megatron); ZB-H1 1F1B +
/// r·M_W/M_B; ZB-V min(p, m); DualPipeV min(p + 1/2, m). Used above the simulator's op limit.
PipelineCost closedFormPipelineCost(Schedule schedule, int microbatches, int virtual_stages,
                                    std::span<const StageTimes> stages, double p2p_seconds,
                                    std::span<double> inflight);

/// m = B / (b · dp), or 0 when the plan has no micro-batches (b or dp not positive) — never a
/// division by zero on an unvalidated plan.
inline int safeMicrobatches(const TrainingSettings& t, const ParallelPlan& p)
{
    return t.micro_batch > 0 && p.dp > 0 ? t.global_batch / (t.micro_batch * p.dp) : 0;
}

/// M_W / M_B: weight-gradient stash over a micro-batch's activations (ZB paper: 32sbh vs 34sbh).
inline constexpr double kZbWeightStashRatio = 32.0 / 34.0;

/// Micro-batches whose last-model-chunk extras (final-norm input, LM-head input, fp32 logits)
/// are held at once on the device with the model's last chunk, with the weight-gradient stash
/// of each B whose W is still pending at kZbWeightStashRatio of them (Qi et al. §3.2; the LM head
/// is a linear layer like the others, its W deferred the same way). That chunk's B only waits
/// for its own F (the loss), and every schedule but GPipe runs it next on that device: one
/// (1F1B, Narayanan et al. 2021 §2.2.1; interleaved, whose last chunk runs F-B pairs; ZB-V and
/// DualPipeV, whose last chunk sits on device 0 beside the embedding and runs its W before the
/// next F). ZB-H1's last stage defers p − 1 W's: 1 + min(p − 1, m − 1)·M_W/M_B, as for its
/// layers. GPipe runs all m forwards first: m. tests/core/test_schedule.cpp checks it against
/// the built op orders.
constexpr double headInflightMicrobatches(Schedule schedule, int stages, int microbatches)
{
    const int m = microbatches < 1 ? 1 : microbatches, p = stages < 1 ? 1 : stages;
    if (schedule == Schedule::GPipe)
        return double(m);
    if (schedule == Schedule::ZBH1)
        return 1.0 + double(p - 1 < m - 1 ? p - 1 : m - 1) * kZbWeightStashRatio;
    return 1.0;
}

} // namespace paralens
