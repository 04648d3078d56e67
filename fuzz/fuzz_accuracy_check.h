// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What fuzz_runs and fuzz_iteration_csv check on every run set they read: the report lists
// every run, failures name their reason, errors and summaries are finite.
#include "core/accuracy.h"

#include <cmath>
#include <cstdlib>

namespace paralens::fuzzcheck {

inline void checkReport(const RunSet& set)
{
    for (const MeasuredRun& r : set.runs)
        if (r.name.empty() || r.measured.empty())
            std::abort();
    if (set.runs.size() > 4) // evaluating is fuzz_estimate's job: keep inputs fast
        return;
    const AccuracyReport rep = validateRuns(set.runs, ModelConstants{});
    if (rep.rows.size() < set.runs.size() ||
        std::size_t(rep.summary.runs + rep.summary.failed) != rep.rows.size())
        std::abort();
    for (const RunResult& r : rep.rows)
        if (r.failure.empty() && (!std::isfinite(r.error) || !(r.predicted > 0)))
            std::abort();
    if (!std::isfinite(rep.summary.mape) || !std::isfinite(rep.summary.median_ape))
        std::abort();
    for (const GroupSummary& g : rep.groups)
        if (!(std::abs(g.spearman) <= 1 + 1e-12) || g.best_plan_rank < 1 ||
            g.best_plan_rank > g.runs || !(g.best_plan_slowdown >= 0))
            std::abort();
}

} // namespace paralens::fuzzcheck
