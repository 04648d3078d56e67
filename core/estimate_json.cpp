// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/estimate_json.h"
#include "core/evaluate.h"

#include <nlohmann/json.hpp>

namespace paralens {

nlohmann::json estimateToJson(const Estimate& e)
{
    using nlohmann::json;
    json stages = json::array();
    for (const StageMemory& s : e.stages)
        stages.push_back({{"stage", s.stage},
                          {"parameters", s.parameters},
                          {"gradients", s.gradients},
                          {"optimizer_states", s.optimizer_states},
                          {"activations", s.activations},
                          {"comm_buffers", s.comm_buffers},
                          {"runtime_overhead", s.runtime_overhead},
                          {"total", s.total()},
                          {"inflight_microbatches", s.inflight_microbatches},
                          {"embedding", s.holds_embedding},
                          {"lm_head", s.holds_lm_head},
                          {"mtp_layers", s.mtp_layers},
                          {"stored_layers", s.stored_layers}});
    const CommSeconds& c = e.time.exposed;
    json warnings = json::array();
    for (const std::string& w : warningTexts(e))
        warnings.push_back(w);
    return json{
        {"gpus", e.gpus},
        {"fits", e.fits},
        {"memory",
         {{"capacity_bytes", e.capacity_bytes},
          {"peak_bytes", e.peak_bytes},
          {"peak_allocated_bytes", e.peak_allocated_bytes},
          {"peak_reserved_bytes", e.peak_reserved_bytes},
          {"stages", std::move(stages)}}},
        {"time",
         {{"step_seconds", e.time.step_seconds},
          {"compute_seconds", e.time.compute_seconds},
          {"bubble_fraction", e.time.bubble_fraction},
          {"bubble_overhead", e.time.bubble_overhead},
          {"comm", {{"tp", c.tp}, {"cp", c.cp}, {"ep", c.ep}, {"pp", c.pp}, {"dp", c.dp}}}}},
        {"throughput",
         {{"tokens_per_second", e.throughput.tokens_per_second},
          {"model_flops_per_step", e.throughput.model_flops_per_step},
          {"tflops_per_gpu", e.throughput.tflops_per_gpu},
          {"mfu", e.throughput.mfu},
          {"hfu", e.throughput.hfu}}},
        {"warnings", std::move(warnings)},
    };
}

} // namespace paralens
