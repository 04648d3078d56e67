// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/pipeline_cost.h"

#include "core/error.h"

#include <algorithm>
#include <vector>

namespace paralens {

PipelineCost closedFormPipelineCost(Schedule schedule, int microbatches, int virtual_stages,
                                    std::span<const StageTimes> stages, double p2p_seconds,
                                    std::span<double> inflight)
{
    PipelineCost out;
    const int p = int(stages.size());
    if (p == 0)
        return out;
    const double m = std::max(1, microbatches);
    int v = std::max(1, virtual_stages);
    if (schedule == Schedule::Interleaved1F1B && v == 1)
        schedule = Schedule::OneF1B;

    int slow = 0;
    double sum = 0, sumZbH1 = 0, sumZbV = 0, sumDual = 0;
    for (int r = 0; r < p; ++r) {
        const StageTimes& s = stages[std::size_t(r)];
        if (s.total() > stages[std::size_t(slow)].total())
            slow = r;
        sum += s.total();
        sumZbH1 += s.forward_seconds + s.backward_seconds - s.weight_seconds;
        sumZbV += s.forward_seconds + s.backward_seconds - 2 * s.weight_seconds;
        sumDual += (s.forward_seconds + 2 * s.backward_seconds - 3 * s.weight_seconds) / 2;
    }
    const StageTimes& ss = stages[std::size_t(slow)];
    const double tmax = ss.total();
    double fill = 0;
    double hops = p - 1;
    switch (schedule) {
    case Schedule::GPipe:
    case Schedule::OneF1B:
        fill = sum - tmax;
        break;
    case Schedule::Interleaved1F1B:
        fill = (sum - tmax) / v;
        hops = p * v - 1;
        break;
    case Schedule::ZBH1:
        fill = sumZbH1 - (ss.forward_seconds + ss.backward_seconds - ss.weight_seconds);
        break;
    case Schedule::ZBV:
        fill = sumZbV - (ss.forward_seconds + ss.backward_seconds - 2 * ss.weight_seconds);
        hops = 2 * p - 1;
        break;
    case Schedule::DualPipeV:
        fill = sumDual - (ss.forward_seconds + 2 * ss.backward_seconds - 3 * ss.weight_seconds) / 2;
        hops = 2 * p - 1;
        break;
    }
    fill = std::max(0.0, fill);
    out.p2p_exposed_seconds = p > 1 ? 2 * hops * p2p_seconds : 0.0;
    out.step_seconds = m * tmax + fill + out.p2p_exposed_seconds;
    out.bubble_seconds = out.step_seconds - m * tmax;

    double idle = 0, busy = 0, fracSum = 0;
    for (int r = 0; r < p; ++r) {
        const double b = m * stages[std::size_t(r)].total();
        const double i = std::max(0.0, out.step_seconds - b);
        busy += b;
        idle += i;
        fracSum += out.step_seconds > 0 ? i / out.step_seconds : 0;
    }
    out.bubble_fraction = fracSum / p;
    out.bubble_overhead = busy > 0 ? idle / busy : 0;

    const int n = std::min(int(inflight.size()), p);
    for (int r = 0; r < n; ++r) {
        double f = 1;
        switch (schedule) {
        case Schedule::GPipe:
            f = m;
            break;
        case Schedule::OneF1B:
            f = std::min<double>(p - r, m);
            break;
        case Schedule::Interleaved1F1B:
            f = std::min<double>(2.0 * (p - r - 1) + (v - 1) * p + 1, m * v) / v;
            break;
        case Schedule::ZBH1:
            f = std::min<double>(p - r, m) + std::min<double>(r, m - 1) * kZbWeightStashRatio;
            break;
        case Schedule::ZBV:
            f = std::min<double>(p, m);
            break;
        case Schedule::DualPipeV:
            f = std::min<double>(p + 0.5, m);
            break;
        }
        inflight[std::size_t(r)] = std::max(1.0, f);
    }
    return out;
}

namespace {

// Per-thread simulator state: buffers that grow to the largest plan seen, the last op order
// and the last inputs with their result (an exact-match memo; no rounding, so results never
// depend on what was evaluated before).
struct SimCache
{
    PipelineSimulator sim;
    PipelineSchedule schedule;
    SimulationResult result;
    PipelineTimings timings;
    bool have_schedule = false;
    ScheduleParams params;
    bool have_result = false;
    std::vector<StageTimes> last_stages;
    double last_p2p = -1;
};

bool sameParams(const ScheduleParams& a, const ScheduleParams& b)
{
    return a.kind == b.kind && a.stages == b.stages && a.microbatches == b.microbatches &&
           a.virtual_stages == b.virtual_stages && a.group_size == b.group_size;
}

bool sameStages(std::span<const StageTimes> a, const std::vector<StageTimes>& b)
{
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i].forward_seconds != b[i].forward_seconds ||
            a[i].backward_seconds != b[i].backward_seconds ||
            a[i].weight_seconds != b[i].weight_seconds)
            return false;
    return true;
}

} // namespace

