// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/collective.h"
#include "core/constants.h"
#include "core/scenario.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace paralens {

/// ModelConstants{} with the pipeline simulator off (closed-form bubble and in-flight counts).
ModelConstants screeningConstants();

/// Default limit on the plans one search enumerates (docs/limits.md).
inline constexpr std::uint64_t kMaxSearchPlans = 200'000'000;

/// The problem a search solves and the dimensions it may vary (docs/search.md).
///
/// `base` gives the model, cluster, GPU count and the training settings that are not searched
/// (seq_len, global_batch, precision, flash_attention, optimizer, framework). Its parallel plan,
/// micro_batch and recompute are ignored: they are searched, unless pinned below.
///
/// The enumerated space, in canonical form (one spelling per distinct plan), with the degrees
/// of core/plan_options.h, each given the ones before it:
/// - tp: tpDegrees (divisors of gpus up to max_tp, default the scale-up domain, dividing heads
///   and kv_heads);
/// - cp: cpDegrees of gpus / tp (seq_len a multiple of 2·cp);
/// - pp: ppDegrees of gpus / (tp·cp) (at most the layer count); dp = gpus / (tp·cp·pp), a
///   divisor of global_batch;
/// - ep (MoE only): epDegrees (divisors of the expert count dividing dp·cp);
/// - schedule: pp = 1 has no pipeline and is run as 1f1b; pp >= 2 tries every schedule of
///   kAllSchedules with each v of virtualStageDegrees (interleaved-1f1b: 2..min(layers/pp,
///   max_virtual_stages); zb-v and dualpipe-v: 2; the others: 1);
/// - zero 0–3; for zero >= 1 the shard group is the whole DP group (spelled 0) or any proper
///   divisor of dp (hybrid sharding);
/// - optimizer offload off/on; micro_batch: divisors of global_batch / dp;
/// - recompute none/selective/full, of every layer (the base's recompute_num_layers is dropped);
/// sequence parallel off/on when tp > 1 (a no-op at tp = 1). A pinned dimension takes only its
/// pinned value. Every plan is checked with isRunnable().
///
/// Pruning (SearchOptions::prune, on by default) has exactly one rule, and it never changes
/// the answer: for each (tp, cp, pp, dp, ep, schedule, v) the stage parameters are computed
/// once (splitLayers, stageParameters: the functions evaluate() uses); for each (zero, shard
/// group, offload) the bound  max over stages of modelStateBytes(dense) + modelStateBytes(expert)
/// + ModelConstants::cuda_context_bytes  is taken with the largest sharding the plan allows
/// (shard group × cp, also for expert states, which evaluate() shards over shard group × cp / ep
/// at most as finely). A stage's memory in evaluate() is that plus activations, buffers and
/// temporaries, all >= 0, so when the bound exceeds the capacity no micro-batch size,
/// recomputation or sequence-parallel choice can fit: those plans are counted (evaluated,
/// pruned) but not scored. Plans that do not fit are never in the top K nor on the front, so the
/// results equal the exhaustive scoring's (test_search checks prune on/off and a brute force).
struct SearchSpace
{
    Scenario base;
    std::optional<int> tp, pp, dp, cp, ep, virtual_stages, micro_batch, zero, shard_group;
    std::optional<Schedule> schedule;
    std::optional<Recompute> recompute;
    std::optional<bool> sequence_parallel, offload_optimizer;
    int max_tp = 0;             ///< largest TP tried; 0 = the cluster's scale-up domain
    int max_virtual_stages = 0; ///< largest interleaved v tried; 0 = no limit (layers / pp)
};

