// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/estimate.h"
#include "core/presets.h"
#include "core/scenario.h"

#include <string>
#include <string_view>
#include <vector>

namespace paralens {

/// How a publication counts the FLOPs behind its TFLOP/s figure.
enum class FlopsConvention
{
    NarayananEq3, ///< 96·B·s·l·h²·(1 + s/(6h) + V/(16lh)): includes full recompute
    Model,        ///< our model FLOPs (6·T·weights + 12·T·s·q·L, full s², no recompute)
};

/// One published training run (resources/reference/*.json): what was trained, on what, how,
/// and the figure the authors measured.
struct ReferenceRun
{
    std::string file;   ///< "reference/<file>", the path under resources/
    std::string source; ///< publication and table
    std::string name;   ///< the row, e.g. "GPT 1T, 3072 A100"
    std::string metric; ///< "tflops_per_gpu", "mfu" (a fraction of the dense BF16 peak) or
                        ///< "tokens_per_second_per_gpu"
    FlopsConvention convention = FlopsConvention::Model;
    double published = 0;
    std::string notes; ///< assumptions where the publication is silent
    Scenario scenario;
};

/// Whether a compiled-in reference file is a measured-runs file (`*.paralens-runs.json`,
/// docs/runs-format.md) rather than one publication's table (the format below).
bool isRunsFile(std::string_view path);

/// Every run in the compiled-in publication files (not the measured-runs files: those are read
/// by builtinReferenceRuns, core/accuracy.h). Throws InputError naming the file and key for
/// a malformed file (a bug in the shipped resources).
std::vector<ReferenceRun> referenceRuns(const PresetLibrary& presets = PresetLibrary::builtin());

/// The prediction for a run in the publication's own metric and FLOP convention.
double predictedMetric(const ReferenceRun& run, const Estimate& e);

} // namespace paralens
