// SPDX-License-Identifier: GPL-3.0-or-later
// paralens-bench-plan: the fit advice (run on every edit of a plan over capacity) and the plan
// map (run when the model, cluster, GPU count or batch changes), one JSON line per case.
// Targets on a two-core machine: fit advice median under 50 ms; a 64-GPU plan map under 5 s.
#include "core/fit_advice.h"
#include "core/plan_map.h"
#include "core/presets.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

using namespace paralens;

namespace {

using Clock = std::chrono::steady_clock;

Scenario dataParallel(const char* model, int gpus, int batch, int seq)
{
    const PresetLibrary& lib = PresetLibrary::builtin();
    Scenario s;
    s.model_id = model;
    s.model = *lib.model(model);
    s.hardware_id = "h100-sxm";
    s.cluster = *lib.hardware("h100-sxm");
    s.gpus = gpus;
    s.parallel.dp = gpus; // no model parallelism, no sharding: over capacity
    s.training.global_batch = batch;
    s.training.seq_len = seq;
    return s;
}

double seconds(Clock::time_point t0)
{
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

void benchAdvice(const char* name, const Scenario& s)
{
    std::vector<double> ms;
    FitAdvice a;
    for (int i = 0; i < 15; ++i) {
        const auto t0 = Clock::now();
        a = adviseFit(s);
        ms.push_back(seconds(t0) * 1e3);
    }
    std::sort(ms.begin(), ms.end());
    std::printf("{\"bench\":\"fit_advice\",\"case\":\"%s\",\"candidates\":%d,\"suggestions\":%zu,"
                "\"median_ms\":%.2f,\"max_ms\":%.2f}\n",
                name, a.candidates, a.suggestions.size(), ms[ms.size() / 2], ms.back());
    std::fflush(stdout);
}

void benchMap(const char* name, const Scenario& s)
{
    const auto t0 = Clock::now();
    const PlanMap m = planMap(s);
    std::uint64_t evaluated = 0;
    for (const PlanMapCell& c : m.cells)
        evaluated += c.evaluated;
    std::printf("{\"bench\":\"plan_map\",\"case\":\"%s\",\"cells\":%zu,\"evaluated\":%llu,"
                "\"seconds\":%.3f}\n",
                name, m.cells.size(), static_cast<unsigned long long>(evaluated), seconds(t0));
    std::fflush(stdout);
}

} // namespace

int main()
{
    benchAdvice("llama3-70b-64xh100-dp", dataParallel("llama3-70b", 64, 512, 4096));
    benchAdvice("llama3-405b-1024xh100-dp", dataParallel("llama3-405b", 1024, 2048, 8192));
    benchMap("llama3-70b-64xh100", dataParallel("llama3-70b", 64, 512, 4096));
    benchMap("llama3-8b-16xh100", dataParallel("llama3-8b", 16, 64, 4096));
    return 0;
}
