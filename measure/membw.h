// SPDX-License-Identifier: GPL-3.0-or-later
// The `membw` subcommand: achieved HBM bandwidth on device 0.
#pragma once
#include "measure/common.h"

#include <cstdio>

namespace paralens::measure {

struct MembwResult
{
    double d2d_copy_gbps = 0; ///< cudaMemcpy device-to-device, (read + write) bytes / time
    double stream_gbps = 0;   ///< 16-byte streaming copy kernel, (read + write) bytes / time
};

MembwResult runMembw(const Options& opt, std::FILE* table);

} // namespace paralens::measure
