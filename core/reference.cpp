// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/reference.h"
#include "core/embedded.h"
#include "core/error.h"
#include "core/scenario_io.h"

#include <nlohmann/json.hpp>

namespace paralens {
namespace {

double narayananEq3(const Scenario& s)
{
    const double B = s.training.global_batch, sq = s.training.seq_len, l = s.model.layers,
                 h = double(s.model.hidden), V = double(s.model.vocab);
    return 96 * B * sq * l * h * h * (1 + sq / (6 * h) + V / (16 * l * h));
}

} // namespace

std::vector<ReferenceRun> referenceRuns(const PresetLibrary& presets)
{
    std::vector<ReferenceRun> runs;
    for (const auto& f : embedded::referenceFiles()) {
        const std::string file = f.path;
        try {
            const auto j = nlohmann::json::parse(f.content);
            const std::string source = j.at("source").get<std::string>();
            const std::string metric = j.value("metric", "tflops_per_gpu");
            if (metric != "tflops_per_gpu" && metric != "mfu")
                throw InputError("metric", "metric: expected tflops_per_gpu or mfu");
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
                run.source = source;
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

double predictedMetric(const ReferenceRun& run, const Estimate& e)
{
    const double step = e.time.step_seconds;
    if (step <= 0 || e.gpus <= 0)
        return 0;
    const double flops = run.convention == FlopsConvention::NarayananEq3
                             ? narayananEq3(run.scenario)
                             : e.throughput.model_flops_per_step;
    const double tflops = flops / (step * e.gpus) / 1e12;
    if (run.metric == "mfu") {
        const double peak = run.scenario.cluster.gpu.bf16_tflops;
        return peak > 0 ? tflops / peak : 0;
    }
    return tflops;
}

} // namespace paralens
