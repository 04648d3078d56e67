// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/plan_map.h"
#include "core/plan_options.h"
#include "core/scenario_io.h"
#include "core/spec_io.h"
#include "core/units.h"
#include "core/validate.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace paralens {
namespace {

std::vector<int> divisorsUpTo(int n, int limit)
{
    std::vector<int> d;
    for (int i = 1; i <= std::min(n, limit); ++i)
        if (n % i == 0)
            d.push_back(i);
    return d;
}

std::vector<int> withValue(std::vector<int> axis, int v)
{
    if (v >= 1 && std::find(axis.begin(), axis.end(), v) == axis.end()) {
        axis.push_back(v);
        std::sort(axis.begin(), axis.end());
    }
    return axis;
}

/// Sets the fixed axis's value on a plan.
void hold(ParallelPlan& p, TrainingSettings& t, const PlanMapFixed& f)
{
    switch (f.axis) {
    case PlanMapAxis::None:
        break;
    case PlanMapAxis::MicroBatch:
        t.micro_batch = f.value;
        break;
    case PlanMapAxis::Zero:
        p.zero = f.value;
        break;
    case PlanMapAxis::Recompute:
        t.recompute = Recompute(std::clamp(f.value, 0, 2));
        break;
    case PlanMapAxis::VirtualStages:
        p.virtual_stages = f.value;
        if (f.value > 1)
            p.schedule = Schedule::Interleaved1F1B;
        break;
    case PlanMapAxis::Cp:
        p.cp = f.value;
        break;
    }
}

/// The cell's plainest plan (no CP, DP the rest, 1F1B, micro-batch 1, and the fixed axis's
/// value): the first rule it breaks says why no plan of the cell runs.
void explainNoPlan(const Scenario& base, const PlanMapFixed& fixed, PlanMapCell& c)
{
    Scenario s = base;
    s.parallel = ParallelPlan{};
    s.parallel.tp = c.tp;
    s.parallel.pp = c.pp;
    s.parallel.sequence_parallel = c.tp > 1;
    s.training.micro_batch = 1;
    hold(s.parallel, s.training, fixed);
    const std::int64_t dp =
        gpusLeft(base.gpus, std::int64_t(c.tp) * c.pp * std::max(1, s.parallel.cp));
    s.parallel.dp = dp > 0 ? int(dp) : 1;
    const std::vector<ValidationError> errors = validate(s);
    if (!errors.empty()) {
        c.rule = errors.front().rule;
        c.reason = errors.front().message;
    } else {
        c.rule = "no_runnable_plan";
        c.reason = "no setting of the other dimensions gives a plan that runs";
    }
}

void explainNoFit(const Scenario& base, PlanMapCell& c)
{
    char gib[32];
    std::snprintf(gib, sizeof gib, "%.0f", base.cluster.gpu.memory_gib);
    c.rule = "does_not_fit";
    c.reason = "none of the " + std::to_string(c.evaluated) + " plans fits in " + gib + " GiB";
}

} // namespace

std::string planMapAxisName(PlanMapAxis axis)
{
    switch (axis) {
    case PlanMapAxis::None:
        return {};
    case PlanMapAxis::MicroBatch:
        return "micro-batch";
    case PlanMapAxis::Zero:
        return "ZeRO stage";
    case PlanMapAxis::Recompute:
        return "recompute";
    case PlanMapAxis::VirtualStages:
        return "virtual stages";
    case PlanMapAxis::Cp:
        return "CP";
    }
    return {};
}

std::string planMapAxisValueText(PlanMapAxis axis, int value)
{
    if (axis == PlanMapAxis::Recompute)
        return std::string(toString(Recompute(std::clamp(value, 0, 2))));
    return std::to_string(value);
}

std::vector<int> planMapAxisValues(const Scenario& s, PlanMapAxis axis)
{
    switch (axis) {
    case PlanMapAxis::None:
        return {};
    case PlanMapAxis::MicroBatch:
        return divisorsUpTo(std::max(1, s.training.global_batch),
                            std::max(1, s.training.global_batch));
    case PlanMapAxis::Zero:
        return {0, 1, 2, 3};
    case PlanMapAxis::Recompute:
        return {int(Recompute::None), int(Recompute::Selective), int(Recompute::Full)};
    case PlanMapAxis::VirtualStages: {
        std::vector<int> v{1};
        for (int d : virtualStageDegrees(Schedule::Interleaved1F1B, 2, std::max(1, s.model.layers)))
            v.push_back(d);
        return v;
    }
    case PlanMapAxis::Cp:
        return cpDegrees(s.training.seq_len, std::max(1, s.gpus));
    }
    return {};
}

