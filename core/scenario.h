// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/cluster_spec.h"
#include "core/model_spec.h"
#include "core/plan.h"

#include <string>

namespace paralens {

/// Everything the model needs: what is trained, on what, and how it is split.
/// model_id / hardware_id keep the preset id when the spec came from a preset unchanged,
/// so a saved file says "llama3-70b" rather than repeating the numbers.
struct Scenario
{
    std::string model_id; ///< preset id, or empty for a custom model
    ModelSpec model;
    std::string hardware_id; ///< preset id, or empty for a custom cluster
    ClusterSpec cluster;
    int gpus = 0;
    ParallelPlan parallel;
    TrainingSettings training;
    std::string calibration; ///< path to a calibration profile, or empty
};

} // namespace paralens
