// SPDX-License-Identifier: GPL-3.0-or-later
// Version codes as the CUDA and NCCL libraries report them, turned into "13.0" / "2.28.9".
// Needs no CUDA, so tests/measure checks it directly.
#pragma once
#include <string>

namespace paralens::measure {

/// cudaRuntimeGetVersion / cudaDriverGetVersion: 1000 * major + 10 * minor (CUDA Runtime
/// API reference), e.g. 13000 -> "13.0", 12040 -> "12.4". 0 (no driver) -> "".
inline std::string cudaVersionString(int code)
{
    if (code <= 0)
        return {};
    return std::to_string(code / 1000) + "." + std::to_string(code % 1000 / 10);
}

/// ncclGetVersion: NCCL_VERSION(X, Y, Z) in nccl.h, X * 10000 + Y * 100 + Z since NCCL 2.9,
/// X * 1000 + Y * 100 + Z before, e.g. 22809 -> "2.28.9", 2804 -> "2.8.4".
inline std::string ncclVersionString(int code)
{
    if (code <= 0)
        return {};
    const int scale = code >= 10000 ? 10000 : 1000;
    return std::to_string(code / scale) + "." + std::to_string(code % scale / 100) + "." +
           std::to_string(code % 100);
}

} // namespace paralens::measure