int planMapAxisValueOf(const Scenario& s, PlanMapAxis axis)
{
    switch (axis) {
    case PlanMapAxis::None:
        return 0;
    case PlanMapAxis::MicroBatch:
        return s.training.micro_batch;
    case PlanMapAxis::Zero:
        return s.parallel.zero;
    case PlanMapAxis::Recompute:
        return int(s.training.recompute);
    case PlanMapAxis::VirtualStages:
        return chunksPerDevice(s.parallel.schedule, s.parallel.virtual_stages);
    case PlanMapAxis::Cp:
        return s.parallel.cp;
    }
    return 0;
}

bool planMapHolds(const ParallelPlan& p, const TrainingSettings& t, const PlanMapFixed& fixed)
{
    Scenario s;
    s.parallel = p;
    s.training = t;
    return fixed.axis == PlanMapAxis::None || planMapAxisValueOf(s, fixed.axis) == fixed.value;
}

const PlanMapCell* PlanMap::at(int t, int p) const
{
    for (const PlanMapCell& c : cells)
        if (c.tp == t && c.pp == p)
            return &c;
    return nullptr;
}

std::vector<int> planMapTpAxis(const Scenario& s)
{
    return withValue(divisorsUpTo(s.gpus, 2 * std::max(1, s.cluster.scale_up_domain)),
                     s.parallel.tp);
}

std::vector<int> planMapPpAxis(const Scenario& s)
{
    return withValue(divisorsUpTo(s.gpus, std::max(1, s.model.layers)), s.parallel.pp);
}

SearchSpace planMapCellSpace(const Scenario& base, int tp, int pp, const PlanMapFixed& fixed)
{
    SearchSpace sp;
    sp.base = base;
    sp.tp = tp;
    sp.pp = pp;
    switch (fixed.axis) {
    case PlanMapAxis::None:
        break;
    case PlanMapAxis::MicroBatch:
        sp.micro_batch = fixed.value;
        break;
    case PlanMapAxis::Zero:
        sp.zero = fixed.value;
        break;
    case PlanMapAxis::Recompute:
        sp.recompute = Recompute(std::clamp(fixed.value, 0, 2));
        break;
    case PlanMapAxis::VirtualStages:
        // v chunks per device: 1 is every one-chunk schedule (GPipe, 1F1B, ZB-H1), 2 also the
        // V schedules, more only interleaved 1F1B; the search pairs each schedule with its v.
        sp.virtual_stages = fixed.value;
        break;
    case PlanMapAxis::Cp:
        sp.cp = fixed.value;
        break;
    }
    return sp;
}

PlanMap planMap(const Scenario& base, const PlanMapOptions& options)
{
    const auto start = std::chrono::steady_clock::now();
    PlanMap map;
    map.tp = planMapTpAxis(base);
    map.pp = planMapPpAxis(base);
    map.fixed = options.fixed;
    SearchOptions so;
    so.top_k = 1;
    so.threads = options.threads;
    so.cancel = options.cancel;
    so.measured = options.measured;
    so.rescore = options.rescore;
    map.cells.reserve(map.tp.size() * map.pp.size());
    for (int pp : map.pp)
        for (int tp : map.tp) {
            PlanMapCell& c = map.cells.emplace_back();
            c.tp = tp;
            c.pp = pp;
            if (options.cancel && options.cancel->load(std::memory_order_relaxed)) {
                map.cancelled = true;
                continue;
            }
            const SearchResult r = search(planMapCellSpace(base, tp, pp, options.fixed), so);
            map.cancelled = map.cancelled || r.cancelled;
            c.evaluated = r.evaluated;
            c.feasible = r.feasible;
            if (!r.results.empty())
                c.best = r.results.front();
            else if (r.cancelled)
                continue;
            else if (r.evaluated == 0)
                explainNoPlan(base, options.fixed, c);
            else
                explainNoFit(base, c);
        }
    for (std::size_t i = 0; i < map.cells.size(); ++i)
        if (map.cells[i].best &&
            (!map.best || rankedBefore(*map.cells[i].best, *map.cells[*map.best].best)))
            map.best = i;
    map.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return map;
}

bool samePlanMapProblem(const Scenario& a, const Scenario& b)
{
    // The plan fields the search keeps from its base (it resets the rest).
    TrainingSettings ta = a.training, tb = b.training;
    ta.micro_batch = tb.micro_batch = 1;
    ta.recompute = tb.recompute = Recompute::None;
    return a.model == b.model && a.cluster == b.cluster && a.gpus == b.gpus && ta == tb &&
           a.parallel.expert_tp == b.parallel.expert_tp && a.calibration == b.calibration;
}

} // namespace paralens
