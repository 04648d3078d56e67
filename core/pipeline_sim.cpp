// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/pipeline_sim.h"

#include "core/error.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace paralens {
namespace {

constexpr const char* kField = "parallel.schedule";

void checkTimes(const std::vector<double>& v, std::size_t expected, bool optional, const char* name)
{
    if (optional && v.empty())
        return;
    if (v.size() != expected)
        throw InputError(kField, std::string("pipeline timings: ") + name + " has " +
                                     std::to_string(v.size()) + " entries, expected " +
                                     std::to_string(expected));
    for (std::size_t i = 0; i < v.size(); ++i)
        if (!std::isfinite(v[i]) || v[i] < 0)
            throw InputError(kField, std::string("pipeline timings: ") + name + "[" +
                                         std::to_string(i) + "] = " + std::to_string(v[i]) +
                                         " is not a finite non-negative number");
}

char kindChar(OpKind k)
{
    return k == OpKind::F ? 'F' : k == OpKind::B ? 'B' : 'W';
}

std::string opName(OpKind k, int mb, int chunk)
{
    return std::string(1, kindChar(k)) + " mb" + std::to_string(mb) + " c" + std::to_string(chunk);
}

} // namespace

namespace {

constexpr std::size_t kNone = SIZE_MAX; // no dependency

void checkInputs(const PipelineSchedule& s, const PipelineTimings& t)
{
    const int p = s.stages, S = s.modelStages(), m = s.microbatches;
    if (p < 1 || m < 1 || s.chunks < 1 || s.stage_offset.size() != std::size_t(p) + 1)
        throw InputError(kField, "pipeline schedule is empty or malformed");
    if (static_cast<std::int64_t>(s.ops.size()) > kMaxPipelineOps)
        throw InputError(kField, "pipeline plan has " + std::to_string(s.ops.size()) +
                                     " ops, above the simulator's limit of " +
                                     std::to_string(kMaxPipelineOps));
    checkTimes(t.forward_seconds, S, false, "forward_seconds");
    checkTimes(t.backward_seconds, S, false, "backward_seconds");
    checkTimes(t.weight_seconds, S, false, "weight_seconds");
    checkTimes(t.p2p_seconds, S > 0 ? S - 1 : 0, true, "p2p_seconds");
    checkTimes(t.dp_sync_seconds, p, true, "dp_sync_seconds");
    checkTimes(t.activation_units, S, true, "activation_units");
    checkTimes(t.weight_grad_units, S, true, "weight_grad_units");
    if (!std::isfinite(t.dp_overlap_fraction) || t.dp_overlap_fraction < 0 ||
        t.dp_overlap_fraction > 1)
        throw InputError(kField, "pipeline timings: dp_overlap_fraction must lie in [0, 1]");
}

} // namespace

void PipelineSimulator::prepare(const PipelineSchedule& s, const PipelineTimings& t,
                                SimulationResult& out)
{
    const int p = s.stages;
    m_split = s.split_backward;
    m_perKind = std::size_t(s.modelStages()) * std::size_t(s.microbatches);
    m_keys.assign((m_split ? 3 : 2) * m_perKind, KeyState{});
    m_devicePathComm.assign(std::size_t(p), 0.0);
    m_nextWaiter.assign(std::size_t(p), -1);
    m_cursor.assign(s.stage_offset.begin(), s.stage_offset.end() - 1);
    m_free.assign(std::size_t(p), 0.0);
    m_ready.clear();
    for (int d = p - 1; d >= 0; --d)
        m_ready.push_back(d);
    out.timing.resize(s.ops.size());
    out.p2p_exposed_seconds = 0;
    m_latest = 0;
    buildTables(s, t);
    resetStats(s, t, out);
}

