// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/compare.h"

namespace paralens {

EstimateDelta delta(const Estimate& current, const Estimate& baseline)
{
    EstimateDelta d;
    d.step_seconds = current.time.step_seconds - baseline.time.step_seconds;
    d.mfu = current.throughput.mfu - baseline.throughput.mfu;
    d.peak_bytes = current.peak_bytes - baseline.peak_bytes;
    d.tokens_per_second =
        current.throughput.tokens_per_second - baseline.throughput.tokens_per_second;
    d.tflops_per_gpu = current.throughput.tflops_per_gpu - baseline.throughput.tflops_per_gpu;
    d.step_ratio = baseline.time.step_seconds > 0
                       ? current.time.step_seconds / baseline.time.step_seconds
                       : 0.0;
    return d;
}

} // namespace paralens
