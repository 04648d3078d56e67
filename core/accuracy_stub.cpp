// SPDX-License-Identifier: GPL-3.0-or-later
// TEMPORARY stand-in for validateRuns() until the measured-runs implementation lands; it
// predicts step_seconds and tokens_per_second rows only. Delete when core/accuracy.cpp exists.
#include "core/accuracy.h"
#include "core/error.h"
#include "core/evaluate.h"
#include "core/validate.h"

namespace paralens {

RunSet readRunsFile(const std::string& path, const PresetLibrary&)
{
    throw InputError("runs", path + ": runs files are not read by this build yet");
}

RunSet readIterationCsv(const std::string& path, const Scenario&)
{
    throw InputError("runs", path + ": measured-iteration CSVs are not read by this build yet");
}

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
    return "?";
}

AccuracyReport validateRuns(std::span<const MeasuredRun> runs, const ModelConstants& constants,
                            const MeasuredPerformance* measured, GroupBy)
{
    AccuracyReport rep;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const MeasuredRun& run = runs[i];
        for (const Measurement& m : run.measured) {
            RunResult r;
            r.name = run.name;
            r.metric = m.metric;
            r.measured = m.value;
            r.run_index = i;
            const auto errors = validate(run.scenario);
            if (!errors.empty()) {
                r.failure = errors.front().message;
                ++rep.summary.failed;
                rep.rows.push_back(r);
                continue;
            }
            Estimate e;
            evaluate(run.scenario, e, measured, constants);
            r.step_seconds = e.time.step_seconds;
            r.predicted = m.metric == RunMetric::StepSeconds       ? e.time.step_seconds
                          : m.metric == RunMetric::TokensPerSecond ? e.throughput.tokens_per_second
                          : m.metric == RunMetric::PeakMemoryGib   ? e.peak_bytes / 1073741824.0
                                                                   : 0;
            if (r.predicted <= 0)
                r.failure = "stub: metric not predicted";
            r.error = r.measured > 0 ? (r.predicted - r.measured) / r.measured : 0;
            ++rep.summary.runs;
            rep.rows.push_back(r);
        }
    }
    return rep;
}

} // namespace paralens
