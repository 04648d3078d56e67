// SPDX-License-Identifier: GPL-3.0-or-later
// Predicted against measured: one row per measured figure, the error summary and, per group of
// competing plans, how well the model ranks them.
#include "core/accuracy.h"

#include "core/evaluate.h"
#include "core/flops.h"
#include "core/validate.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numeric>

namespace paralens {
namespace {

constexpr double kGiB = 1073741824.0;

constexpr std::array<std::pair<GroupBy, std::string_view>, 6> kGroupNames{{
    {GroupBy::ModelAndGpus, "model-and-gpus"},
    {GroupBy::Model, "model"},
    {GroupBy::Gpus, "gpus"},
    {GroupBy::Hardware, "hardware"},
    {GroupBy::Source, "source"},
    {GroupBy::None, "none"},
}};

// Narayanan et al. 2021 Eq. 3: 96·B·s·l·h²·(1 + s/(6h) + V/(16lh)), which counts full recompute.
double narayananEq3Flops(const Scenario& s)
{
    const double B = s.training.global_batch, sq = s.training.seq_len, l = s.model.layers,
                 h = double(s.model.hidden), V = double(s.model.vocab);
    return 96 * B * sq * l * h * h * (1 + sq / (6 * h) + V / (16 * l * h));
}

// Model FLOPs per step in a measurement's convention.
double flopsPerStep(const Scenario& s, MeasuredFlops f, const Estimate& e)
{
    switch (f) {
    case MeasuredFlops::Full:
        return e.throughput.model_flops_per_step;
    case MeasuredFlops::Causal: {
        // Half of the score and attention·V matmuls, forward and backward (3 × forward).
        const double tokens = double(s.training.global_batch) * s.training.seq_len;
        const double core = denseLayerFlops(s.model, tokens, s.training.seq_len).attention_core;
        return e.throughput.model_flops_per_step - 0.5 * 3 * core * s.model.layers;
    }
    case MeasuredFlops::NarayananEq3:
        return narayananEq3Flops(s);
    }
    return 0;
}

std::string modelLabel(const Scenario& s)
{
    if (!s.model_id.empty())
        return s.model_id;
    if (!s.model.name.empty())
        return s.model.name;
    return "L" + std::to_string(s.model.layers) + " h" + std::to_string(s.model.hidden);
}

std::string joinMessages(const std::vector<ValidationError>& errs)
{
    std::string out;
    for (const auto& e : errs)
        out += (out.empty() ? "" : "; ") + e.message;
    return out;
}

// One report row per measured figure of a run; `e` holds the run's estimate unless failure.
void addRows(const MeasuredRun& run, std::size_t index, const std::string& failure,
             const Estimate& e, GroupBy g, std::vector<RunResult>& rows)
{
    const auto row = [&](const Measurement* m) {
        RunResult r;
        r.name = run.name;
        r.group = groupKey(run, g);
        r.run_index = index;
        r.failure = failure;
        if (m) {
            r.metric = m->metric;
            r.measured = m->value;
        }
        if (r.failure.empty() && m) {
            r.predicted = predictMeasurement(run.scenario, *m, e);
            if (!(r.predicted > 0) || !std::isfinite(r.predicted))
                r.failure = "the model gives no " + std::string(metricName(m->metric)) +
                            " for this run (no step time, or no BF16 peak for MFU)";
        }
        if (r.failure.empty()) {
            r.error = (r.predicted - r.measured) / r.measured;
            r.fits = e.fits;
            const TimeBreakdown& t = e.time;
            r.step_seconds = t.step_seconds;
            r.compute_seconds = t.compute_seconds;
            r.bubble_seconds = t.bubble_seconds;
            r.comm_seconds = t.exposed.total();
            r.optimizer_seconds = t.optimizer_seconds + t.offload_seconds;
        } else {
            r.predicted = r.error = 0;
        }
        rows.push_back(std::move(r));
    };
    if (run.measured.empty()) {
        row(nullptr);
        rows.back().failure = failure.empty() ? "the run has no measured figure" : failure;
        return;
    }
    for (const Measurement& m : run.measured)
        row(&m);
}

AccuracySummary summarise(const std::vector<RunResult>& rows)
{
    AccuracySummary s;
    std::vector<double> ape;
    for (const RunResult& r : rows) {
        if (!r.failure.empty()) {
            ++s.failed;
            continue;
        }
        ++s.runs;
        ape.push_back(std::abs(r.error));
        if (std::abs(r.error) > std::abs(s.worst_error) || s.worst_name.empty()) {
            s.worst_error = r.error;
            s.worst_name = r.name;
        }
    }
    if (ape.empty())
        return s;
    s.mape = std::accumulate(ape.begin(), ape.end(), 0.0) / double(ape.size());
    std::sort(ape.begin(), ape.end());
    const std::size_t n = ape.size();
    s.median_ape = n % 2 ? ape[n / 2] : 0.5 * (ape[n / 2 - 1] + ape[n / 2]);
    return s;
}

// Tokens per second measured and predicted, for the rows measured by a speed. A TFLOP/s or MFU
// figure is inversely proportional to the step time, so measured step = predicted step ×
// predicted / measured.
struct Speed
{
    const RunResult* row;
    double measured, predicted;
};

std::optional<Speed> speedOf(const RunResult& r, const MeasuredRun& run)
{
    if (!r.failure.empty() || r.metric == RunMetric::PeakMemoryGib || r.step_seconds <= 0)
        return std::nullopt;
    const double tokens =
        double(run.scenario.training.global_batch) * run.scenario.training.seq_len;
    double measuredStep = 0;
    switch (r.metric) {
    case RunMetric::StepSeconds:
        measuredStep = r.measured;
        break;
    case RunMetric::TokensPerSecond:
        measuredStep = tokens / r.measured;
        break;
    default:
        measuredStep = r.step_seconds * r.predicted / r.measured;
        break;
    }
    return Speed{&r, tokens / measuredStep, tokens / r.step_seconds};
}

GroupSummary summariseGroup(const std::string& key, const std::vector<Speed>& v)
{
    GroupSummary g;
    g.key = key;
    g.runs = int(v.size());
    std::vector<double> meas, pred;
    for (const Speed& s : v) {
        meas.push_back(s.measured);
        pred.push_back(s.predicted);
    }
    g.spearman = spearman(pred, meas);
    const auto bestPred = std::max_element(pred.begin(), pred.end()) - pred.begin();
    const auto bestMeas = std::max_element(meas.begin(), meas.end()) - meas.begin();
    const double chosen = meas[std::size_t(bestPred)];
    g.best_plan_rank =
        1 + int(std::count_if(meas.begin(), meas.end(), [&](double m) { return m > chosen; }));
    g.best_plan_slowdown = meas[std::size_t(bestMeas)] / chosen - 1;
    g.best_plan = v[std::size_t(bestPred)].row->name;
    g.measured_best = v[std::size_t(bestMeas)].row->name;
    return g;
}

std::vector<GroupSummary> summariseGroups(const std::vector<RunResult>& rows,
                                          std::span<const MeasuredRun> runs)
{
    std::vector<std::string> order;
    std::map<std::string, std::vector<Speed>> byKey;
    std::vector<bool> ranked(runs.size(), false); // one speed per run: its first
    for (const RunResult& r : rows) {
        if (ranked[r.run_index])
            continue;
        const auto s = speedOf(r, runs[r.run_index]);
        if (!s)
            continue;
        ranked[r.run_index] = true;
        auto& list = byKey[r.group];
        if (list.empty())
            order.push_back(r.group);
        list.push_back(*s);
    }
    std::vector<GroupSummary> out;
    for (const auto& key : order)
        if (byKey[key].size() >= 2)
            out.push_back(summariseGroup(key, byKey[key]));
    return out;
}

std::vector<double> averageRanks(std::span<const double> x)
{
    std::vector<std::size_t> idx(x.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](auto a, auto b) { return x[a] < x[b]; });
    std::vector<double> rank(x.size());
    for (std::size_t i = 0; i < idx.size();) {
        std::size_t j = i;
        while (j + 1 < idx.size() && x[idx[j + 1]] == x[idx[i]])
            ++j;
        const double avg = 0.5 * double(i + j) + 1; // ranks i+1 .. j+1
        for (std::size_t k = i; k <= j; ++k)
            rank[idx[k]] = avg;
        i = j + 1;
    }
    return rank;
}

} // namespace

