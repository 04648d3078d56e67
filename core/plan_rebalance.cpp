// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/plan_rebalance.h"
#include "core/plan_options.h"

#include <algorithm>

namespace paralens {
namespace {

/// The largest value in `allowed` (ascending) at most `current`; 1 when none is.
int largestAtMost(const std::vector<int>& allowed, int current)
{
    int best = 1;
    for (int v : allowed)
        if (v <= current)
            best = v;
    return best;
}

void note(std::vector<std::string>& changes, const char* name, int from, int to)
{
    if (from != to)
        changes.push_back(std::string(name) + " " + std::to_string(from) + " → " +
                          std::to_string(to));
}

bool divides(std::int64_t used, std::int64_t gpus)
{
    return gpusLeft(gpus, used) > 0;
}

} // namespace

Rebalanced rebalanceForGpus(const Scenario& s, int gpus)
{
    Rebalanced out{s, {}};
    if (gpus < 1)
        return out;
    Scenario& r = out.scenario;
    ParallelPlan& p = r.parallel;
    const ParallelPlan before = s.parallel;
    r.gpus = gpus;
    const std::int64_t n = gpus;
    auto used = [&] { return std::int64_t{p.tp} * p.pp * p.cp; };
    // Not whole nodes: no plan can run there, so the model-parallel degrees are not worth
    // giving up for it; validate() names the count.
    const int perNode = std::max(1, r.cluster.gpus_per_node);
    if (gpus > perNode && gpus % perNode != 0) {
        if (divides(used(), n))
            p.dp = static_cast<int>(gpusLeft(n, used()));
        note(out.changes, "DP", before.dp, p.dp);
        return out;
    }
    // Lowered in this order: PP costs only bubble, CP only ring exchanges, TP the most.
    if (!divides(used(), n))
        p.pp = largestAtMost(
            ppDegrees(r.model.layers, gpusLeft(n, std::int64_t{p.tp} * p.cp), p.virtual_stages),
            p.pp);
    if (!divides(used(), n))
        p.cp = largestAtMost(cpDegrees(r.training.seq_len, gpusLeft(n, std::int64_t{p.tp} * p.pp)),
                             p.cp);
    if (!divides(used(), n))
        p.tp = largestAtMost(tpDegrees(r.model, gpusLeft(n, std::int64_t{p.pp} * p.cp),
                                       std::max(1, r.cluster.scale_up_domain)),
                             p.tp);
    if (divides(used(), n))
        p.dp = static_cast<int>(gpusLeft(n, used()));
    if (p.pp != before.pp) {
        if (p.pp < 2 && usesChunks(p.schedule))
            p = withSchedule(p, Schedule::OneF1B);
        const std::vector<int> vs = virtualStageDegrees(p.schedule, p.pp, r.model.layers);
        if (!vs.empty() && p.virtual_stages > vs.back())
            p.virtual_stages = vs.back();
    }
    p.ep = largestAtMost(epDegrees(r.model, expertRanks(p.tp, p.cp, p.dp, p.expert_tp)), p.ep);
    note(out.changes, "TP", before.tp, p.tp);
    note(out.changes, "PP", before.pp, p.pp);
    note(out.changes, "CP", before.cp, p.cp);
    note(out.changes, "DP", before.dp, p.dp);
    note(out.changes, "EP", before.ep, p.ep);
    if (p.schedule != before.schedule)
        out.changes.push_back("schedule " + std::string(toString(before.schedule)) + " → " +
                              std::string(toString(p.schedule)));
    note(out.changes, "v", before.virtual_stages, p.virtual_stages);
    return out;
}

} // namespace paralens
