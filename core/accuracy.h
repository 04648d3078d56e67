// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/collective.h"
#include "core/constants.h"
#include "core/estimate.h"
#include "core/presets.h"
#include "core/scenario.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace paralens {

/// The figure a run was measured by. Every run gives at least one; each gives one report row.
enum class RunMetric
{
    StepSeconds,     ///< wall time of one optimizer step
    TokensPerSecond, ///< whole job
    TflopsPerGpu,    ///< model FLOP/s per GPU in the run's own FLOP convention
    Mfu,             ///< model FLOPs utilisation of the dense BF16 peak (published runs)
    PeakMemoryGib,   ///< the largest GPU's peak, GiB
};

/// How a measured TFLOP/s or MFU figure counts attention FLOPs.
enum class MeasuredFlops
{
    Full,         ///< the whole s² score matrix (Narayanan, torchtitan, our model FLOPs)
    Causal,       ///< half of it (Megatron-LM since March 2025, FlashAttention's kernel count)
    NarayananEq3, ///< 96·B·s·l·h²·(1 + s/(6h) + V/(16lh)): includes full recompute
};

/// What PyTorch's allocator statistic a peak-memory figure is.
enum class MemoryKind
{
    Allocated, ///< torch.cuda.max_memory_allocated
    Reserved,  ///< torch.cuda.max_memory_reserved (adds the caching allocator's slack)
};

/// One measured figure of a run.
struct Measurement
{
    RunMetric metric = RunMetric::StepSeconds;
    double value = 0; ///< seconds, tokens/s, TFLOP/s, a fraction, or GiB
    MeasuredFlops flops = MeasuredFlops::Full;
    MemoryKind memory = MemoryKind::Allocated;
};

/// One measured training run: what ran, how, and what was measured.
struct MeasuredRun
{
    std::string name;
    std::string origin; ///< "FILE:LINE" of the run, for messages
    Scenario scenario;
    std::vector<Measurement> measured;
    std::string source; ///< where the figure comes from (paper, log, benchmark)
    std::string notes;
};

/// A set of runs read from one file, with the assumptions the reader had to make.
struct RunSet
{
    std::string file;
    std::vector<MeasuredRun> runs;
    std::vector<std::string> assumptions; ///< printed with every report of these runs
};

/// Largest runs file and measured-iteration CSV the readers accept (docs/limits.md): a run with
/// an inline scenario is ~1.5 KiB and a CSV row ~80 bytes, so 16 MiB holds some 10,000 runs or
/// 200,000 rows; a larger file is refused by its size before it is parsed.
inline constexpr std::uint64_t kMaxRunsFileBytes = 16u << 20;

/// Reads a `*.paralens-runs.json` file (docs/runs-format.md). A run's "path" is resolved
/// against the file's folder. Throws InputError naming FILE:LINE:COL and the key path for
/// malformed JSON, unknown keys, wrong types and impossible values.
RunSet readRunsFile(const std::string& path, const PresetLibrary& presets);
RunSet parseRunsText(std::string_view text, const std::string& file, const std::string& base_dir,
                     const PresetLibrary& presets);

/// Reads a measured-iteration CSV laid out as the validation folder's (one row per run,
/// Megatron-DeepSpeed on `cluster_template`'s cluster; docs/runs-format.md lists the columns
/// and the assumptions, which the set carries). Throws InputError naming FILE:LINE and the
/// column.
RunSet readIterationCsv(const std::string& path, const Scenario& cluster_template);
RunSet parseIterationCsv(std::string_view text, const std::string& file,
                         const Scenario& cluster_template);

/// Which reader a file needs: ".csv" or ".json" by its name, else a CSV unless its first
/// non-blank character is '{'.
enum class RunsFormat
{
    RunsJson,
    IterationCsv,
};
RunsFormat detectRunsFormat(const std::string& path, std::string_view content);
/// Reads either kind. A CSV needs `cluster_template` (the cluster it ran on); without one it
/// throws InputError asking for --hardware.
RunSet readRuns(const std::string& path, const PresetLibrary& presets,
                const Scenario* cluster_template);