std::string_view metricName(RunMetric m)
{
    switch (m) {
    case RunMetric::StepSeconds:
        return "step_seconds";
    case RunMetric::TokensPerSecond:
        return "tokens_per_second";
    case RunMetric::TflopsPerGpu:
        return "tflops_per_gpu";
    case RunMetric::Mfu:
        return "mfu";
    case RunMetric::PeakMemoryGib:
        return "peak_memory_gib";
    }
    return "unknown";
}

std::string_view toString(MeasuredFlops f)
{
    switch (f) {
    case MeasuredFlops::Full:
        return "full";
    case MeasuredFlops::Causal:
        return "causal";
    case MeasuredFlops::NarayananEq3:
        return "narayanan-eq3";
    }
    return "unknown";
}

std::string_view toString(MemoryKind k)
{
    return k == MemoryKind::Reserved ? "reserved" : "allocated";
}

std::optional<GroupBy> parseGroupBy(std::string_view key)
{
    for (const auto& [g, name] : kGroupNames)
        if (name == key)
            return g;
    return std::nullopt;
}

std::string_view toString(GroupBy g)
{
    for (const auto& [k, name] : kGroupNames)
        if (k == g)
            return name;
    return "unknown";
}

std::string groupKey(const MeasuredRun& run, GroupBy g)
{
    const Scenario& s = run.scenario;
    const std::string gpus = std::to_string(s.gpus) + " GPUs";
    switch (g) {
    case GroupBy::ModelAndGpus:
        return modelLabel(s) + " on " + gpus;
    case GroupBy::Model:
        return modelLabel(s);
    case GroupBy::Gpus:
        return gpus;
    case GroupBy::Hardware:
        return s.hardware_id.empty() ? s.cluster.name : s.hardware_id;
    case GroupBy::Source:
        return run.source;
    case GroupBy::None:
        break;
    }
    return "all runs";
}

