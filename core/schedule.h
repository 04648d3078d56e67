// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/plan_options.h"

#include <cstdint>
#include <span>
#include <vector>

namespace paralens {

/// What one pipeline op computes. Where a schedule does not split the backward pass, B is the
/// full backward (input and weight gradients); where it does (ZB-H1, ZB-V, parts of
/// DualPipeV), B is the input-gradient pass and W the weight-gradient pass.
enum class OpKind : std::uint8_t
{
    F = 0,
    B = 1,
    W = 2
};

/// One op of a schedule: 12 bytes, so p=64, m=1024, v=2 (262k ops) takes ~3 MiB.
struct PipelineOp
{
    std::int32_t device = 0;     ///< device (pipeline rank) that runs the op, 0-based
    std::int32_t microbatch = 0; ///< 0-based
    std::int16_t chunk = 0;      ///< model chunk (virtual stage) on that device, 0-based
    OpKind kind = OpKind::F;
};

/// Upper bound on ops in one schedule (F+B(+W) × stages × chunks × micro-batches). The simulator
/// keeps ~80 bytes per op, so the limit caps one simulation at roughly 320 MB.
inline constexpr std::int64_t kMaxPipelineOps = 4'000'000;

/// An op order per device. ops holds every device's ops back to back, each device in the
/// order it executes them; stageOps(d) is device d's slice.
struct PipelineSchedule
{
    Schedule kind = Schedule::OneF1B;
    int stages = 1;              ///< devices in the pipeline (PP degree p)
    int microbatches = 1;        ///< m
    int chunks = 1;              ///< model chunks per device (v); 2 for the V schedules
    int group_size = 0;          ///< interleaved: micro-batches per group G; 0 elsewhere
    bool split_backward = false; ///< true when the order contains W ops
    ChunkLayout layout = ChunkLayout::Looped;
    std::vector<PipelineOp> ops;
    std::vector<std::int64_t> stage_offset; ///< stages + 1 entries into ops

    /// Model stages (virtual stages) in the whole pipeline, p·v.
    int modelStages() const { return stages * chunks; }
    /// Position in the model (0 = embedding side) of a device's chunk.
    int modelStage(int device, int chunk) const
    {
        return modelChunkOf(layout, stages, device, chunk);
    }
    /// Device that holds a model stage.
    int deviceOf(int model_stage) const { return deviceOfChunk(layout, stages, model_stage); }
    /// Chunk index on its device of a model stage.
    int chunkOf(int model_stage) const { return localChunkOf(layout, stages, model_stage); }
    std::span<const PipelineOp> stageOps(int device) const
    {
        return {ops.data() + stage_offset[device],
                static_cast<std::size_t>(stage_offset[device + 1] - stage_offset[device])};
    }
};

/// What to build. Throws InputError (field parallel.pp / parallel.virtual_stages /
/// training.global_batch / parallel.schedule) when the schedule cannot run with these numbers.
struct ScheduleParams
{
    Schedule kind = Schedule::OneF1B;
    int stages = 1;         ///< p >= 1
    int microbatches = 1;   ///< m >= 1
    int virtual_stages = 1; ///< v, as the schedule's chunk rule allows (traitsOf(kind).chunks)
    /// Interleaved micro-batch group G (Megatron microbatch_group_size_per_vp_stage); 0 = p when
    /// m mod p = 0, else the smallest G > p with m mod G = 0 or >= p (see interleavedGroupSize).
    int group_size = 0;
};

/// The schedule a plan runs with m micro-batches per pipeline (effectiveSchedule: interleaved
/// 1F1B with one virtual stage is plain 1F1B).
ScheduleParams scheduleParamsFor(const ParallelPlan& plan, int microbatches);

/// Number of ops the schedule would have, without building it (for the op limit).
std::int64_t scheduleOpCount(const ScheduleParams& params);

/// Builds op orders. Keeps its working space (the interleaved order table, the DualPipeV
/// weight-gradient queue) between calls, so building into the same PipelineSchedule again
/// with the same size allocates nothing. Not thread-safe; use one per thread.
class ScheduleBuilder
{
public:
    /// Builds the op order into `out`, reusing its buffers. Throws InputError for invalid
    /// parameters or more than kMaxPipelineOps ops.
    void build(const ScheduleParams& params, PipelineSchedule& out);

private:
    std::vector<PipelineOp> m_scratch;
};

/// Convenience: one build with a fresh builder.
PipelineSchedule buildSchedule(const ScheduleParams& params);

/// The group size G interleaved 1F1B uses: group_size when > 0, otherwise Megatron's default p
/// if it divides m, else the smallest G in (p, m] whose last group m mod G is 0 or >= p (a
/// shorter last group deadlocks). Assumes m >= p.
int interleavedGroupSize(int stages, int microbatches, int group_size);

/// Megatron's warm-up forward count on PP rank `rank` for interleaved 1F1B (chunk-micro-batches
/// run before the first backward): min(2(p − r − 1) + (v − 1)·G, m·v), G from
/// interleavedGroupSize. The peak held on that rank is this + 1, capped at m·v.
int interleavedWarmup(int stages, int microbatches, int virtual_stages, int group_size, int rank);

} // namespace paralens
