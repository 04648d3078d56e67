// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Invariants every Estimate of a runnable scenario must satisfy. Shared by the
// property sweep test and the fuzz_estimate target, so it uses no Qt and no test framework.

#include "core/estimate.h"
#include "core/estimate_json.h"
#include "core/scenario.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

namespace paralens::invariants {

inline bool closeRel(double a, double b, double rel = 1e-9)
{
    return std::fabs(a - b) <= rel * std::max({1.0, std::fabs(a), std::fabs(b)});
}

/// The first broken invariant of `e` (evaluated from runnable scenario `s`), or "" when all
/// hold: every figure finite and >= 0; one stage per pipeline stage; stage totals equal the
/// sum of their parts (as written by estimateToJson); peak = the largest stage total;
/// fits = peak <= capacity; bubble fraction in [0, 1]; step time covers its additive parts;
/// hidden communication within the step; tokens/s · step = tokens per step; HFU >= MFU.
inline std::string check(const Scenario& s, const Estimate& e)
{
    auto bad = [](const char* name, double v) {
        return !std::isfinite(v) || v < 0 ? std::string(name) + " = " + std::to_string(v) +
                                                " is not a finite, non-negative number"
                                          : std::string();
    };
#define PARALENS_CHECK_NUM(expr)                                                                   \
    if (auto m = bad(#expr, (expr)); !m.empty())                                                   \
        return m;
    PARALENS_CHECK_NUM(e.capacity_bytes)
    PARALENS_CHECK_NUM(e.peak_bytes)
    PARALENS_CHECK_NUM(e.tokens_per_step)
    const TimeBreakdown& t = e.time;
    PARALENS_CHECK_NUM(t.step_seconds)
    PARALENS_CHECK_NUM(t.compute_seconds)
    PARALENS_CHECK_NUM(t.bubble_seconds)
    PARALENS_CHECK_NUM(t.bubble_fraction)
    PARALENS_CHECK_NUM(t.bubble_overhead)
    PARALENS_CHECK_NUM(t.optimizer_seconds)
    PARALENS_CHECK_NUM(t.offload_seconds)
    for (const CommSeconds* c : {&t.exposed, &t.overlapped}) {
        PARALENS_CHECK_NUM(c->tp)
        PARALENS_CHECK_NUM(c->cp)
        PARALENS_CHECK_NUM(c->ep)
        PARALENS_CHECK_NUM(c->pp)
        PARALENS_CHECK_NUM(c->dp)
    }
    const Throughput& th = e.throughput;
    PARALENS_CHECK_NUM(th.tokens_per_second)
    PARALENS_CHECK_NUM(th.model_flops_per_step)
    PARALENS_CHECK_NUM(th.hardware_flops_per_step)
    PARALENS_CHECK_NUM(th.tflops_per_gpu)
    PARALENS_CHECK_NUM(th.mfu)
    PARALENS_CHECK_NUM(th.hfu)
    for (const StageMemory& st : e.stages) {
        PARALENS_CHECK_NUM(st.parameters)
        PARALENS_CHECK_NUM(st.gradients)
        PARALENS_CHECK_NUM(st.optimizer_states)
        PARALENS_CHECK_NUM(st.activations)
        PARALENS_CHECK_NUM(st.comm_buffers)
        PARALENS_CHECK_NUM(st.runtime_overhead)
        PARALENS_CHECK_NUM(st.inflight_microbatches)
        PARALENS_CHECK_NUM(st.total())
    }
#undef PARALENS_CHECK_NUM

    if (int(e.stages.size()) != s.parallel.pp)
        return "stages: " + std::to_string(e.stages.size()) +
               " for pp = " + std::to_string(s.parallel.pp);
    if (e.gpus != s.parallel.gpus())
        return "gpus: " + std::to_string(e.gpus) + " for a plan of " +
               std::to_string(s.parallel.gpus());
    double peak = 0;
    for (std::size_t i = 0; i < e.stages.size(); ++i) {
        if (e.stages[i].stage != int(i))
            return "stages[" + std::to_string(i) + "].stage is " +
                   std::to_string(e.stages[i].stage);
        peak = std::max(peak, e.stages[i].total());
    }
    if (!closeRel(peak, e.peak_bytes))
        return "peak_bytes " + std::to_string(e.peak_bytes) + " is not the largest stage total " +
               std::to_string(peak);
    if (e.peak_stage < 0 || e.peak_stage >= int(e.stages.size()) ||
        !closeRel(e.stages[std::size_t(e.peak_stage)].total(), e.peak_bytes))
        return "peak_stage " + std::to_string(e.peak_stage) + " does not hold the peak";
    if (e.fits != (e.peak_bytes <= e.capacity_bytes))
        return "fits disagrees with peak_bytes <= capacity_bytes";

    // Totals as users read them (paralens eval --json) equal the sum of their parts.
    const nlohmann::json j = estimateToJson(e);
    for (const auto& st : j.at("memory").at("stages")) {
        double sum = 0;
        for (const char* k : {"parameters", "gradients", "optimizer_states", "activations",
                              "comm_buffers", "runtime_overhead"})
            sum += st.at(k).get<double>();
        if (!closeRel(sum, st.at("total").get<double>()))
            return "memory.stages[" + std::to_string(st.at("stage").get<int>()) +
                   "].total is not the sum of its parts";
    }
    if (!closeRel(j.at("memory").at("peak_bytes").get<double>(), e.peak_bytes))
        return "memory.peak_bytes differs from the Estimate";

    if (t.bubble_fraction > 1 + 1e-9)
        return "bubble_fraction " + std::to_string(t.bubble_fraction) + " above 1";
    if (!(t.step_seconds > 0))
        return "step_seconds is not positive for a runnable plan";
    if (t.step_seconds * (1 + 1e-9) < t.exposed.dp + t.optimizer_seconds + t.offload_seconds)
        return "step_seconds is below the sum of its DP, optimizer and offload parts";
    // Hidden communication runs beside the step's compute or in its pipeline idle time, never
    // beyond the step (the breakdown draws it against the step line).
    const CommSeconds& o = t.overlapped;
    if (o.tp + o.cp + o.ep + o.pp + o.dp > t.step_seconds * (1 + 1e-9))
        return "hidden communication " + std::to_string(o.tp + o.cp + o.ep + o.pp + o.dp) +
               " s exceeds the step " + std::to_string(t.step_seconds) + " s";
    const CommSeconds& x = t.exposed;
    if (o.dp > (t.compute_seconds + t.bubble_seconds + x.tp + x.cp + x.ep + x.pp) * (1 + 1e-9))
        return "hidden DP communication exceeds the busy and idle time it can run beside";
    if (!closeRel(th.tokens_per_second * t.step_seconds, e.tokens_per_step, 1e-6))
        return "tokens_per_second * step_seconds != tokens_per_step";
    if (th.hfu * (1 + 1e-9) + 1e-15 < th.mfu)
        return "hfu below mfu (recomputation cannot lower hardware FLOPs)";
    return {};
}

} // namespace paralens::invariants