double predictMeasurement(const Scenario& s, const Measurement& m, const Estimate& e)
{
    const double step = e.time.step_seconds;
    if (!(step > 0) || !std::isfinite(step) || e.gpus <= 0)
        return 0;
    const auto tflops = [&] { return flopsPerStep(s, m.flops, e) / (step * e.gpus) / 1e12; };
    switch (m.metric) {
    case RunMetric::StepSeconds:
        return step;
    case RunMetric::TokensPerSecond:
        return e.tokens_per_step / step;
    case RunMetric::TflopsPerGpu:
        return tflops();
    case RunMetric::Mfu: {
        const double peak = s.cluster.gpu.bf16_tflops;
        return peak > 0 ? tflops() / peak : 0;
    }
    case RunMetric::PeakMemoryGib:
        // The statistic that was measured: PyTorch's allocated or reserved peak (neither sees the
        // CUDA context or NCCL's buffers; reserved adds the blocks the allocator keeps cached).
        return (m.memory == MemoryKind::Reserved ? e.peak_reserved_bytes : e.peak_allocated_bytes) /
               kGiB;
    }
    return 0;
}

double spearman(std::span<const double> a, std::span<const double> b)
{
    const std::size_t n = std::min(a.size(), b.size());
    if (n < 2)
        return 0;
    const std::vector<double> ra = averageRanks(a.first(n)), rb = averageRanks(b.first(n));
    const double mean = 0.5 * double(n + 1); // average ranks keep the mean
    double sab = 0, saa = 0, sbb = 0;
    for (std::size_t i = 0; i < n; ++i) {
        sab += (ra[i] - mean) * (rb[i] - mean);
        saa += (ra[i] - mean) * (ra[i] - mean);
        sbb += (rb[i] - mean) * (rb[i] - mean);
    }
    return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 0;
}

AccuracyReport validateRuns(std::span<const MeasuredRun> runs, const ModelConstants& constants,
                            const MeasuredPerformance* measured, GroupBy group_by)
{
    AccuracyReport rep;
    Estimate e;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const MeasuredRun& run = runs[i];
        std::string failure;
        if (!isRunnable(run.scenario)) {
            failure = joinMessages(validate(run.scenario));
            if (failure.empty())
                failure = "the plan cannot run";
        }
        if (failure.empty())
            evaluate(run.scenario, e, measured, constants);
        addRows(run, i, failure, e, group_by, rep.rows);
    }
    rep.summary = summarise(rep.rows);
    rep.groups = summariseGroups(rep.rows, runs);
    return rep;
}

} // namespace paralens
