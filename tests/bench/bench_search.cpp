// SPDX-License-Identifier: GPL-3.0-or-later
// paralens-bench-search: the full configuration search, one JSON line per case.
// Case gpt3-175b-1024xa100: GPT-3 175B on 1024 A100-80GB, global batch 1536, seq 2048
// (Narayanan et al. 2021, Table 2); the target is under 10 s on a two-core machine.
#include "core/presets.h"
#include "core/search.h"

#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>

using namespace paralens;

namespace {

SearchSpace problem(const char* model, const char* hardware, int gpus, int batch, int seq)
{
    const PresetLibrary& lib = PresetLibrary::builtin();
    SearchSpace sp;
    sp.base.model_id = model;
    sp.base.model = *lib.model(model);
    sp.base.hardware_id = hardware;
    sp.base.cluster = *lib.hardware(hardware);
    sp.base.gpus = gpus;
    sp.base.training.global_batch = batch;
    sp.base.training.seq_len = seq;
    return sp;
}

void report(const char* name, const SearchResult& r, double cpu_seconds)
{
    std::printf("{\"bench\":\"search\",\"case\":\"%s\",\"evaluated\":%llu,\"scored\":%llu,"
                "\"pruned\":%llu,\"feasible\":%llu,\"threads\":%u,\"seconds\":%.3f,"
                "\"cpu_seconds\":%.3f,\"plans_per_second\":%.0f",
                name, static_cast<unsigned long long>(r.evaluated),
                static_cast<unsigned long long>(r.scored),
                static_cast<unsigned long long>(r.pruned),
                static_cast<unsigned long long>(r.feasible), r.threads, r.seconds, cpu_seconds,
                r.seconds > 0 ? double(r.evaluated) / r.seconds : 0.0);
    if (!r.results.empty()) {
        const SearchPlan& b = r.results.front();
        std::printf(",\"best\":{\"tp\":%d,\"pp\":%d,\"cp\":%d,\"dp\":%d,\"v\":%d,\"mb\":%d,"
                    "\"tokens_per_second\":%.0f,\"mfu\":%.4f}",
                    b.parallel.tp, b.parallel.pp, b.parallel.cp, b.parallel.dp,
                    b.parallel.virtual_stages, b.training.micro_batch, b.tokens_per_second, b.mfu);
    }
    std::printf("}\n");
    std::fflush(stdout);
}

} // namespace

// Process CPU time (all threads): the figure that does not depend on other load on the machine.
static double cpuSeconds()
{
    return double(std::clock()) / CLOCKS_PER_SEC;
}

static void run(const char* name, const SearchSpace& space)
{
    const double cpu0 = cpuSeconds();
    const SearchResult r = search(space);
    report(name, r, cpuSeconds() - cpu0);
}

int main(int argc, char** argv)
{
    const bool all = argc > 1 && std::strcmp(argv[1], "--all") == 0;
    run("gpt3-175b-1024xa100", problem("gpt3-175b", "a100-80gb", 1024, 1536, 2048));
    if (all) // larger: Llama 3 405B on 8192 H100 (Llama 3 §3.3.2 Table 4)
        run("llama3-405b-8192xh100", problem("llama3-405b", "h100-sxm", 8192, 2048, 8192));
    return 0;
}
