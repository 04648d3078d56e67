// SPDX-License-Identifier: GPL-3.0-or-later
// The numbers behind the accuracy view: scatter points, their colour categories, and the
// accuracy on runs like the current scenario.
#include "core/accuracy_plot.h"
#include "core/fitted_constants.h"
#include "core/gpu_family.h"
#include "core/kernel_time.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>

namespace paralens {
namespace {

constexpr std::array<AccuracyColour, 11> kColours{
    AccuracyColour::Group,      AccuracyColour::TP,      AccuracyColour::PP,
    AccuracyColour::DP,         AccuracyColour::CP,      AccuracyColour::EP,
    AccuracyColour::MicroBatch, AccuracyColour::Gpus,    AccuracyColour::Schedule,
    AccuracyColour::Recompute,  AccuracyColour::Hardware};

// A category's sort key (numbers in order, names alphabetically after them) and its label.
std::pair<double, std::string> category(const RunResult& row, const Scenario& s, AccuracyColour c)
{
    const ParallelPlan& p = s.parallel;
    auto num = [](const char* name, int v) {
        return std::pair<double, std::string>{double(v),
                                              std::string(name) + " " + std::to_string(v)};
    };
    switch (c) {
    case AccuracyColour::Group:
        return {0, row.group.empty() ? "all runs" : row.group};
    case AccuracyColour::TP:
        return num("TP", p.tp);
    case AccuracyColour::PP:
        return num("PP", p.pp);
    case AccuracyColour::DP:
        return num("DP", p.dp);
    case AccuracyColour::CP:
        return num("CP", p.cp);
    case AccuracyColour::EP:
        return num("EP", p.ep);
    case AccuracyColour::MicroBatch:
        return num("mb", s.training.micro_batch);
    case AccuracyColour::Gpus:
        return {double(p.gpus()), std::to_string(p.gpus()) + " GPUs"};
    case AccuracyColour::Schedule:
        return {double(p.schedule), std::string(toString(p.schedule))};
    case AccuracyColour::Recompute:
        return {double(s.training.recompute),
                "recompute " + std::string(toString(s.training.recompute))};
    case AccuracyColour::Hardware:
        return {0, s.cluster.gpu.name.empty() ? s.cluster.name : s.cluster.gpu.name};
    }
    return {0, std::string()};
}

// Measured and predicted step seconds of a speed row; false when the row has none.
bool stepsOf(const RunResult& r, double& measured, double& predicted)
{
    if (!r.failure.empty() || r.metric == RunMetric::PeakMemoryGib || !(r.step_seconds > 0) ||
        !(r.measured > 0) || !(r.predicted > 0))
        return false;
    predicted = r.step_seconds;
    measured =
        r.metric == RunMetric::StepSeconds ? r.measured : r.step_seconds * r.predicted / r.measured;
    return std::isfinite(measured);
}

bool sameArchitecture(const ModelSpec& a, const ModelSpec& b)
{
    const auto kv = [](const ModelSpec& m) { return m.kv_heads > 0 ? m.kv_heads : m.heads; };
    return a.layers == b.layers && a.hidden == b.hidden && a.heads == b.heads && kv(a) == kv(b) &&
           a.headDim() == b.headDim() && a.ffn_hidden == b.ffn_hidden && a.vocab == b.vocab &&
           a.gated_mlp == b.gated_mlp && a.position_embedding == b.position_embedding &&
           a.norm == b.norm && a.moe.experts == b.moe.experts && a.moe.top_k == b.moe.top_k &&
           a.moe.expert_ffn_hidden == b.moe.expert_ffn_hidden &&
           a.mla.kv_lora_rank == b.mla.kv_lora_rank && a.mla.q_lora_rank == b.mla.q_lora_rank &&
           a.mla.qkHeadDim() == b.mla.qkHeadDim() && a.mla.v_head_dim == b.mla.v_head_dim;
}

} // namespace

std::span<const AccuracyColour> allAccuracyColours()
{
    return kColours;
}

std::string_view accuracyColourName(AccuracyColour c)
{
    constexpr std::array<std::string_view, 11> names{"group",    "TP",        "PP",          "DP",
                                                     "CP",       "EP",        "micro-batch", "GPUs",
                                                     "schedule", "recompute", "hardware"};
    return names[std::size_t(c)];
}

AccuracyPlot accuracyPlot(const AccuracyReport& report, std::span<const MeasuredRun> runs,
                          AccuracyColour colour)
{
    AccuracyPlot plot;
    std::map<std::pair<double, std::string>, int> keys;
    std::vector<std::pair<double, std::string>> pointKeys;
    for (std::size_t i = 0; i < report.rows.size(); ++i) {
        const RunResult& r = report.rows[i];
        if (!r.failure.empty()) {
            ++plot.failed_rows;
            continue;
        }
        if (r.metric == RunMetric::PeakMemoryGib) {
            ++plot.memory_rows;
            continue;
        }
        AccuracyPoint p;
        p.row = i;
        if (!stepsOf(r, p.measured_seconds, p.predicted_seconds) || r.run_index >= runs.size())
            continue;
        const auto key = category(r, runs[r.run_index].scenario, colour);
        keys.emplace(key, 0);
        pointKeys.push_back(key);
        plot.points.push_back(p);
    }
    for (auto& [key, index] : keys) {
        index = int(plot.categories.size());
        plot.categories.push_back(key.second);
    }
    double lo = 0, hi = 0;
    for (std::size_t i = 0; i < plot.points.size(); ++i) {
        AccuracyPoint& p = plot.points[i];
        p.category = keys[pointKeys[i]];
        const double a = std::min(p.measured_seconds, p.predicted_seconds);
        const double b = std::max(p.measured_seconds, p.predicted_seconds);
        lo = i == 0 ? a : std::min(lo, a);
        hi = i == 0 ? b : std::max(hi, b);
    }
    // A little room around the points, in log space (the chart is log-log).
    plot.lower = lo > 0 ? lo / 1.25 : 0;
    plot.upper = hi > 0 ? hi * 1.25 : 0;
    return plot;
}

namespace {

// The speed rows of `runs` that `alike` accepts, summed up.
template <typename Alike>
SimilarAccuracy accuracyWhere(const AccuracyReport& report, std::span<const MeasuredRun> runs,
                              Alike alike)
{
    SimilarAccuracy out;
    double sum = 0, fast = 0;
    for (const RunResult& r : report.rows) {
        double measured = 0, predicted = 0;
        if (r.run_index >= runs.size() || !stepsOf(r, measured, predicted) ||
            !alike(runs[r.run_index].scenario))
            continue;
        ++out.runs;
        sum += std::abs(r.error);
        fast += measured / predicted - 1;
    }
    out.mape = out.runs > 0 ? sum / out.runs : 0;
    out.mean_fast = out.runs > 0 ? fast / out.runs : 0;
    return out;
}

// The speed rows of one framework on one GPU family.
SimilarAccuracy accuracyOfStack(const AccuracyReport& report, std::span<const MeasuredRun> runs,
                                Framework fw, std::string_view family)
{
    return accuracyWhere(report, runs, [&](const Scenario& s) {
        return s.training.framework == fw && gpuFamily(s.cluster.gpu.name) == family;
    });
}

} // namespace

SimilarAccuracy similarAccuracy(const AccuracyReport& report, std::span<const MeasuredRun> runs,
                                const Scenario& current)
{
    return accuracyWhere(report, runs, [&](const Scenario& s) {
        return sameGpuName(s.cluster.gpu.name, current.cluster.gpu.name) &&
               sameArchitecture(s.model, current.model);
    });
}

SimilarAccuracy stackAccuracy(const AccuracyReport& report, std::span<const MeasuredRun> runs,
                              const Scenario& current)
{
    return accuracyOfStack(report, runs, current.training.framework,
                           gpuFamily(current.cluster.gpu.name));
}

std::vector<StackAccuracy> accuracyByStack(const AccuracyReport& report,
                                           std::span<const MeasuredRun> runs)
{
    std::set<std::pair<Framework, std::string_view>> stacks;
    for (const RunResult& r : report.rows) {
        double measured = 0, predicted = 0;
        if (r.run_index < runs.size() && stepsOf(r, measured, predicted)) {
            const Scenario& s = runs[r.run_index].scenario;
            stacks.emplace(s.training.framework, gpuFamily(s.cluster.gpu.name));
        }
    }
    std::vector<StackAccuracy> out;
    out.reserve(stacks.size());
    for (const auto& [fw, family] : stacks)
        out.push_back({fw, family, accuracyOfStack(report, runs, fw, family)});
    return out;
}

} // namespace paralens
