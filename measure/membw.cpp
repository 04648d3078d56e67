// SPDX-License-Identifier: GPL-3.0-or-later
#include "measure/membw.h"

#include "measure/kernels.h"

#include <algorithm>
#include <string>
#include <vector>

namespace paralens::measure {

MembwResult runMembw(const Options& opt, std::FILE* table)
{
    check(cudaSetDevice(0), "cudaSetDevice");
    const std::size_t bytes =
        std::max<std::size_t>(1 << 20, std::size_t(opt.membw_bytes) & ~std::size_t(255));
    void *src = nullptr, *dst = nullptr;
    check(cudaMalloc(&src, bytes), "cudaMalloc");
    check(cudaMalloc(&dst, bytes), "cudaMalloc");
    check(cudaMemset(src, 1, bytes), "cudaMemset");
    cudaStream_t s = nullptr;
    check(cudaStreamCreate(&s), "cudaStreamCreate");
    cudaEvent_t a = nullptr, b = nullptr;
    check(cudaEventCreate(&a), "cudaEventCreate");
    check(cudaEventCreate(&b), "cudaEventCreate");

    auto median = [&](auto&& body) {
        for (int w = 0; w < std::max(1, opt.warmup); ++w)
            body();
        std::vector<double> t;
        for (int it = 0; it < std::max(1, opt.iters); ++it) {
            check(cudaEventRecord(a, s), "cudaEventRecord");
            body();
            check(cudaEventRecord(b, s), "cudaEventRecord");
            check(cudaEventSynchronize(b), "cudaEventSynchronize");
            float ms = 0;
            check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
            t.push_back(ms * 1e-3);
        }
        std::sort(t.begin(), t.end());
        return t[t.size() / 2];
    };
    MembwResult r;
    const double tCopy = median([&] {
        check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s), "cudaMemcpyAsync");
    });
    const double tStream = median([&] { streamCopy(src, dst, bytes, s); });
    check(cudaGetLastError(), "stream kernel");
    r.d2d_copy_gbps = 2.0 * double(bytes) / tCopy / 1e9;
    r.stream_gbps = 2.0 * double(bytes) / tStream / 1e9;
    if (table) {
        std::fprintf(table, "# membw on device 0, %zu bytes, (read + write) / time\n", bytes);
        std::fprintf(table, "  d2d_copy  %10.1f us  %8.1f GB/s\n", tCopy * 1e6, r.d2d_copy_gbps);
        std::fprintf(table, "  stream    %10.1f us  %8.1f GB/s\n", tStream * 1e6, r.stream_gbps);
        std::fflush(table);
    }
    progress("membw", "\"d2d_copy_gbps\":" + std::to_string(r.d2d_copy_gbps) +
                          ",\"stream_gbps\":" + std::to_string(r.stream_gbps));
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    cudaStreamDestroy(s);
    cudaFree(src);
    cudaFree(dst);
    return r;
}

} // namespace paralens::measure
