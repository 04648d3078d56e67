// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/accuracy.h"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace paralens {

/// What the accuracy scatter colours its points by.
enum class AccuracyColour
{
    Group, ///< the report's group (model and GPU count by default)
    TP,
    PP,
    DP,
    CP,
    EP,
    MicroBatch,
    Gpus,
    Schedule,
    Recompute,
    Hardware,
};
/// Every AccuracyColour in the order above, and its name ("group", "TP", "micro-batch", ...).
std::span<const AccuracyColour> allAccuracyColours();
std::string_view accuracyColourName(AccuracyColour c);

/// One point of the predicted-against-measured scatter. Every speed figure is shown as the step
/// time it implies (a rate scales with 1/step), so runs measured by step time, tokens/s,
/// TFLOP/s or MFU share one pair of axes.
struct AccuracyPoint
{
    std::size_t row = 0; ///< into AccuracyReport::rows
    double measured_seconds = 0;
    double predicted_seconds = 0;
    int category = 0; ///< into AccuracyPlot::categories
};

struct AccuracyPlot
{
    std::vector<AccuracyPoint> points;
    std::vector<std::string> categories; ///< legend labels, sorted by their plan value
    double lower = 0, upper = 0;         ///< a square range (seconds) holding every point
    int memory_rows = 0;                 ///< peak-memory figures, not on this chart
    int failed_rows = 0;                 ///< runs that could not be predicted
};

/// The scatter of a report: one point per predicted speed row, coloured by `colour`.
/// `runs` are the runs the report was made from (its rows' run_index point into them).
AccuracyPlot accuracyPlot(const AccuracyReport& report, std::span<const MeasuredRun> runs,
                          AccuracyColour colour);

/// The accuracy on the runs like the current scenario: same model architecture, same GPU type.
struct SimilarAccuracy
{
    int runs = 0;    ///< predicted speed rows of similar runs
    double mape = 0; ///< their mean absolute percentage error (fraction)
    /// Their mean of measured over predicted step time, less 1: how much faster the model
    /// says they run (negative: slower). A bias the MAPE alone hides.
    double mean_fast = 0;
};
SimilarAccuracy similarAccuracy(const AccuracyReport& report, std::span<const MeasuredRun> runs,
                                const Scenario& current);

/// The accuracy on runs of the current scenario's software stack: same framework, same GPU
/// family (gpuFamily()), any model. Published runs rarely train the user's model, but the
/// model's errors follow the stack (docs/validation.md: PyTorch FSDP on Hopper reads fast,
/// Megatron-Core there does not), so this is the evidence the built-in runs give a plan.
SimilarAccuracy stackAccuracy(const AccuracyReport& report, std::span<const MeasuredRun> runs,
                              const Scenario& current);

/// One software stack's share of a report: its framework on one GPU family.
struct StackAccuracy
{
    Framework framework = Framework::Megatron;
    std::string_view family; ///< gpuFamily(): "A100", "Hopper", "Blackwell", "Instinct", "other"
    SimilarAccuracy accuracy;
};
/// stackAccuracy() for every stack among the runs that has a speed row, ordered by framework
/// and then family: where the model is biased, by how much, on how many runs. A bias shared by
/// every stack is a level; one that a single stack carries points at its conventions.
std::vector<StackAccuracy> accuracyByStack(const AccuracyReport& report,
                                           std::span<const MeasuredRun> runs);

} // namespace paralens
