// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/accuracy.h"
#include "core/collective.h"
#include "core/constants.h"
#include "core/fitted_constants.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace paralens {

/// What to fit and how (docs/fit.md).
struct FitOptions
{
    /// The constants to fit; empty = every FitConstant. A constant that none of the fitted runs
    /// responds to stays at its start value and is reported as not identified.
    std::vector<FitConstant> constants;
    /// Share of the runs kept out of the fit, in [0, 1): the fit reports its error on them.
    double holdout = 0;
    std::uint64_t seed = 1; ///< of the hold-out split (the split is the only random step)
    /// Log errors larger than this count linearly, not squared (Huber): one odd run cannot pull
    /// the fit towards itself. 0.05 ≈ a 5 % error.
    double huber_delta = 0.05;
    int max_iterations = 200;
};

/// One fitted constant.
struct FitParameter
{
    FitConstant constant = FitConstant::GemmEfficiency;
    std::string gpu;  ///< the GPU type of a gemm_efficiency; empty for the others
    std::string name; ///< "gemm_efficiency[A100-SXM4-80GB]", "step_overhead_seconds", ...
    double start = 0; ///< the value the model had before the fit
    double value = 0; ///< fitted (= start when not identified)
    ConstantBounds bounds;
    bool identified = false; ///< some fitted run's prediction moves with it
    bool at_bound = false;   ///< the fit stopped on a bound
};

/// One measured figure before and after the fit.
struct FitRow
{
    std::string name;
    std::size_t run_index = 0; ///< into the runs given to fitConstants()
    RunMetric metric = RunMetric::StepSeconds;
    double measured = 0;
    double predicted_before = 0, predicted_after = 0;
    double error_before = 0,
           error_after = 0; ///< signed fractions (predicted − measured) / measured
    bool holdout = false;   ///< kept out of the fit
};

/// Error summary of a set of rows (absolute percentage errors as fractions).
struct FitErrors
{
    int rows = 0;
    double mape = 0;
    double median_ape = 0;
    std::string worst_name;
    double worst_error = 0; ///< signed
};

struct FitResult
{
    std::vector<FitParameter> parameters;
    std::vector<FitRow> rows;
    FitErrors fit_before, fit_after;         ///< on the fitted rows
    FitErrors holdout_before, holdout_after; ///< on the held-out rows (rows = 0 when none)
    int fit_runs = 0, holdout_runs = 0;
    std::vector<std::string> failed; ///< "run: why" for runs the model cannot predict
    int skipped_rows = 0;            ///< peak-memory figures: not a time, not fitted
    int iterations = 0;
    bool converged = false;
    std::uint64_t seed = 0;

    /// The identified constants at their fitted values, with the fit's provenance.
    FittedConstants constants() const;
};

/// Fits the chosen constants to the runs' measured times by robust (Huber) least squares on the
/// log error log(predicted / measured): a coarse scan of each constant over its bounds, then
/// Levenberg–Marquardt with forward-difference derivatives, bounds kept by an active set. The
/// model is evaluated with `start` (gemm_efficiency replaced per GPU type) and `measured`.
/// Deterministic for a given input and seed. Throws InputError naming the problem when the runs
/// cannot support a fit: none given, none predictable, no time measured, fewer runs than
/// identified constants, a hold-out share outside [0, 1) or one that leaves nothing to fit.
FitResult fitConstants(std::span<const MeasuredRun> runs, const FitOptions& options,
                       const ModelConstants& start = {},
                       const MeasuredPerformance* measured = nullptr);

/// Summary of signed errors (empty names allowed).
FitErrors summarizeErrors(std::span<const double> errors, std::span<const std::string> names);

} // namespace paralens
