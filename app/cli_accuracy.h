// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/accuracy.h"

#include <QTextStream>

#include <nlohmann/json_fwd.hpp>

#include <span>

// The accuracy report as `paralens validate` and `paralens reference` print it.
namespace paralens::cli {

/// One row per measured figure (run, metric, measured, predicted, signed error, the predicted
/// breakdown), a source line wherever the source changes, then the summary, the groups and
/// the accuracy by stack (accuracyByStack()).
/// The assumptions come first, one line each.
void printAccuracyReport(QTextStream& out, const AccuracyReport& report,
                         std::span<const MeasuredRun> runs, GroupBy group_by);

/// {"summary": {runs, failed, mape, median_ape, worst {name, error}}, "groups": [{key, runs,
/// spearman, best_plan_rank, best_plan_slowdown}], "stacks": [{framework, gpu_family, runs, mape,
/// mean_signed}], "runs": [{name, metric, measured, predicted, error} or {name, metric,
/// measured, failed}]}; errors are signed fractions, mean_signed positive where the model is
/// fast.
nlohmann::json accuracyJson(const AccuracyReport& report, std::span<const MeasuredRun> runs);

} // namespace paralens::cli
