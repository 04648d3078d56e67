// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Exit codes of paralens-measure, shared by the tool and the programs that run it (the
// calibration panel tells "no GPU here" from a failed run by them). Needs no CUDA.

namespace paralens::measure {

/// Documented in `paralens-measure --help` and measure/README.md.
enum ExitCode
{
    ExitOk = 0,
    ExitFailure = 1,  ///< a CUDA, NCCL or cuBLASLt call failed
    ExitUsage = 2,    ///< bad command line or --scenario file
    ExitNoDevice = 3, ///< "error: no CUDA device visible"
    ExitTimeout = 4   ///< a collective hung past --timeout and was aborted; partial profile written
};

} // namespace paralens::measure
