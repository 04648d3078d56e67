// SPDX-License-Identifier: GPL-3.0-or-later
// paralens-measure: shared types, error checks, exit codes and progress lines.
#pragma once
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace paralens::measure {

/// Exit codes (documented in `paralens-measure --help` and measure/README.md).
enum ExitCode
{
    ExitOk = 0,
    ExitFailure = 1,  ///< a CUDA, NCCL or cuBLASLt call failed
    ExitUsage = 2,    ///< bad command line or --scenario file
    ExitNoDevice = 3, ///< "error: no CUDA device visible"
    ExitTimeout = 4   ///< a collective hung past --timeout and was aborted; partial profile written
};

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

/// No GPU: main prints "error: no CUDA device visible" and exits with ExitNoDevice.
class NoDeviceError : public MeasureError
{
public:
    using MeasureError::MeasureError;
};

/// Options shared by the subcommands.
struct Options
{
    double min_bytes = 32.0 * (1 << 20); ///< -b
    double max_bytes = 1.0 * (1 << 30);  ///< -e
    double factor = 2;                   ///< -f
    int warmup = 5;                      ///< -w
    int iters = 20;                      ///< -n
    bool check = false;                  ///< -c
    std::string dtype = "bf16";          ///< --dtype bf16|fp32
    std::vector<std::string> ops;        ///< --ops, default all six
    std::vector<int> group_sizes;        ///< --groups, default 2,4,8,... below the world size
    double timeout_seconds = 60;         ///< --timeout, per collective size
    std::string out;                     ///< --out PROFILE.json
    std::string shapes;                  ///< --shapes "m,n,k[:label];..."
    std::string scenario;                ///< --scenario FILE: GEMM shapes of its layers
    bool fp8 = true;                     ///< --no-fp8 turns FP8 GEMMs off
    double membw_bytes = 1.0 * (1 << 30);
};

/// One JSON line on stderr for the GUI's progress bar. `fields` is a JSON fragment
/// without braces, e.g. "\"op\":\"all_reduce\",\"size_bytes\":1024".
void progress(const std::string& phase, const std::string& fields);

} // namespace paralens::measure
