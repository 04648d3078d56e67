// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/estimate.h"

namespace paralens {

/// The change from a baseline estimate to the current one (current − baseline), for the
/// headline strip of the compare mode.
struct EstimateDelta
{
    double step_seconds = 0;      ///< seconds; < 0: the current plan is faster
    double mfu = 0;               ///< fraction (0.02 = two percentage points)
    double peak_bytes = 0;        ///< bytes per GPU
    double tokens_per_second = 0; ///< whole cluster
    double tflops_per_gpu = 0;    ///< 1e12 FLOP/s
    /// Step-time ratio current / baseline (0 when the baseline's step time is 0).
    double step_ratio = 0;
};

/// current − baseline for every figure of EstimateDelta.
EstimateDelta delta(const Estimate& current, const Estimate& baseline);

} // namespace paralens
