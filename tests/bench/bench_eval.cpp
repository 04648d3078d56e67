// SPDX-License-Identifier: GPL-3.0-or-later
// Evaluations per second on one core, reusing one Estimate as the search does.
// Prints {"bench":"eval","case":...,"per_second":...,"ns_per_eval":...,"wall_per_second":...}
// for three cases, each the median of 7 runs. per_second counts this thread's CPU time
// (CLOCK_THREAD_CPUTIME_ID), so the figure is per core even when other processes share the machine;
// wall_per_second is the same runs timed on the wall clock.
#include "core/evaluate.h"
#include "core/presets.h"
#include "core/scenario_io.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

using namespace paralens;

int main()
{
    const PresetLibrary& lib = PresetLibrary::builtin();
    // A dense default, a large PP model, an MoE model with EP and ZeRO-3, GPT-3 with GPipe.
    std::vector<Scenario> cases;
    cases.push_back(defaultScenario(lib));
    Scenario big = defaultScenario(lib);
    big.model = *lib.model("llama3-405b");
    big.gpus = 1024;
    big.parallel.tp = 8;
    big.parallel.pp = 16;
    big.parallel.dp = 8;
    big.parallel.virtual_stages = 1;
    big.parallel.schedule = Schedule::OneF1B;
    big.training.global_batch = 512;
    cases.push_back(big);
    Scenario moe = defaultScenario(lib);
    moe.model = *lib.model("mixtral-8x7b");
    moe.parallel.tp = 2;
    moe.parallel.pp = 2;
    moe.parallel.dp = 16;
    moe.parallel.ep = 8;
    moe.parallel.zero = 3;
    moe.parallel.virtual_stages = 1;
    moe.parallel.schedule = Schedule::OneF1B;
    cases.push_back(moe);
    Scenario gpt = defaultScenario(lib);
    gpt.model = *lib.model("gpt3-175b");
    gpt.parallel.pp = 8;
    gpt.parallel.dp = 1;
    gpt.parallel.virtual_stages = 1;
    gpt.parallel.schedule = Schedule::GPipe;
    gpt.training.seq_len = 2048;
    gpt.training.global_batch = 64;
    cases.push_back(gpt);

    Estimate e;
    double sink = 0;
    for (const Scenario& s : cases) { // warm up: grow the Estimate and the scratch
        evaluate(s, e);
        sink += e.time.step_seconds;
    }
    auto cpuSeconds = [] {
        timespec ts{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
    };
    // Distinct plans defeat the pipeline cost's cache of recent inputs: each evaluation gets a
    // different micro-batch count m between p and 16·p + 6, as a search sees.
    std::vector<Scenario> distinct;
    for (int i = 0; i < 1024; ++i) {
        Scenario s = cases[std::size_t(i) & 3];
        const int m = s.parallel.pp * (1 + (i >> 2) % 16) + (i >> 2) % 7;
        s.training.global_batch = m * s.training.micro_batch * s.parallel.dp;
        distinct.push_back(s);
    }
    const ModelConstants screening = [] {
        ModelConstants k;
        k.simulate_pipeline = false;
        return k;
    }();
    const ModelConstants full;
    // One case: median of 7 runs of n evaluations, per core (thread CPU time) and wall clock.
    auto run = [&](const char* name, const std::vector<Scenario>& plans, const ModelConstants& k,
                   int n) {
        std::array<double, 7> rates{}, wall{};
        for (std::size_t r = 0; r < rates.size(); ++r) {
            const auto t0 = std::chrono::steady_clock::now();
            const double c0 = cpuSeconds();
            for (int i = 0; i < n; ++i) {
                evaluate(plans[std::size_t(i) % plans.size()], e, nullptr, k);
                sink += e.time.step_seconds;
            }
            const double cpu = cpuSeconds() - c0;
            const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
            rates[r] = n / cpu;
            wall[r] = n / dt.count();
        }
        std::sort(rates.begin(), rates.end());
        std::sort(wall.begin(), wall.end());
        const double median = rates[rates.size() / 2];
        std::printf("{\"bench\":\"eval\",\"case\":\"%s\",\"per_second\":%.0f,"
                    "\"ns_per_eval\":%.1f,\"wall_per_second\":%.0f,\"check\":%d}\n",
                    name, median, 1e9 / median, wall[wall.size() / 2], sink > 0 ? 1 : 0);
    };
    // What the search pays per plan: closed-form pipeline cost.
    run("screening-distinct", distinct, screening, 200000);
    // PARALENS_BENCH_CASE=screening stops here (to profile the search's path alone).
    if (const char* only = std::getenv("PARALENS_BENCH_CASE");
        only && std::string(only) == "screening")
        return 0;
    // The full model on plans it has not seen: the event simulator runs every time.
    run("simulated-distinct", distinct, full, 5000);
    // The explorer re-evaluating recent plans (undo, compare): the simulator's cache hits.
    run("simulated-repeat", cases, full, 200000);
    return 0;
}
