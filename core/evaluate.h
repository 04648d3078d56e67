// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/collective.h"
#include "core/constants.h"
#include "core/estimate.h"
#include "core/pipeline_cost.h"
#include "core/scenario.h"

#include <string>
#include <string_view>
#include <vector>

namespace paralens {

/// The core model: per-stage memory, step time, throughput and warnings of a scenario
/// (formulas and sources: docs/formulas.md; choices: docs/model.md). The scenario must be runnable
/// (isRunnable()); a plan that runs but does not fit gives fits = false and peak_stage names
/// the over-capacity stage. `measured`, when given, replaces datasheet collective times, GEMM
/// efficiency and HBM bandwidth wherever it has a figure. Reusing `out` across calls performs no
/// heap allocation once its stages vector has the capacity (a search calls this millions of
/// times). Units: bytes and seconds throughout.
void evaluate(const Scenario& s, Estimate& out, const MeasuredPerformance* measured = nullptr);
/// As above with some of the named constants overridden; a `measured` profile's fitted
/// constants (MeasuredPerformance::adjustConstants, docs/fit.md) override these in turn.
/// `timeline`, when given, receives the simulated pipeline schedule behind est.time (the
/// Gantt chart and `paralens schedule` read it).
void evaluate(const Scenario& s, Estimate& out, const MeasuredPerformance* measured,
              const ModelConstants& constants, PipelineTimeline* timeline = nullptr);
/// Convenience for one-off callers.
Estimate evaluate(const Scenario& s);

/// One sentence per warning.
std::string_view warningText(Warning w);
/// The sentences of every warning set in `e`, in a stable order.
std::vector<std::string> warningTexts(const Estimate& e);

} // namespace paralens
