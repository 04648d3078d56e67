// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/plan_options.h"

#include "core/spec_io.h"

#include <algorithm>
#include <limits>

namespace paralens {
namespace {

/// Divisors of n (ascending) that are at most limit and pass keep(d); 1 always stays.
template <typename Keep>
std::vector<int> divisorsWhere(std::int64_t n, std::int64_t limit, Keep keep)
{
    std::vector<int> out{1};
    if (n <= 0)
        return out;
    limit = std::min<std::int64_t>(limit, std::numeric_limits<int>::max());
    out.reserve(64);       // one allocation for the usual GPU and batch counts
    std::vector<int> high; // the partners n / d, descending
    high.reserve(64);
    for (std::int64_t d = 1; d * d <= n; ++d) {
        if (n % d != 0)
            continue;
        if (d > 1 && d <= limit && keep(d))
            out.push_back(int(d));
        const std::int64_t q = n / d;
        if (q != d && q > 1 && q <= limit && keep(q))
            high.push_back(int(q));
    }
    out.insert(out.end(), high.rbegin(), high.rend());
    return out;
}

} // namespace

ParallelPlan withSchedule(ParallelPlan plan, Schedule s)
{
    plan.schedule = s;
    switch (traitsOf(s).chunks) {
    case ChunkRule::One:
        plan.virtual_stages = 1;
        break;
    case ChunkRule::Two:
        plan.virtual_stages = 2;
        break;
    case ChunkRule::Free:
        plan.virtual_stages = std::max(2, plan.virtual_stages);
        break;
    }
    return plan;
}

std::int64_t gpusLeft(std::int64_t gpus, std::int64_t used)
{
    return gpus > 0 && used > 0 && gpus % used == 0 ? gpus / used : 0;
}

std::vector<int> tpDegrees(const ModelSpec& m, std::int64_t gpus_left, std::int64_t max_tp)
{
    const std::int64_t heads = m.heads, kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
    if (heads <= 0)
        return {1};
    return divisorsWhere(gpus_left, max_tp,
                         [&](std::int64_t t) { return heads % t == 0 && kv % t == 0; });
}

std::vector<int> cpDegrees(std::int64_t seq_len, std::int64_t gpus_left)
{
    return divisorsWhere(gpus_left, gpus_left,
                         [&](std::int64_t c) { return seq_len > 0 && seq_len % (2 * c) == 0; });
}

std::vector<int> ppDegrees(int layers, std::int64_t gpus_left, int virtual_stages)
{
    const std::int64_t v = std::max(1, virtual_stages);
    return divisorsWhere(gpus_left, std::int64_t(layers) / v, [](std::int64_t) { return true; });
}

std::vector<int> dpDegrees(std::int64_t global_batch, std::int64_t micro_batch,
                           std::int64_t model_parallel)
{
    if (micro_batch <= 0 || model_parallel <= 0)
        return {1};
    return divisorsWhere(global_batch / micro_batch, bounds::kMaxGpus / model_parallel,
                         [](std::int64_t) { return true; });
}

std::vector<int> epDegrees(const ModelSpec& m, std::int64_t dp_cp)
{
    if (!m.isMoe())
        return {1};
    return divisorsWhere(m.moe.experts, m.moe.experts,
                         [&](std::int64_t e) { return dp_cp > 0 && dp_cp % e == 0; });
}

std::int64_t expertRanks(std::int64_t tp, std::int64_t cp, std::int64_t dp, int expert_tp)
{
    if (expert_tp <= 0)
        return dp * cp;
    const std::int64_t ranks = tp * cp * dp;
    return ranks % expert_tp == 0 ? ranks / expert_tp : 0;
}

std::vector<int> virtualStageDegrees(Schedule s, int pp, int layers, int max_v)
{
    const ScheduleTraits t = traitsOf(s);
    const std::int64_t fit = pp > 0 ? std::int64_t(layers) / pp : 0; // largest v with pp·v <= L
    if (t.chunks == ChunkRule::One)
        return fit >= 1 ? std::vector<int>{1} : std::vector<int>{};
    if (pp < 2)
        return {};
    if (t.chunks == ChunkRule::Two)
        return fit >= 2 ? std::vector<int>{2} : std::vector<int>{};
    const std::int64_t top = max_v > 0 ? std::min<std::int64_t>(fit, max_v) : fit;
    std::vector<int> out;
    out.reserve(std::size_t(std::max<std::int64_t>(0, top - 1)));
    for (std::int64_t v = 2; v <= top; ++v)
        out.push_back(int(v));
    return out;
}

PlanDegrees planDegrees(const Scenario& s)
{
    const ParallelPlan& p = s.parallel;
    const std::int64_t tp = p.tp, pp = p.pp, cp = p.cp;
    PlanDegrees d;
    d.tp = tpDegrees(s.model, gpusLeft(s.gpus, pp * cp), std::max(1, s.cluster.scale_up_domain));
    d.pp = ppDegrees(s.model.layers, gpusLeft(s.gpus, tp * cp), p.virtual_stages);
    d.cp = cpDegrees(s.training.seq_len, gpusLeft(s.gpus, tp * pp));
    d.dp = dpDegrees(s.training.global_batch, s.training.micro_batch, tp * pp * cp);
    d.ep = epDegrees(s.model, expertRanks(tp, cp, p.dp, p.expert_tp));
    d.virtual_stages = virtualStageDegrees(p.schedule, p.pp, s.model.layers);
    return d;
}

} // namespace paralens