/// How a search runs.
struct SearchOptions
{
    int top_k = 10;       ///< plans kept in SearchResult::results
    unsigned threads = 0; ///< worker threads; 0 = std::thread::hardware_concurrency()
    /// Called on the thread that called search(), about every progress_interval_seconds and
    /// once at the end, with the share of the space done (0..1) and the plans evaluated so far.
    /// Return false to cancel: the workers stop within milliseconds and the callback is not
    /// called again (nor after the cancel flag is set).
    std::function<bool(double fraction, std::uint64_t evaluated)> progress;
    double progress_interval_seconds = 0.02;
    /// Optional external cancel flag (e.g. a GUI Cancel button), checked by every worker
    /// between plans.
    const std::atomic<bool>* cancel = nullptr;
    /// Measured performance passed to evaluate() (nullptr = datasheet figures).
    const MeasuredPerformance* measured = nullptr;
    /// Constants every plan is screened with. The default prices the pipeline bubble with
    /// the closed forms (docs/formulas.md §6), about 40x cheaper than the event simulator.
    ModelConstants screening = screeningConstants();
    /// Re-score the kept plans (top K, front, sample) with the full evaluate(), simulator
    /// included, so every figure returned equals what `paralens eval` shows for that plan;
    /// the top K is then re-sorted and the front re-filtered. Off only for tests that compare
    /// the screening with a brute-force loop.
    bool rescore = true;
    /// A space with more runnable-or-not plans than this is refused with an InputError
    /// before any is scored (about two minutes of work on two cores); pin dimensions instead.
    std::uint64_t max_plans = kMaxSearchPlans;
    /// Skip the full evaluate() of plans whose model states alone exceed the GPU memory (they
    /// cannot fit, so they are never in the top K or on the front). Off only for tests.
    bool prune = true;
    /// Size of a random sample of fitting plans kept for plotting (SearchResult::sample); 0 =
    /// none. Reservoir sampling per worker: bounded memory, not reproducible between runs.
    int sample = 0;
};

/// One scored plan.
struct SearchPlan
{
    ParallelPlan parallel;
    TrainingSettings training;
    double tokens_per_second = 0;
    double mfu = 0;
    double peak_bytes = 0; ///< peak over the pipeline stages, bytes per GPU
    double step_seconds = 0;
    std::uint64_t index = 0; ///< position in the enumeration order (breaks ties)
};

struct SearchResult
{
    std::uint64_t evaluated = 0; ///< runnable plans accounted for: scored + pruned
    std::uint64_t scored = 0;    ///< plans given a full evaluate()
    std::uint64_t pruned = 0;    ///< plans proved not to fit from their model states alone
    std::uint64_t feasible = 0;  ///< plans that fit in GPU memory
    double seconds = 0;          ///< wall time of the search
    bool cancelled = false;
    unsigned threads = 0;            ///< worker threads used
    std::vector<SearchPlan> results; ///< the top K plans that fit, best first (rankedBefore)
    /// Plans that fit and that no other fitting plan beats on both tokens/s (higher) and peak
    /// memory (lower); sorted by ascending peak_bytes (so also ascending tokens/s).
    std::vector<SearchPlan> pareto;
    /// Up to SearchOptions::sample fitting plans drawn at random (for a scatter), in no order.
    std::vector<SearchPlan> sample;
};

/// Ranking order: higher tokens/s first; ties go to the lower peak memory, then to the earlier
/// plan in the enumeration order.
bool rankedBefore(const SearchPlan& a, const SearchPlan& b);
/// Pareto dominance: a is at least as fast and as small as b and better in one, or equal in
/// both and earlier in the enumeration.
bool dominates(const SearchPlan& a, const SearchPlan& b);

/// Scores every plan of `space` with evaluate() on all cores; keeps the top K and the Pareto
/// front (memory stays bounded by K plus the front). Throws InputError when the problem itself
/// is broken (model, cluster, gpus or batch), naming the field. A space with no runnable plan
/// gives empty results.
SearchResult search(const SearchSpace& space, const SearchOptions& options = {});

/// The full scenario of a search result (base with the plan's parallel and training set).
Scenario scenarioFor(const SearchSpace& space, const SearchPlan& plan);

} // namespace paralens
