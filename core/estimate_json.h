// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/estimate.h"

#include <nlohmann/json_fwd.hpp>

namespace paralens {

/// The Estimate in the `paralens eval --json` contract of docs/cli.md, exactly those keys: gpus,
/// fits, memory {capacity_bytes, peak_bytes, stages[]}, time {step_seconds, compute_seconds,
/// bubble_fraction, bubble_overhead, comm {tp, cp, ep, pp, dp} (exposed seconds)},
/// throughput {tokens_per_second, model_flops_per_step, tflops_per_gpu, mfu, hfu}, warnings[]
/// (sentences). Bytes and seconds.
nlohmann::json estimateToJson(const Estimate& e);

} // namespace paralens
