// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The plan map: the best plan of every (TP, PP) pair for one problem (docs/plan-map.md).
#include "core/collective.h"
#include "core/scenario.h"
#include "core/search.h"

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace paralens {

/// One (TP, PP) cell: the fastest plan over every other setting the search varies (CP, DP,
/// EP, schedule and v, ZeRO and its shard group, offload, micro-batch, recompute, sequence
/// parallelism), or why there is none.
struct PlanMapCell
{
    int tp = 1;
    int pp = 1;
    std::uint64_t evaluated = 0; ///< runnable plans of the cell (SearchResult::evaluated)
    std::uint64_t feasible = 0;  ///< of those, the plans that fit
    std::optional<SearchPlan> best;
    /// Why the cell has no plan: the validate() rule id and message of the cell's plainest
    /// plan (CP 1, DP the rest, 1F1B) when no plan of it can run, or rule "does_not_fit" when
    /// plans run but none fits. Empty when best is set.
    std::string rule;
    std::string reason;
};

struct PlanMap
{
    std::vector<int> tp; ///< the columns, ascending
    std::vector<int> pp; ///< the rows, ascending
    /// Row-major, one row per pp: cells[row · tp.size() + column].
    std::vector<PlanMapCell> cells;
    std::optional<std::size_t> best; ///< index of the fastest cell, when any plan fits
    bool cancelled = false;
    double seconds = 0;

    const PlanMapCell* at(int tp, int pp) const;
};

struct PlanMapOptions
{
    unsigned threads = 0; ///< search threads per cell; 0 = all cores
    const std::atomic<bool>* cancel = nullptr;
    const MeasuredPerformance* measured = nullptr;
    /// As SearchOptions::rescore: each cell's best plan re-scored with the full evaluate(), so
    /// a cell shows what the explorer shows once it is applied.
    bool rescore = true;
};

/// The columns: the divisors of the GPU count up to twice the scale-up domain (TP beyond
/// one node shows why it loses), and the current TP.
std::vector<int> planMapTpAxis(const Scenario& s);
/// The rows: the divisors of the GPU count up to the layer count, and the current PP.
std::vector<int> planMapPpAxis(const Scenario& s);

/// The search space of one cell: `base`'s problem with tp and pp pinned.
SearchSpace planMapCellSpace(const Scenario& base, int tp, int pp);

/// Searches every cell (search(), screening constants, top K 1). Throws InputError when the
/// problem itself is broken, as search() does. Cancelled: the cells not reached stay empty.
PlanMap planMap(const Scenario& base, const PlanMapOptions& options = {});

/// Whether two scenarios pose the same plan-map problem: the same model, cluster, GPU count
/// and the training settings the search does not vary (so a plan edit does not recompute it).
bool samePlanMapProblem(const Scenario& a, const Scenario& b);

} // namespace paralens
