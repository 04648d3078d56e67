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

/// The cell's plainest plan (no CP, DP the rest, 1F1B, micro-batch 1): the first rule it
/// breaks says why no plan of the cell runs.
void explainNoPlan(const Scenario& base, PlanMapCell& c)
{
    Scenario s = base;
    s.parallel = ParallelPlan{};
    s.parallel.tp = c.tp;
    s.parallel.pp = c.pp;
    s.parallel.sequence_parallel = c.tp > 1;
    const std::int64_t dp = gpusLeft(base.gpus, std::int64_t(c.tp) * c.pp);
    s.parallel.dp = dp > 0 ? int(dp) : 1;
    s.training.micro_batch = 1;
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

SearchSpace planMapCellSpace(const Scenario& base, int tp, int pp)
{
    SearchSpace sp;
    sp.base = base;
    sp.tp = tp;
    sp.pp = pp;
    return sp;
}

PlanMap planMap(const Scenario& base, const PlanMapOptions& options)
{
    const auto start = std::chrono::steady_clock::now();
    PlanMap map;
    map.tp = planMapTpAxis(base);
    map.pp = planMapPpAxis(base);
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
            const SearchResult r = search(planMapCellSpace(base, tp, pp), so);
            map.cancelled = map.cancelled || r.cancelled;
            c.evaluated = r.evaluated;
            c.feasible = r.feasible;
            if (!r.results.empty())
                c.best = r.results.front();
            else if (r.cancelled)
                continue;
            else if (r.evaluated == 0)
                explainNoPlan(base, c);
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
