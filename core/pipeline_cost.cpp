// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/pipeline_cost.h"

#include "core/error.h"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

namespace paralens {

namespace {

// The slowest stage and the fill + drain its neighbours add once (the closed forms above
// closedFormPipelineCost's declaration). `schedule` is the one the plan runs.
struct Fill
{
    int slow = 0;
    double seconds = 0;
};

// A stage's share of the fill for a schedule, from its F, B and W (interleaved: before the
// division by v).
double fillShare(Schedule schedule, const StageTimes& s)
{
    const double f = s.forward_seconds, b = s.backward_seconds, w = s.weight_seconds;
    switch (schedule) {
    case Schedule::GPipe:
    case Schedule::OneF1B:
    case Schedule::Interleaved1F1B:
        return s.total();
    case Schedule::ZBH1:
        return f + b - w;
    case Schedule::ZBV:
        return f + b - 2 * w;
    case Schedule::DualPipeV:
        return (f + 2 * b - 3 * w) / 2;
    }
    return s.total();
}

Fill closedFormFill(Schedule schedule, std::span<const StageTimes> stages, int v)
{
    Fill out;
    double sum = 0;
    for (std::size_t r = 0; r < stages.size(); ++r) {
        if (stages[r].total() > stages[std::size_t(out.slow)].total())
            out.slow = int(r);
        sum += fillShare(schedule, stages[r]);
    }
    out.seconds = sum - fillShare(schedule, stages[std::size_t(out.slow)]);
    if (schedule == Schedule::Interleaved1F1B)
        out.seconds /= v; // each of the v chunks fills in 1/v of a stage's time
    out.seconds = std::max(0.0, out.seconds);
    return out;
}

// Idle share and idle over busy, from each stage's busy time m·t_r in a step.
void closedFormBubble(PipelineCost& out, std::span<const StageTimes> stages, double m)
{
    double idle = 0, busy = 0, fracSum = 0;
    for (const StageTimes& st : stages) {
        const double b = m * st.total();
        const double i = std::max(0.0, out.step_seconds - b);
        busy += b;
        idle += i;
        fracSum += out.step_seconds > 0 ? i / out.step_seconds : 0;
    }
    out.bubble_fraction = fracSum / double(stages.size());
    out.bubble_overhead = busy > 0 ? idle / busy : 0;
}

// Micro-batches whose activations rank r holds at its peak.
double closedFormInflight(Schedule schedule, int p, double m, int v, int r)
{
    switch (schedule) {
    case Schedule::GPipe:
        return m;
    case Schedule::OneF1B:
        return std::min<double>(p - r, m);
    case Schedule::Interleaved1F1B:
        return std::min<double>(2.0 * (p - r - 1) + (v - 1) * p + 1, m * v) / v;
    case Schedule::ZBH1:
        return std::min<double>(p - r, m) + std::min<double>(r, m - 1) * kZbWeightStashRatio;
    case Schedule::ZBV:
        return std::min<double>(p, m);
    case Schedule::DualPipeV:
        return std::min<double>(p + 0.5, m);
    }
    return 1;
}

} // namespace

PipelineCost closedFormPipelineCost(Schedule schedule, int microbatches, int virtual_stages,
                                    std::span<const StageTimes> stages, double p2p_seconds,
                                    std::span<double> inflight)
{
    PipelineCost out;
    const int p = int(stages.size());
    if (p == 0)
        return out;
    const double m = std::max(1, microbatches);
    const int v = std::max(1, virtual_stages);
    schedule = effectiveSchedule(schedule, v);

    const Fill fill = closedFormFill(schedule, stages, v);
    const double tmax = stages[std::size_t(fill.slow)].total();
    // Fill and drain cross every boundary between model stages once each way.
    const double hops = double(p) * p2pHopsPerMicrobatch(schedule, v) - 1;
    out.p2p_exposed_seconds = p > 1 ? 2 * hops * p2p_seconds : 0.0;
    out.step_seconds = m * tmax + fill.seconds + out.p2p_exposed_seconds;
    out.bubble_seconds = out.step_seconds - m * tmax;
    closedFormBubble(out, stages, m);

    const int n = std::min(int(inflight.size()), p);
    for (int r = 0; r < n; ++r)
        inflight[std::size_t(r)] = std::max(1.0, closedFormInflight(schedule, p, m, v, r));
    return out;
}

namespace {

// One memoised evaluation: exact inputs and what they gave (no rounding, so results never
// depend on what was evaluated before).
struct MemoEntry
{
    bool used = false;
    ScheduleParams params;
    std::vector<double> links; // p2p seconds per link (device r to r + 1 mod p)
    std::vector<StageTimes> stages;
    PipelineCost cost;
    std::vector<double> inflight;
};

// Per-thread simulator state: buffers that grow to the largest plan seen, the last op order,
// and the last kMemo results (a GUI toggling between a few scenarios, the side-by-side view).
struct SimCache
{
    static constexpr std::size_t kMemo = 8;
    PipelineSimulator sim;
    ScheduleBuilder builder;
    PipelineSchedule schedule;
    SimulationResult result;
    PipelineTimings timings;
    bool have_schedule = false;
    ScheduleParams params;
    std::array<MemoEntry, kMemo> memo;
    std::size_t next = 0; // round-robin replacement
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

bool sameLinks(std::span<const double> a, const std::vector<double>& b)
{
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

double meanOf(std::span<const double> v)
{
    double sum = 0;
    for (double x : v)
        sum += x;
    return v.empty() ? 0.0 : sum / double(v.size());
}

// The remembered result for these exact inputs, if any (copies its in-flight counts).
const MemoEntry* findMemo(const SimCache& c, const ScheduleParams& params,
                          std::span<const double> links, std::span<const StageTimes> stages)
{
    for (const MemoEntry& e : c.memo)
        if (e.used && sameParams(e.params, params) && sameLinks(links, e.links) &&
            sameStages(stages, e.stages))
            return &e;
    return nullptr;
}

// Builds the op order unless the cache holds it already; false when the schedule cannot run.
bool ensureSchedule(SimCache& c, const ScheduleParams& params)
{
    if (c.have_schedule && sameParams(c.params, params))
        return true;
    c.have_schedule = false;
    try {
        c.builder.build(params, c.schedule);
    } catch (const InputError&) {
        return false; // not a runnable plan (validate() names why)
    }
    c.params = params;
    c.have_schedule = true;
    return true;
}

// Per model stage: each chunk of a device takes 1/v of its stage's times, and each boundary
// between model stages costs the link between their devices (none inside a device).
void fillTimings(const PipelineSchedule& s, std::span<const StageTimes> stages,
                 std::span<const double> links, PipelineTimings& t)
{
    const int p = s.stages;
    const std::size_t S = std::size_t(s.modelStages());
    const double v = s.chunks;
    t.forward_seconds.resize(S);
    t.backward_seconds.resize(S);
    t.weight_seconds.resize(S);
    t.activation_units.resize(S);
    t.weight_grad_units.resize(S);
    t.p2p_seconds.resize(S - 1);
    for (std::size_t b = 0; b + 1 < S; ++b) {
        const int d0 = s.deviceOf(int(b)), d1 = s.deviceOf(int(b) + 1);
        const int link = (d1 == (d0 + 1) % p) ? d0 : d1; // r → r + 1 (mod p), or back
        t.p2p_seconds[b] = std::max(0.0, links[std::size_t(link)]);
    }
    t.dp_sync_seconds.clear();
    for (std::size_t ms = 0; ms < S; ++ms) {
        const StageTimes& st = stages[std::size_t(s.deviceOf(int(ms)))];
        t.forward_seconds[ms] = st.forward_seconds / v;
        t.backward_seconds[ms] = st.backward_seconds / v;
        t.weight_seconds[ms] = st.weight_seconds / v;
        t.activation_units[ms] = 1.0 / v; // in units of a whole stage's micro-batch
        t.weight_grad_units[ms] = s.split_backward ? kZbWeightStashRatio / v : 0.0;
    }
}

PipelineCost costOf(const SimulationResult& r)
{
    PipelineCost out;
    out.step_seconds = r.pipeline_seconds;
    double busiest = 0;
    for (const StageStats& st : r.stages)
        busiest = std::max(busiest, st.busy_seconds);
    out.bubble_seconds = std::max(0.0, r.pipeline_seconds - busiest);
    out.bubble_fraction = r.bubble_fraction;
    out.bubble_overhead = r.bubble_overhead;
    out.p2p_exposed_seconds = r.p2p_exposed_seconds;
    return out;
}

// Keeps this evaluation in the round-robin memo.
void remember(SimCache& c, const ScheduleParams& params, std::span<const double> links,
              std::span<const StageTimes> stages, const PipelineCost& cost)
{
    MemoEntry& e = c.memo[c.next];
    c.next = (c.next + 1) % SimCache::kMemo;
    e.used = true;
    e.params = params;
    e.links.assign(links.begin(), links.end());
    e.stages.assign(stages.begin(), stages.end());
    e.cost = cost;
    e.inflight.resize(stages.size());
    for (std::size_t i = 0; i < stages.size(); ++i)
        e.inflight[i] = c.result.stages[i].peak_activation_units;
}

} // namespace

PipelineCost pipelineCost(Schedule schedule, int microbatches, int virtual_stages,
                          std::span<const StageTimes> stages, double p2p_seconds,
                          std::span<double> inflight, PipelineTimeline* timeline)
{
    thread_local std::vector<double> links;
    links.assign(stages.size(), p2p_seconds);
    return pipelineCost(schedule, microbatches, virtual_stages, stages,
                        std::span<const double>(links), inflight, timeline);
}

PipelineCost pipelineCost(Schedule schedule, int microbatches, int virtual_stages,
                          std::span<const StageTimes> stages, std::span<const double> p2p_links,
                          std::span<double> inflight, PipelineTimeline* timeline)
{
    const int p = int(stages.size());
    if (timeline)
        timeline->simulated = false;
    if (p == 0)
        return PipelineCost{};
    if (p2p_links.size() != stages.size())
        throw InputError("parallel.pp", "pipelineCost: " + std::to_string(p2p_links.size()) +
                                            " p2p links for " + std::to_string(p) + " stages");
    ParallelPlan plan;
    plan.schedule = schedule;
    plan.pp = p;
    plan.virtual_stages = std::max(1, virtual_stages);
    const ScheduleParams params = scheduleParamsFor(plan, std::max(1, microbatches));
    const auto closedForm = [&] {
        return closedFormPipelineCost(schedule, microbatches, virtual_stages, stages,
                                      meanOf(p2p_links), inflight);
    };
    if (scheduleOpCount(params) > kMaxPipelineOps)
        return closedForm();

    thread_local SimCache c;
    const std::size_t n = std::min(inflight.size(), std::size_t(p));
    if (const MemoEntry* e = timeline ? nullptr : findMemo(c, params, p2p_links, stages)) {
        std::copy_n(e->inflight.begin(), n, inflight.begin());
        return e->cost;
    }
    if (!ensureSchedule(c, params))
        return closedForm(); // validate() names why; evaluate() still gives numbers
    fillTimings(c.schedule, stages, p2p_links, c.timings);
    c.timings.record_memory_timeline = timeline != nullptr;
    c.sim.run(c.schedule, c.timings, c.result);

    const PipelineCost out = costOf(c.result);
    for (std::size_t i = 0; i < n; ++i)
        inflight[i] = c.result.stages[i].peak_activation_units;
    remember(c, params, p2p_links, stages, out);
    if (timeline) {
        timeline->schedule = c.schedule;
        timeline->result = c.result;
        timeline->simulated = true;
    }
    return out;
}

} // namespace paralens
