// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/pipeline_sim.h"
#include "core/schedule.h"

#include <nlohmann/json.hpp>

#include <string>

namespace paralens {

/// Chrome trace-event JSON (the "JSON Object Format" of the Trace Event Format, loaded by
/// Perfetto and chrome://tracing) of a simulated schedule: one track (tid = stage) per
/// pipeline stage with thread_name metadata, one complete ("X") event per op named like
/// `F mb3 c1`, ts and dur in microseconds, args {stage, microbatch, chunk, model_stage}; a
/// `DP sync` event per stage where the DP synchronisation is exposed.
nlohmann::json chromeTrace(const PipelineSchedule& schedule, const SimulationResult& result,
                           const std::string& process_name = "pipeline");

/// The timeline as `paralens schedule --json` prints it (docs/cli.md): schedule, stages,
/// microbatches, virtual_stages, step_seconds, pipeline_seconds, bubble_fraction,
/// bubble_overhead, stage_stats[] {stage, busy_seconds, idle_seconds, dp_exposed_seconds,
/// peak_inflight_microbatches}, ops[] {stage, kind, microbatch, chunk, start, end} (seconds).
nlohmann::json timelineJson(const PipelineSchedule& schedule, const SimulationResult& result);

} // namespace paralens
