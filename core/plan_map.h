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

/// The map's third axis (docs/plan-map.md): a setting the search otherwise varies, held at one
/// value in every cell, so that the map shows the best TP × PP plan at that value (a slice of
/// the TP × PP × axis cube). None: every setting free.
enum class PlanMapAxis : std::uint8_t
{
    None,
    MicroBatch,    ///< training.micro_batch
    Zero,          ///< parallel.zero, 0-3
    Recompute,     ///< training.recompute, the Recompute enum's value (0 none, 1 selective, 2 full)
    VirtualStages, ///< parallel.virtual_stages (1 = one chunk per device)
    Cp,            ///< parallel.cp
};

/// The third axis and the value it is held at.
struct PlanMapFixed
{
    PlanMapAxis axis = PlanMapAxis::None;
    int value = 0;
    bool operator==(const PlanMapFixed&) const = default;
};

/// Every axis, in the order the view lists them.
inline constexpr PlanMapAxis kPlanMapAxes[] = {PlanMapAxis::None,          PlanMapAxis::MicroBatch,
                                               PlanMapAxis::Zero,          PlanMapAxis::Recompute,
                                               PlanMapAxis::VirtualStages, PlanMapAxis::Cp};

/// The axis's name in words ("micro-batch", "ZeRO stage", ...); "" for None.
std::string planMapAxisName(PlanMapAxis axis);
/// A value of the axis in words: "2", "ZeRO 3" is spelled "3", recompute "selective".
std::string planMapAxisValueText(PlanMapAxis axis, int value);
/// The values the axis can be held at for this problem, ascending: micro-batch the divisors of
/// the global batch; ZeRO 0-3; recompute none, selective, full; virtual stages 1 and the
/// interleaved degrees of the shallowest pipeline (2 .. layers / 2); CP cpDegrees() of the GPU
/// count. Empty for None.
std::vector<int> planMapAxisValues(const Scenario& s, PlanMapAxis axis);
/// The scenario's own value on the axis (0 for None).
int planMapAxisValueOf(const Scenario& s, PlanMapAxis axis);
/// Whether a plan has the fixed value (always, for None).
bool planMapHolds(const ParallelPlan& p, const TrainingSettings& t, const PlanMapFixed& fixed);

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
    PlanMapFixed fixed;              ///< the third axis every cell was held at
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
    /// The third axis: every cell's search has this setting pinned.
    PlanMapFixed fixed;
};

/// The columns: the divisors of the GPU count up to twice the scale-up domain (TP beyond
/// one node shows why it loses), and the current TP.
std::vector<int> planMapTpAxis(const Scenario& s);
/// The rows: the divisors of the GPU count up to the layer count, and the current PP.
std::vector<int> planMapPpAxis(const Scenario& s);

/// The search space of one cell: `base`'s problem with tp and pp pinned, and the fixed axis.
SearchSpace planMapCellSpace(const Scenario& base, int tp, int pp, const PlanMapFixed& fixed = {});

/// Searches every cell (search(), screening constants, top K 1). Throws InputError when the
/// problem itself is broken, as search() does. Cancelled: the cells not reached stay empty.
PlanMap planMap(const Scenario& base, const PlanMapOptions& options = {});

/// Whether two scenarios pose the same plan-map problem: the same model, cluster, GPU count
/// and the training settings the search does not vary (so a plan edit does not recompute it).
bool samePlanMapProblem(const Scenario& a, const Scenario& b);

} // namespace paralens
