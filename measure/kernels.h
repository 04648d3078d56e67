// SPDX-License-Identifier: GPL-3.0-or-later
// Device kernels behind a plain host interface (compiled by nvcc in kernels.cu).
#pragma once
#include <cstddef>
#include <cuda_runtime.h>

namespace paralens::measure {

enum class DType
{
    BF16,
    FP32
};

inline std::size_t dtypeBytes(DType t)
{
    return t == DType::BF16 ? 2 : 4;
}

/// Sets `count` elements to `value`.
void fillBuffer(void* p, std::size_t count, DType t, float value, cudaStream_t s);

/// Adds to *wrong the number of elements i with value != a + b * (i / chunk).
void countWrong(const void* p, std::size_t count, DType t, std::size_t chunk, float a, float b,
                unsigned long long* wrong, cudaStream_t s);

/// Streams `bytes` (a multiple of 16) from src to dst with 16-byte loads and stores.
void streamCopy(const void* src, void* dst, std::size_t bytes, cudaStream_t s);

} // namespace paralens::measure