// Per (kind, model stage) tables: duration, where the dependency's key starts (key of
// micro-batch mb = base + mb; kNone = none) and the transfer before it; per (device, chunk)
// the model stage.
void PipelineSimulator::buildTables(const PipelineSchedule& s, const PipelineTimings& t)
{
    const int p = s.stages, S = s.modelStages();
    const std::size_t mm = std::size_t(s.microbatches);
    m_dur.resize(3 * std::size_t(S));
    m_depBase.resize(3 * std::size_t(S));
    m_comm.resize(3 * std::size_t(S));
    m_stageOf.resize(std::size_t(p) * std::size_t(s.chunks));
    for (int d = 0; d < p; ++d)
        for (int c = 0; c < s.chunks; ++c)
            m_stageOf[std::size_t(d) * std::size_t(s.chunks) + std::size_t(c)] = s.modelStage(d, c);
    auto p2p = [&](int a, int b) {
        if (t.p2p_seconds.empty() || s.deviceOf(a) == s.deviceOf(b))
            return 0.0;
        return t.p2p_seconds[std::size_t(std::min(a, b))];
    };
    for (int ms = 0; ms < S; ++ms) {
        const std::size_t F = std::size_t(ms), B = std::size_t(S) + F, W = 2 * std::size_t(S) + F;
        const std::size_t u = std::size_t(ms);
        m_dur[F] = t.forward_seconds[u];
        m_dur[B] = t.backward_seconds[u] + (m_split ? 0.0 : t.weight_seconds[u]);
        m_dur[W] = t.weight_seconds[u];
        m_depBase[F] = ms > 0 ? (u - 1) * mm : kNone;
        m_comm[F] = ms > 0 ? p2p(ms - 1, ms) : 0.0;
        m_depBase[B] = ms < S - 1 ? m_perKind + (u + 1) * mm : u * mm;
        m_comm[B] = ms < S - 1 ? p2p(ms + 1, ms) : 0.0;
        m_depBase[W] = m_perKind + u * mm;
        m_comm[W] = 0.0;
    }
}

// Per-device running statistics, kept while the device's ops run in order.
void PipelineSimulator::resetStats(const PipelineSchedule& s, const PipelineTimings& t,
                                   SimulationResult& out)
{
    const std::size_t p = std::size_t(s.stages);
    out.stages.resize(p);
    for (std::size_t d = 0; d < p; ++d) {
        out.stages[d] = StageStats{};
        out.stages[d].stage = int(d);
    }
    if (t.record_memory_timeline) {
        out.memory_timeline.resize(p);
        for (auto& tl : out.memory_timeline) {
            tl.clear();
            tl.push_back({0.0, 0});
        }
    } else {
        out.memory_timeline.clear();
    }
    m_devices.assign(p, DeviceRun{});
    for (std::size_t d = 0; d < p; ++d) {
        DeviceRun& run = m_devices[d];
        run.stats = &out.stages[d];
        run.timeline = t.record_memory_timeline ? &out.memory_timeline[d] : nullptr;
        run.activation_units = !t.activation_units.empty();
        run.weight_grad_units = !t.weight_grad_units.empty();
    }
}

// Statistics and memory of one op (the device's ops run in order, so times only grow).
inline void PipelineSimulator::account(const PipelineOp& op, std::size_t u, double start,
                                       double stop, const PipelineTimings& t, DeviceRun& run) const
{
    StageStats& st = *run.stats;
    st.busy_seconds += stop - start;
    const bool actBytes = run.activation_units, wBytes = run.weight_grad_units;
    if (op.kind == OpKind::F) {
        ++run.inflight;
        if (actBytes)
            run.held += t.activation_units[u];
        if (run.timeline)
            run.timeline->push_back(MemoryPoint{start, run.inflight});
        st.peak_inflight_microbatches = std::max(st.peak_inflight_microbatches, run.inflight);
        st.peak_activation_units = std::max(st.peak_activation_units, run.held);
    } else if (op.kind == OpKind::B) {
        --run.inflight;
        run.last_b_start = start;
        if (actBytes)
            run.held -= t.activation_units[u];
        if (m_split) {
            ++run.pending_w;
            if (wBytes)
                run.held += t.weight_grad_units[u];
            st.peak_pending_weight_grads = std::max(st.peak_pending_weight_grads, run.pending_w);
            st.peak_activation_units = std::max(st.peak_activation_units, run.held);
        }
        if (run.timeline)
            run.timeline->push_back(MemoryPoint{stop, run.inflight});
    } else {
        --run.pending_w;
        if (wBytes)
            run.held -= t.weight_grad_units[u];
    }
}

