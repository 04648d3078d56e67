// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Why a plan does not fit in GPU memory, and the nearest plans that do (docs/fit-advice.md).
#include "core/collective.h"
#include "core/scenario.h"
#include "core/search.h"

#include <string>
#include <vector>

namespace paralens {

/// One term of a stage's memory (StageMemory), as the breakdown chart names it.
enum class MemoryTerm
{
    Parameters,
    Gradients,
    OptimizerStates,
    Activations,
    CommBuffers,
    RuntimeOverhead,
};
std::string_view toString(MemoryTerm t); ///< "parameters", "optimizer states", ...

struct MemoryShare
{
    MemoryTerm term = MemoryTerm::Parameters;
    double bytes = 0;
    double share = 0; ///< of the stage's total, 0..1
};

/// A setting the advice changes. DP is never changed alone: it follows TP, PP and CP so that
/// tp·pp·cp·dp stays the GPU count; sequence parallelism follows TP (on when tp > 1) and the
/// schedule follows PP (1F1B when a pipeline appears or disappears, if the old one cannot run).
enum class PlanSetting
{
    Zero,
    Recompute,
    MicroBatch,
    Offload,
    TP,
    PP,
    CP,
};

/// PlanChange's Recompute value for full recompute of some layers (recompute_num_layers).
inline constexpr int kRecomputeSomeLayers = 3;

/// One changed setting of a suggestion, with its old and new value (Recompute as its enum's
/// integer or kRecomputeSomeLayers, Offload as 0/1).
struct PlanChange
{
    PlanSetting setting = PlanSetting::Zero;
    int from = 0;
    int to = 0;
};
/// "ZeRO 0 → 3", "recompute selective → full", "TP 1 → 8", "optimizer offload on".
std::string describe(const PlanChange& c);
/// What else changed with the settings (DP rebalanced, the micro-batch or schedule made to
/// fit, sequence parallelism following TP: "SP on"), joined by ", "; empty when nothing did.
std::string consequences(const Scenario& from, const Scenario& to,
                         const std::vector<PlanChange>& changes);

struct FitSuggestion
{
    Scenario scenario;               ///< the whole scenario, ready to apply
    std::vector<PlanChange> changes; ///< one or two settings the user would change
    std::string summary; ///< the changes described, then their consequences in parentheses
    double tokens_per_second = 0;
    double peak_bytes = 0; ///< peak over the stages, bytes per GPU
    double step_seconds = 0;
    double mfu = 0;
};

struct FitAdvice
{
    bool runnable = false; ///< the plan passes validate(); nothing else is filled otherwise
    bool fits = false;
    double capacity_bytes = 0;
    double peak_bytes = 0;
    int worst_stage = 0; ///< the stage with the peak (Estimate::peak_stage)
    /// The worst stage's terms, largest first (all six, zero ones included).
    std::vector<MemoryShare> terms;
    /// Plans that fit and pass validate(), one or two settings away, fastest first; empty when
    /// the plan fits. At most two change the same settings (so the list shows different ways
    /// out), and the fastest one-setting fix, when there is one, is always listed.
    std::vector<FitSuggestion> suggestions;
    int candidates = 0; ///< plans tried (runnable ones evaluated)
};

struct FitAdviceOptions
{
    int max_suggestions = 8; ///< the panel's rows; also bounds the full (simulated) evaluations
    const MeasuredPerformance* measured = nullptr;
};

/// Evaluates `s` and, when it runs but does not fit, tries every one- and two-setting change
/// (ZeRO 1–3, more recomputation, smaller micro-batches, optimizer offload, each TP / PP / CP
/// degree the model and GPU count allow with DP rebalanced) — a few hundred plans at most,
/// screened with the search's closed-form constants (screeningConstants()); the fastest are
/// re-scored with the full evaluate(), so every figure equals what the explorer shows.
FitAdvice adviseFit(const Scenario& s, const FitAdviceOptions& options = {});

} // namespace paralens