/// The cluster for a CSV: a hardware preset id from `presets`, or the path of a hardware preset
/// file (resources/presets' format, e.g. resources/examples/vtrain-a100-cluster.json). The
/// result has only hardware_id (empty for a file) and cluster set. Throws InputError.
Scenario hardwareTemplate(const std::string& id_or_file, const PresetLibrary& presets);

/// The published runs compiled into the core (resources/reference), as a run set: the
/// publication files (core/reference.h) first, then the measured-runs files
/// (`*.paralens-runs.json`). Each file's notes (what the publication leaves open) become the
/// set's assumptions, prefixed by the file.
RunSet builtinReferenceRuns(const PresetLibrary& presets = PresetLibrary::builtin());

/// How validate groups runs for rank correlation.
enum class GroupBy
{
    ModelAndGpus, ///< default: the plans of one model on one GPU count compete
    Model,
    Gpus,
    Hardware,
    Source,
    None,
};
/// "model-and-gpus", "model", "gpus", "hardware", "source", "none".
std::optional<GroupBy> parseGroupBy(std::string_view key);
std::string_view toString(GroupBy g);
/// The group a run belongs to, e.g. "GPT 3.6B on 64 GPUs" (model name or preset id; GPU count).
std::string groupKey(const MeasuredRun& run, GroupBy group_by);

/// One report row: a run's measured figure against the model's prediction.
struct RunResult
{
    std::string name;
    std::string group;
    RunMetric metric = RunMetric::StepSeconds;
    double measured = 0;
    double predicted = 0;
    double error = 0;    ///< signed fraction (predicted − measured) / measured
    std::string failure; ///< non-empty when the run could not be predicted (validation error)
    bool fits = true;    ///< the model says the plan fits in GPU memory
    // The predicted breakdown (seconds) behind the figure.
    double step_seconds = 0, compute_seconds = 0, bubble_seconds = 0, comm_seconds = 0,
           optimizer_seconds = 0;
    std::size_t run_index = 0; ///< into the run list given to validateRuns
};

struct GroupSummary
{
    std::string key;
    int runs = 0;
    double spearman = 0;           ///< rank correlation of predicted vs measured speed
    int best_plan_rank = 0;        ///< measured rank (1 = fastest) of the model's fastest plan
    double best_plan_slowdown = 0; ///< how much slower that plan measured than the best, fraction
    std::string best_plan;         ///< the run the model ranks fastest
    std::string measured_best;     ///< the run measured fastest
};

struct AccuracySummary
{
    int runs = 0;   ///< rows predicted
    int failed = 0; ///< rows that could not be predicted
    double mape = 0;
    double median_ape = 0;
    std::string worst_name;
    double worst_error = 0; ///< signed
};

struct AccuracyReport
{
    std::vector<RunResult> rows;
    AccuracySummary summary;
    std::vector<GroupSummary> groups;
    std::vector<std::string> assumptions;
};

/// The model's figure for one measurement of a scenario, from its estimate `e`: step seconds,
/// tokens/s, TFLOP/s per GPU or MFU in the measurement's FLOP convention (MFU of the dense BF16
/// peak), or peak GiB (docs/runs-format.md). 0 when the estimate has no step time.
double predictMeasurement(const Scenario& s, const Measurement& m, const Estimate& e);

/// Predicts every run (with `constants` and, when given, `measured` performance) and
/// summarises. Runs that fail validation become rows with `failure` set, never dropped.
/// Groups, in the order they first appear, are those with at least two runs measured by a speed
/// (every metric but memory); they rank runs by tokens per second (a TFLOP/s or MFU figure
/// converted through the run's own predicted step), so runs of different batch sizes compare
/// fairly. The report's assumptions are left to the caller (RunSet::assumptions).
AccuracyReport validateRuns(std::span<const MeasuredRun> runs, const ModelConstants& constants,
                            const MeasuredPerformance* measured = nullptr,
                            GroupBy group_by = GroupBy::ModelAndGpus);

/// Spearman's rank correlation with average ranks for ties; 0 when fewer than two values or
/// one side is constant.
double spearman(std::span<const double> a, std::span<const double> b);

std::string_view metricName(RunMetric m);   ///< "step_seconds", "tokens_per_second", ...
std::string_view toString(MeasuredFlops f); ///< "full", "causal", "narayanan-eq3"
std::string_view toString(MemoryKind k);    ///< "allocated", "reserved"

} // namespace paralens
