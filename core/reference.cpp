// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/reference.h"
#include "core/accuracy.h"
#include "core/embedded.h"
#include "core/error.h"
#include "core/scenario_io.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace paralens {

bool isRunsFile(std::string_view path)
{
    constexpr std::string_view suffix = ".paralens-runs.json";
    return path.size() >= suffix.size() && path.substr(path.size() - suffix.size()) == suffix;
}

std::vector<ReferenceRun> referenceRuns(const PresetLibrary& presets)
{
    std::vector<ReferenceRun> runs;
    for (const auto& f : embedded::referenceFiles()) {
        const std::string file = f.path;
        if (isRunsFile(file))
            continue; // read by builtinReferenceRuns through the runs-file reader
        try {
            const auto j = nlohmann::json::parse(f.content);
            const std::string source = j.at("source").get<std::string>();
            const std::string metric = j.value("metric", "tflops_per_gpu");
            if (metric != "tflops_per_gpu" && metric != "mfu" &&
                metric != "tokens_per_second_per_gpu")
                throw InputError("metric", "metric: expected tflops_per_gpu, mfu or "
                                           "tokens_per_second_per_gpu");
            const std::string conv = j.value("flops", "model");
            FlopsConvention fc;
            if (conv == "narayanan-eq3")
                fc = FlopsConvention::NarayananEq3;
            else if (conv == "model")
                fc = FlopsConvention::Model;
            else
                throw InputError("flops", "flops: expected narayanan-eq3 or model");
            for (const auto& r : j.at("runs")) {
                ReferenceRun run;
                run.file = file;
                run.source = r.value("source", source); // a run may name its own table
                run.metric = metric;
                run.convention = fc;
                run.name = r.at("name").get<std::string>();
                run.published = r.at("published").get<double>();
                run.notes = r.value("notes", j.value("notes", std::string()));
                run.scenario = scenarioFromJson(r.at("scenario"), presets);
                runs.push_back(std::move(run));
            }
        } catch (const InputError& e) {
            throw InputError(e.field(), "reference/" + file + ": " + e.what());
        } catch (const nlohmann::json::exception& e) {
            throw InputError("", "reference/" + file + ": " + e.what());
        }
    }
    return runs;
}

namespace {

Measurement measurementOf(const ReferenceRun& r)
{
    Measurement m;
    m.metric = r.metric == "mfu" ? RunMetric::Mfu : RunMetric::TflopsPerGpu;
    m.value = r.published;
    if (r.metric == "tokens_per_second_per_gpu") { // compared as the whole job's tokens/s
        m.metric = RunMetric::TokensPerSecond;
        m.value = r.published * r.scenario.gpus;
        return m;
    }
    m.flops = r.convention == FlopsConvention::NarayananEq3 ? MeasuredFlops::NarayananEq3
                                                            : MeasuredFlops::Full;
    return m;
}

} // namespace

double predictedMetric(const ReferenceRun& run, const Estimate& e)
{
    const double p = predictMeasurement(run.scenario, measurementOf(run), e);
    return run.metric == "tokens_per_second_per_gpu" ? p / std::max(1, run.scenario.gpus) : p;
}

RunSet builtinReferenceRuns(const PresetLibrary& presets)
{
    RunSet set;
    set.file = "built-in reference runs (resources/reference)";
    std::string lastFile;
    for (ReferenceRun& r : referenceRuns(presets)) {
        MeasuredRun run;
        run.name = r.name;
        run.origin = r.file;
        run.measured.push_back(measurementOf(r));
        run.source = r.source;
        run.notes = r.notes;
        run.scenario = std::move(r.scenario);
        if (r.file != lastFile && !r.notes.empty())
            set.assumptions.push_back(r.file + ": " + r.notes);
        lastFile = r.file;
        set.runs.push_back(std::move(run));
    }
    // Measured-runs files (docs/runs-format.md) after the publication files: tokens/s, step time
    // and peak memory as well as FLOP rates. Their errors name reference/FILE:LINE:COL.
    for (const auto& f : embedded::referenceFiles()) {
        if (!isRunsFile(f.path))
            continue;
        RunSet file = parseRunsText(f.content, f.path, "", presets);
        for (const std::string& a : file.assumptions)
            set.assumptions.push_back(std::string(f.path) + ": " + a);
        for (MeasuredRun& run : file.runs)
            set.runs.push_back(std::move(run));
    }
    return set;
}

} // namespace paralens
