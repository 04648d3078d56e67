// SPDX-License-Identifier: GPL-3.0-or-later
// paralens-measure: shared types, error checks and progress lines; its exit codes are in
// core/measure_exit_codes.h, where the app reads them too.
#pragma once
#include "core/measure_exit_codes.h"
#include "core/units.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace paralens::measure {

/// A failed CUDA/NCCL/cuBLASLt call.
class MeasureError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

/// A collective that did not finish within --timeout (the communicators were aborted).
class TimeoutError : public MeasureError
{
public:
    using MeasureError::MeasureError;
};

inline void check(cudaError_t e, const char* what)
{
    if (e != cudaSuccess)
        throw MeasureError(std::string(what) + ": " + cudaGetErrorString(e));
}

inline void check(ncclResult_t r, const char* what)
{
    if (r != ncclSuccess && r != ncclInProgress)
        throw MeasureError(std::string(what) + ": " + ncclGetErrorString(r));
}

/// No GPU: main prints "error: " + what() (noDeviceMessage) and exits with ExitNoDevice.
class NoDeviceError : public MeasureError
{
public:
    using MeasureError::MeasureError;
};

/// Options shared by the subcommands.
struct Options
{
    double min_bytes = 32.0 * units::kMiB; ///< -b
    double max_bytes = units::kGiB;        ///< -e
    double factor = 2;                     ///< -f
    int warmup = 5;                        ///< -w
    int iters = 20;                        ///< -n
    bool check = false;                    ///< -c
    std::string dtype = "bf16";            ///< --dtype bf16|fp32
    std::vector<std::string> ops;          ///< --ops, default all six
    std::vector<int> group_sizes;          ///< --groups, default 2,4,8,... below the world size
    double timeout_seconds = 60;           ///< --timeout, per collective size
    std::string out;                       ///< --out PROFILE.json
    std::string shapes;                    ///< --shapes "m,n,k[:label];..."
    std::string scenario;                  ///< --scenario FILE: GEMM shapes of its layers
    bool fp8 = true;                       ///< --no-fp8 turns FP8 GEMMs off
    double membw_bytes = units::kGiB;
};

/// One JSON line on stderr for the GUI's progress bar. `fields` is a JSON fragment
/// without braces, e.g. "\"op\":\"all_reduce\",\"size_bytes\":1024".
void progress(const std::string& phase, const std::string& fields);

} // namespace paralens::measure