// Runs device d's ops in order until one waits for an op not yet run (then d is queued as
// that op's waiter) or the device is done. Wakes the devices waiting for what it ran.
inline void PipelineSimulator::runDevice(int d, const PipelineSchedule& s, const PipelineTimings& t,
                                         SimulationResult& out)
{
    const int S = s.modelStages(), m = s.microbatches;
    const std::size_t du = std::size_t(d), mm = std::size_t(m);
    const bool split = m_split; // the hot loop's constants in registers
    const std::size_t perKind = m_perKind;
    double latest = m_latest;
    DeviceRun& run = m_devices[du];
    const std::int64_t end = s.stage_offset[d + 1];
    std::int64_t i = m_cursor[du];
    for (; i < end; ++i) {
        const PipelineOp& op = s.ops[std::size_t(i)];
        if (op.device != d || op.chunk < 0 || op.chunk >= s.chunks || op.microbatch < 0 ||
            op.microbatch >= m || (op.kind == OpKind::W && !split) || std::uint8_t(op.kind) > 2)
            throw InputError(kField, "pipeline schedule: op #" + std::to_string(i) + " on stage " +
                                         std::to_string(d) + " is out of range");
        const std::size_t mb = std::size_t(op.microbatch);
        const int ms = m_stageOf[du * std::size_t(s.chunks) + std::size_t(op.chunk)];
        const std::size_t row = std::size_t(op.kind) * std::size_t(S) + std::size_t(ms);
        double ready = 0;
        double path = m_devicePathComm[du]; // p2p seconds on the critical path
        if (m_depBase[row] != kNone) {
            const std::size_t dep = m_depBase[row] + mb;
            if (m_keys[dep].done < 0) { // not yet: wait for it
                m_nextWaiter[du] = m_keys[dep].waiter;
                m_keys[dep].waiter = d;
                break;
            }
            ready = m_keys[dep].done + m_comm[row];
            const double viaDep = m_keys[dep].path + m_comm[row];
            if (ready > m_free[du])
                path = viaDep;
            else if (ready == m_free[du])
                path = std::max(path, viaDep);
        }
        const double start = std::max(m_free[du], ready);
        const double stop = start + m_dur[row];
        out.timing[std::size_t(i)] = {start, stop};
        m_free[du] = stop;
        const std::size_t self = std::size_t(op.kind) * perKind + std::size_t(ms) * mm + mb;
        if (m_keys[self].done >= 0)
            throw InputError(kField, "pipeline schedule runs " +
                                         opName(op.kind, op.microbatch, op.chunk) +
                                         " twice on stage " + std::to_string(d));
        m_keys[self].done = stop;
        m_keys[self].path = path;
        m_devicePathComm[du] = path;
        if (stop >= latest) {
            latest = stop;
            out.p2p_exposed_seconds = path;
        }
        for (int w = m_keys[self].waiter; w >= 0;) {
            const int next = m_nextWaiter[std::size_t(w)];
            m_ready.push_back(w);
            w = next;
        }
        m_keys[self].waiter = -1;
        account(op, std::size_t(ms), start, stop, t, run);
    }
    m_cursor[du] = i;
    m_latest = latest;
}

void PipelineSimulator::run(const PipelineSchedule& s, const PipelineTimings& t,
                            SimulationResult& out)
{
    checkInputs(s, t);
    prepare(s, t, out);
    while (!m_ready.empty()) {
        const int d = m_ready.back();
        m_ready.pop_back();
        runDevice(d, s, t, out);
    }
    throwIfStuck(s);
    finish(s, t, out);
}