PipelineCost pipelineCost(Schedule schedule, int microbatches, int virtual_stages,
                          std::span<const StageTimes> stages, double p2p_seconds,
                          std::span<double> inflight, PipelineTimeline* timeline)
{
    const int p = int(stages.size());
    if (timeline)
        timeline->simulated = false;
    if (p == 0)
        return PipelineCost{};
    ParallelPlan plan;
    plan.schedule = schedule;
    plan.pp = p;
    plan.virtual_stages = std::max(1, virtual_stages);
    const ScheduleParams params = scheduleParamsFor(plan, std::max(1, microbatches));
    if (scheduleOpCount(params) > kMaxPipelineOps)
        return closedFormPipelineCost(schedule, microbatches, virtual_stages, stages, p2p_seconds,
                                      inflight);

    thread_local SimCache c;
    const bool sameSchedule = c.have_schedule && sameParams(c.params, params);
    if (!sameSchedule) {
        c.have_schedule = false;
        c.have_result = false;
        try {
            buildSchedule(params, c.schedule);
        } catch (const InputError&) {
            // Not a runnable plan (validate() names why); evaluate() still gives numbers.
            return closedFormPipelineCost(schedule, microbatches, virtual_stages, stages,
                                          p2p_seconds, inflight);
        }
        c.params = params;
        c.have_schedule = true;
    }
    if (!(c.have_result && c.last_p2p == p2p_seconds && sameStages(stages, c.last_stages))) {
        c.have_result = false;
        const PipelineSchedule& s = c.schedule;
        const std::size_t S = std::size_t(s.modelStages());
        const double v = s.chunks;
        PipelineTimings& t = c.timings;
        t.forward_seconds.resize(S);
        t.backward_seconds.resize(S);
        t.weight_seconds.resize(S);
        t.activation_bytes.resize(S);
        t.weight_grad_bytes.resize(S);
        t.p2p_seconds.assign(S - 1, std::max(0.0, p2p_seconds));
        t.dp_sync_seconds.clear();
        t.record_memory_timeline = timeline != nullptr;
        for (std::size_t ms = 0; ms < S; ++ms) {
            const StageTimes& st = stages[std::size_t(s.deviceOf(int(ms)))];
            t.forward_seconds[ms] = st.forward_seconds / v;
            t.backward_seconds[ms] = st.backward_seconds / v;
            t.weight_seconds[ms] = st.weight_seconds / v;
            t.activation_bytes[ms] = 1.0 / v; // in units of a whole stage's micro-batch
            t.weight_grad_bytes[ms] = s.split_backward ? kZbWeightStashRatio / v : 0.0;
        }
        c.sim.run(s, t, c.result);
        c.last_stages.assign(stages.begin(), stages.end());
        c.last_p2p = p2p_seconds;
        c.have_result = true;
    } else if (timeline && c.result.memory_timeline.empty()) {
        c.timings.record_memory_timeline = true; // the memo ran without the timeline
        c.sim.run(c.schedule, c.timings, c.result);
    }

    const SimulationResult& r = c.result;
    PipelineCost out;
    out.step_seconds = r.pipeline_seconds;
    double busiest = 0;
    for (const StageStats& st : r.stages)
        busiest = std::max(busiest, st.busy_seconds);
    out.bubble_seconds = std::max(0.0, r.pipeline_seconds - busiest);
    out.bubble_fraction = r.bubble_fraction;
    out.bubble_overhead = r.bubble_overhead;
    out.p2p_exposed_seconds = r.p2p_exposed_seconds;
    const int n = std::min(int(inflight.size()), p);
    for (int i = 0; i < n; ++i)
        inflight[std::size_t(i)] = r.stages[std::size_t(i)].peak_activation_bytes;
    if (timeline) {
        timeline->schedule = c.schedule;
        timeline->result = r;
        timeline->simulated = true;
    }
    return out;
}

} // namespace paralens
