// SPDX-License-Identifier: GPL-3.0-or-later
#include "measure/kernels.h"

#include <cuda_bf16.h>

namespace paralens::measure {
namespace {

__device__ inline float toFloat(float v)
{
    return v;
}
__device__ inline float toFloat(__nv_bfloat16 v)
{
    return __bfloat162float(v);
}
template <typename T> __device__ inline T fromFloat(float v);
template <> __device__ inline float fromFloat<float>(float v)
{
    return v;
}
template <> __device__ inline __nv_bfloat16 fromFloat<__nv_bfloat16>(float v)
{
    return __float2bfloat16(v);
}

template <typename T> __global__ void fillKernel(T* p, std::size_t n, float v)
{
    const T x = fromFloat<T>(v);
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * blockDim.x)
        p[i] = x;
}

template <typename T>
__global__ void countWrongKernel(const T* p, std::size_t n, std::size_t chunk, float a, float b,
                                 unsigned long long* wrong)
{
    unsigned long long local = 0;
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * blockDim.x) {
        const float expect = toFloat(fromFloat<T>(a + b * float(i / chunk)));
        if (toFloat(p[i]) != expect)
            ++local;
    }
    if (local)
        atomicAdd(wrong, local);
}

__global__ void streamKernel(const float4* __restrict__ src, float4* __restrict__ dst,
                             std::size_t n)
{
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * blockDim.x)
        dst[i] = src[i];
}

int gridFor(std::size_t n)
{
    int dev = 0, sms = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    const std::size_t want = (n + 255) / 256;
    const std::size_t cap = std::size_t(sms > 0 ? sms : 80) * 8;
    return int(want < cap ? (want > 0 ? want : 1) : cap);
}

} // namespace

void fillBuffer(void* p, std::size_t count, DType t, float value, cudaStream_t s)
{
    if (t == DType::BF16)
        fillKernel<<<gridFor(count), 256, 0, s>>>(static_cast<__nv_bfloat16*>(p), count, value);
    else
        fillKernel<<<gridFor(count), 256, 0, s>>>(static_cast<float*>(p), count, value);
}

void countWrong(const void* p, std::size_t count, DType t, std::size_t chunk, float a, float b,
                unsigned long long* wrong, cudaStream_t s)
{
    if (chunk == 0)
        chunk = 1;
    if (t == DType::BF16)
        countWrongKernel<<<gridFor(count), 256, 0, s>>>(static_cast<const __nv_bfloat16*>(p), count,
                                                        chunk, a, b, wrong);
    else
        countWrongKernel<<<gridFor(count), 256, 0, s>>>(static_cast<const float*>(p), count, chunk,
                                                        a, b, wrong);
}

void streamCopy(const void* src, void* dst, std::size_t bytes, cudaStream_t s)
{
    const std::size_t n = bytes / sizeof(float4);
    streamKernel<<<gridFor(n), 256, 0, s>>>(static_cast<const float4*>(src),
                                            static_cast<float4*>(dst), n);
}

} // namespace paralens::measure