// Anything left means the order cannot progress: name each stuck device's next op and what
// it waits for (the first four).
void PipelineSimulator::throwIfStuck(const PipelineSchedule& s) const
{
    const int S = s.modelStages();
    std::string stuck;
    int nStuck = 0;
    for (int d = 0; d < s.stages; ++d) {
        const std::int64_t i = m_cursor[std::size_t(d)];
        if (i >= s.stage_offset[d + 1])
            continue;
        if (++nStuck > 4)
            continue;
        const PipelineOp& op = s.ops[std::size_t(i)];
        const int ms = s.modelStage(d, op.chunk);
        int depStage = ms;
        OpKind depKind = OpKind::B;
        if (op.kind == OpKind::F) {
            depStage = ms - 1;
            depKind = OpKind::F;
        } else if (op.kind == OpKind::B) {
            depStage = ms < S - 1 ? ms + 1 : ms;
            depKind = ms < S - 1 ? OpKind::B : OpKind::F;
        }
        stuck += (stuck.empty() ? "" : "; ") + std::string("stage ") + std::to_string(d) +
                 " waits at op #" + std::to_string(i - s.stage_offset[d]) + " (" +
                 opName(op.kind, op.microbatch, op.chunk) + ") for " +
                 opName(depKind, op.microbatch, s.chunkOf(depStage)) + " on stage " +
                 std::to_string(s.deviceOf(depStage));
    }
    if (nStuck > 0)
        throw InputError(kField,
                         "pipeline schedule deadlocks: " + stuck +
                             (nStuck > 4 ? " (and " + std::to_string(nStuck - 4) + " more stages)"
                                         : std::string()));
}

// DP synchronisation and the pipeline span.
void PipelineSimulator::finish(const PipelineSchedule& s, const PipelineTimings& t,
                               SimulationResult& out) const
{
    double pipeline = 0;
    for (int d = 0; d < s.stages; ++d) {
        StageStats& st = out.stages[std::size_t(d)];
        const std::int64_t last = s.stage_offset[d + 1] - 1;
        const double lastEnd = last >= s.stage_offset[d] ? out.timing[std::size_t(last)].end : 0.0;
        double finish = lastEnd;
        if (!t.dp_sync_seconds.empty()) {
            const double T = t.dp_sync_seconds[std::size_t(d)];
            const double f = t.dp_overlap_fraction;
            finish =
                std::max(lastEnd, m_devices[std::size_t(d)].last_b_start + f * T) + (1 - f) * T;
        }
        st.finish_seconds = finish;
        st.dp_exposed_seconds = finish - lastEnd;
        pipeline = std::max(pipeline, lastEnd);
    }
    out.pipeline_seconds = pipeline;
    out.step_seconds = pipeline;
    double idleSum = 0, busySum = 0, fracSum = 0;
    for (StageStats& st : out.stages) {
        st.idle_seconds = std::max(0.0, pipeline - st.busy_seconds);
        idleSum += st.idle_seconds;
        busySum += st.busy_seconds;
        fracSum += pipeline > 0 ? st.idle_seconds / pipeline : 0;
        out.step_seconds = std::max(out.step_seconds, st.finish_seconds);
    }
    out.bubble_fraction = fracSum / s.stages;
    out.bubble_overhead = busySum > 0 ? idleSum / busySum : 0;
}

SimulationResult simulatePipeline(const PipelineSchedule& schedule, const PipelineTimings& timings)
{
    PipelineSimulator sim;
    SimulationResult r;
    sim.run(schedule, timings, r);
    return r;
}

PipelineTimings uniformTimings(const PipelineSchedule& schedule, double forward_seconds,
                               double backward_seconds, double weight_seconds)
{
    PipelineTimings t;
    const std::size_t S = std::size_t(schedule.modelStages());
    t.forward_seconds.assign(S, forward_seconds);
    t.backward_seconds.assign(S, backward_seconds);
    t.weight_seconds.assign(S, weight_seconds);
    return t;
}

} // namespace paralens
