// SPDX-License-Identifier: GPL-3.0-or-later
// Prints {"bench":"schedule","case":...,"median_ms":...} per case: building the op order and
// simulating it with uniform durations, buffers reused between runs (as the GUI does while a
// slider moves); median of this thread's CPU time. Targets: p64-m1024-v2 under 50 ms,
// p8-m32 under 0.1 ms.
#include "core/evaluate.h"
#include "core/pipeline_sim.h"
#include "core/scenario_io.h"
#include "core/schedule.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <vector>

using namespace paralens;

namespace {

// This thread's CPU time, so the figure holds when other processes share the machine (the
// wall-clock median is printed too).
double cpuMs()
{
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return 1e3 * double(ts.tv_sec) + 1e-6 * double(ts.tv_nsec);
}

void bench(const char* name, const ScheduleParams& params, int repeats)
{
    ScheduleBuilder builder;
    PipelineSchedule schedule;
    PipelineSimulator sim;
    SimulationResult result;
    builder.build(params, schedule);
    const PipelineTimings timings = uniformTimings(schedule, 1e-3, 2e-3, 1e-3);
    sim.run(schedule, timings, result); // warm the buffers
    std::vector<double> ms, wall;
    ms.reserve(std::size_t(repeats));
    wall.reserve(std::size_t(repeats));
    for (int i = 0; i < repeats; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        const double c0 = cpuMs();
        builder.build(params, schedule);
        sim.run(schedule, timings, result);
        ms.push_back(cpuMs() - c0);
        const auto t1 = std::chrono::steady_clock::now();
        wall.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    std::sort(wall.begin(), wall.end());
    const nlohmann::json out{{"bench", "schedule"},
                             {"case", name},
                             {"schedule", std::string(toString(params.kind))},
                             {"ops", schedule.ops.size()},
                             {"median_ms", ms[ms.size() / 2]},
                             {"min_ms", ms.front()},
                             {"wall_median_ms", wall[wall.size() / 2]},
                             {"bubble_overhead", result.bubble_overhead}};
    std::printf("%s\n", out.dump().c_str());
}

// evaluate() of a plan it has not seen (the GPU peak nudged each time, so every stage time is
// new and the memo cannot answer): the cost a search pays per plan, with the simulator and
// with the closed forms (ModelConstants::simulate_pipeline = false).
void benchEvaluate(const char* name, bool simulate, int repeats)
{
    Scenario s = defaultScenario();
    ModelConstants k;
    k.simulate_pipeline = simulate;
    Estimate e;
    const double peak = s.cluster.gpu.bf16_tflops;
    double sink = 0;
    std::vector<double> us;
    for (int run = 0; run < 7; ++run) {
        const double c0 = cpuMs();
        for (int i = 0; i < repeats; ++i) {
            s.cluster.gpu.bf16_tflops = peak * (1 + 1e-9 * (run * repeats + i));
            evaluate(s, e, nullptr, k);
            sink += e.time.step_seconds;
        }
        us.push_back(1e3 * (cpuMs() - c0) / repeats);
    }
    std::sort(us.begin(), us.end());
    const nlohmann::json out{{"bench", "schedule"},
                             {"case", name},
                             {"pp", s.parallel.pp},
                             {"virtual_stages", s.parallel.virtual_stages},
                             {"microbatches", e.microbatches},
                             {"median_us_per_eval", us[us.size() / 2]},
                             {"check", sink > 0}};
    std::printf("%s\n", out.dump().c_str());
}

} // namespace

int main()
{
    bench("p64-m1024-v2", {Schedule::Interleaved1F1B, 64, 1024, 2}, 21);
    bench("p8-m32", {Schedule::OneF1B, 8, 32, 1}, 2001);
    bench("p64-m1024-zbv", {Schedule::ZBV, 64, 1024, 2}, 11);
    benchEvaluate("eval-new-plan-simulated", true, 200);
    benchEvaluate("eval-new-plan-closed-form", false, 2000);
    return 0;
}
