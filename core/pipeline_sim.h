// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/schedule.h"

#include <cstdint>
#include <vector>

namespace paralens {

/// Durations and costs the simulator runs a schedule with. Vectors indexed by model stage
/// (virtual stage, 0 = embedding side, PipelineSchedule::modelStage) have p·v entries.
struct PipelineTimings
{
    std::vector<double> forward_seconds;  ///< F of one micro-batch, per model stage
    std::vector<double> backward_seconds; ///< input-gradient pass, per model stage
    std::vector<double> weight_seconds;   ///< weight-gradient pass, per model stage
    // Where the schedule does not split the backward, B lasts backward + weight seconds.

    /// Point-to-point transfer (latency + bytes / bandwidth) across the boundary between model
    /// stage s and s + 1, p·v − 1 entries; the same time for the activation going forward and
    /// its gradient going back. Empty = free. A boundary inside one device (the tip of a V)
    /// costs nothing whatever is given.
    std::vector<double> p2p_seconds;

    /// Data-parallel gradient synchronisation per device (p entries; empty = none). A share
    /// dp_overlap_fraction of it may run under the device's last backward pass (it starts
    /// when that device's last B starts, as Megatron launches bucket reductions while the
    /// last micro-batch's backward runs); the rest follows the device's last op.
    std::vector<double> dp_sync_seconds;
    double dp_overlap_fraction = 0;

    /// Optional (empty = not computed) memory held per in-flight micro-batch per model stage,
    /// in any unit the caller chooses (pipeline cost uses one whole stage's micro-batch):
    /// activation_units from F until its B ends (M_B), weight_grad_units from the end of a
    /// split B until its W ends (M_W, Qi et al. §3.2). Used for peak_activation_units.
    std::vector<double> activation_units;
    std::vector<double> weight_grad_units;

    /// Record memory_timeline (one point per F and B); off saves time when only peaks matter.
    bool record_memory_timeline = true;
};

struct OpTiming
{
    double start = 0; ///< seconds from the start of the step
    double end = 0;
};

/// One step of a device's activation count: from time_seconds on, `inflight` chunk-micro-
/// batches hold their forward activations (+1 when an F starts, −1 when its B ends).
struct MemoryPoint
{
    double time_seconds = 0;
    std::int32_t inflight = 0;
};

struct StageStats
{
    int stage = 0;
    double busy_seconds = 0;       ///< sum of op durations on the device
    double idle_seconds = 0;       ///< pipeline_seconds − busy_seconds (bubble)
    double finish_seconds = 0;     ///< device done, including its exposed DP synchronisation
    double dp_exposed_seconds = 0; ///< finish − end of its last op
    /// Most chunk-micro-batches whose forward activations are held at once (+1 at F start,
    /// −1 at B end; a split B frees the activations, only M_W stays until W). Units: one
    /// micro-batch through one chunk (L/(p·v) layers).
    int peak_inflight_microbatches = 0;
    int peak_pending_weight_grads = 0; ///< most B's whose W has not yet run (split schedules)
    double peak_activation_units = 0;  ///< when activation_units / weight_grad_units are given
};

struct SimulationResult
{
    std::vector<OpTiming> timing; ///< parallel to PipelineSchedule::ops
    std::vector<StageStats> stages;
    /// Per device, the activation count as a step function (non-decreasing times).
    std::vector<std::vector<MemoryPoint>> memory_timeline;
    double pipeline_seconds = 0; ///< end of the last op (the pipeline flush)
    double step_seconds = 0;     ///< latest device finish, DP synchronisation included
    /// p2p transfer seconds on the critical path to the last op (exposed communication).
    double p2p_exposed_seconds = 0;
    /// Idle share of the pipeline time, averaged over devices: mean(idle_i / pipeline_seconds).
    double bubble_fraction = 0;
    /// Idle over busy compute, sum over devices: (p − 1)/m for uniform 1F1B without comm.
    double bubble_overhead = 0;
};

/// Runs op orders with durations and dependencies. Keeps its scratch buffers between calls, so
/// simulating the same shape again allocates nothing. Not thread-safe; use one per thread.
///
/// Rules: ops on one device run one at a time in the given order, each as early as its inputs
/// allow. F of model stage s waits for F of the same micro-batch on stage s − 1 plus the p2p
/// time; B of stage s waits for B on stage s + 1 plus the p2p time (the last model stage's B
/// waits for its own F); W waits for the B of the same micro-batch and stage. Cost is linear in
/// the number of ops.
class PipelineSimulator
{
public:
    /// Throws InputError on timings of the wrong size or negative / non-finite values, on an
    /// order that repeats an op, and on an order that cannot progress (deadlock; the message
    /// names each stuck device, its next op and what that op waits for).
    void run(const PipelineSchedule& schedule, const PipelineTimings& timings,
             SimulationResult& out);

private:
    void prepare(const PipelineSchedule& s, const PipelineTimings& t, SimulationResult& out);
    void buildTables(const PipelineSchedule& s, const PipelineTimings& t);
    void resetStats(const PipelineSchedule& s, const PipelineTimings& t, SimulationResult& out);
    // Called per stretch of one device's ops (often one or two): inline, like account().
    inline void runDevice(int d, const PipelineSchedule& s, const PipelineTimings& t,
                          SimulationResult& out);
    // One device's running counts and where its statistics go.
    struct DeviceRun
    {
        StageStats* stats = nullptr;
        std::vector<MemoryPoint>* timeline = nullptr; ///< null when not recorded
        int inflight = 0, pending_w = 0;
        double held = 0, last_b_start = 0;
        bool activation_units = false, weight_grad_units = false; ///< given in the timings
    };
    // Per op, in the hot loop: inline, defined (and used) in the simulator's source only.
    inline void account(const PipelineOp& op, std::size_t model_stage, double start, double stop,
                        const PipelineTimings& t, DeviceRun& run) const;
    void throwIfStuck(const PipelineSchedule& s) const;
    void finish(const PipelineSchedule& s, const PipelineTimings& t, SimulationResult& out) const;

    // The run in progress: its shape and the latest op end seen so far.
    bool m_split = false;
    std::size_t m_perKind = 0; // model stages × micro-batches
    double m_latest = 0;
    std::vector<double> m_devicePathComm; // the same for each device's latest op
    /// Per (kind, model stage, micro-batch), together so one cache line serves a lookup.
    struct KeyState
    {
        double done = -1;         ///< end time, < 0 = not yet run
        double path = 0;          ///< p2p seconds on the critical path ending there
        std::int32_t waiter = -1; ///< first device waiting for it, −1 = none
    };
    std::vector<KeyState> m_keys;
    std::vector<std::int32_t> m_nextWaiter; // per device, next device waiting for the same key
    std::vector<std::int64_t> m_cursor;     // per device, index of its next op
    std::vector<double> m_free;             // per device, time it becomes free
    std::vector<std::int32_t> m_ready;      // stack of devices that may progress
    std::vector<double> m_dur, m_comm;      // per (kind, model stage)
    std::vector<std::size_t> m_depBase;     // per (kind, model stage): dependency key of mb 0
    std::vector<int> m_stageOf;             // per (device, chunk): model stage
    std::vector<DeviceRun> m_devices;
};

/// Convenience: one call with a fresh simulator.
SimulationResult simulatePipeline(const PipelineSchedule& schedule, const PipelineTimings& timings);

/// Uniform timings: every model stage takes f, b, w seconds, no communication.
PipelineTimings uniformTimings(const PipelineSchedule& schedule, double forward_seconds,
                               double backward_seconds, double weight_seconds);

} // namespace paralens
