// SPDX-License-Identifier: GPL-3.0-or-later
#include "measure/gemm.h"

#include <cublasLt.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace paralens::measure {
namespace {

void checkLt(cublasStatus_t s, const char* what)
{
    if (s != CUBLAS_STATUS_SUCCESS)
        throw MeasureError(std::string(what) + ": cuBLASLt status " + std::to_string(int(s)));
}

/// One matmul D[m×n] = op(A)[m×k] · B[k×n], "TN" layout (the one FP8 requires): A stored
/// k×m column-major and transposed, B stored k×n, D m×n in BF16, FP32 accumulation.
class Matmul
{
public:
    Matmul(cublasLtHandle_t h, const GemmShape& s, bool fp8, std::size_t workspaceBytes)
        : m_h(h), m_ws(workspaceBytes)
    {
        const cudaDataType_t in = fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
        const std::size_t inBytes = fp8 ? 1 : 2;
        check(cudaMalloc(&m_a, std::size_t(s.k) * s.m * inBytes), "cudaMalloc (A)");
        check(cudaMalloc(&m_b, std::size_t(s.k) * s.n * inBytes), "cudaMalloc (B)");
        check(cudaMalloc(&m_d, std::size_t(s.m) * s.n * 2), "cudaMalloc (D)");
        check(cudaMalloc(&m_work, m_ws), "cudaMalloc (workspace)");
        // Small non-zero values (0x3c: bf16 ≈ 0.0115, e4m3 = 1.5) so no kernel takes a zero path.
        check(cudaMemset(m_a, 0x3c, std::size_t(s.k) * s.m * inBytes), "cudaMemset");
        check(cudaMemset(m_b, 0x3c, std::size_t(s.k) * s.n * inBytes), "cudaMemset");
        checkLt(cublasLtMatmulDescCreate(&m_op, CUBLAS_COMPUTE_32F, CUDA_R_32F),
                "MatmulDescCreate");
        const cublasOperation_t t = CUBLAS_OP_T, n = CUBLAS_OP_N;
        checkLt(cublasLtMatmulDescSetAttribute(m_op, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t),
                "TRANSA");
        checkLt(cublasLtMatmulDescSetAttribute(m_op, CUBLASLT_MATMUL_DESC_TRANSB, &n, sizeof n),
                "TRANSB");
        checkLt(cublasLtMatrixLayoutCreate(&m_la, in, s.k, s.m, s.k), "layout A");
        checkLt(cublasLtMatrixLayoutCreate(&m_lb, in, s.k, s.n, s.k), "layout B");
        checkLt(cublasLtMatrixLayoutCreate(&m_ld, CUDA_R_16BF, s.m, s.n, s.m), "layout D");
        cublasLtMatmulPreference_t pref = nullptr;
        checkLt(cublasLtMatmulPreferenceCreate(&pref), "PreferenceCreate");
        checkLt(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                     &m_ws, sizeof m_ws),
                "workspace preference");
        int found = 0;
        const auto st = cublasLtMatmulAlgoGetHeuristic(h, m_op, m_la, m_lb, m_ld, m_ld, pref, 1,
                                                       &m_algo, &found);
        cublasLtMatmulPreferenceDestroy(pref);
        m_ok = st == CUBLAS_STATUS_SUCCESS && found > 0;
    }
    ~Matmul()
    {
        if (m_op)
            cublasLtMatmulDescDestroy(m_op);
        for (auto l : {m_la, m_lb, m_ld})
            if (l)
                cublasLtMatrixLayoutDestroy(l);
        cudaFree(m_a);
        cudaFree(m_b);
        cudaFree(m_d);
        cudaFree(m_work);
    }
    bool ok() const { return m_ok; }
    void run(cudaStream_t s)
    {
        const float alpha = 1.0f, beta = 0.0f;
        checkLt(cublasLtMatmul(m_h, m_op, &alpha, m_a, m_la, m_b, m_lb, &beta, m_d, m_ld, m_d, m_ld,
                               &m_algo.algo, m_work, m_ws, s),
                "cublasLtMatmul");
    }

private:
    cublasLtHandle_t m_h;
    std::size_t m_ws;
    void *m_a = nullptr, *m_b = nullptr, *m_d = nullptr, *m_work = nullptr;
    cublasLtMatmulDesc_t m_op = nullptr;
    cublasLtMatrixLayout_t m_la = nullptr, m_lb = nullptr, m_ld = nullptr;
    cublasLtMatmulHeuristicResult_t m_algo{};
    bool m_ok = false;
};

} // namespace

std::vector<GemmShape> parseShapes(const std::string& text)
{
    std::vector<GemmShape> out;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ';')) {
        if (item.empty())
            continue;
        GemmShape s;
        const auto colon = item.find(':');
        s.label = colon == std::string::npos ? "custom" : item.substr(colon + 1);
        const std::string dims = item.substr(0, colon);
        char c1 = 0, c2 = 0;
        std::stringstream ds(dims);
        if (!(ds >> s.m >> c1 >> s.n >> c2 >> s.k) || c1 != ',' || c2 != ',' || s.m <= 0 ||
            s.n <= 0 || s.k <= 0 || !(ds >> std::ws).eof())
            throw std::invalid_argument("--shapes: '" + item + "' is not m,n,k[:label]");
        out.push_back(s);
    }
    if (out.empty())
        throw std::invalid_argument("--shapes: no shape given");
    return out;
}

std::vector<GemmShape> defaultShapes()
{
    std::vector<GemmShape> s;
    for (long long d = 1024; d <= 16384; d *= 2)
        s.push_back({"square", d, d, d});
    // Llama-3-70B (hidden 8192, 64 heads, 8 KV heads of 128, FFN 28672), 8192 tokens, TP 1.
    const long long tokens = 8192, h = 8192, kv = 8 * 128, ffn = 28672;
    s.push_back({"qkv", tokens, h + 2 * kv, h});
    s.push_back({"attn_out", tokens, h, h});
    s.push_back({"mlp_up", tokens, 2 * ffn, h});
    s.push_back({"mlp_down", tokens, h, ffn});
    return s;
}

std::vector<GemmPoint> runGemm(const std::vector<GemmShape>& shapes, const Options& opt,
                               std::FILE* table, std::vector<std::string>& warnings)
{
    check(cudaSetDevice(0), "cudaSetDevice");
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    const bool hasFp8 = prop.major * 10 + prop.minor >= 89;
    if (opt.fp8 && !hasFp8)
        warnings.push_back(std::string("gemm: ") + prop.name +
                           " has no FP8 tensor cores; BF16 only");
    cublasLtHandle_t h = nullptr;
    checkLt(cublasLtCreate(&h), "cublasLtCreate");
    cudaStream_t s = nullptr;
    check(cudaStreamCreate(&s), "cudaStreamCreate");
    std::vector<cudaEvent_t> ev(2 * std::size_t(opt.iters));
    for (auto& e : ev)
        check(cudaEventCreate(&e), "cudaEventCreate");
    if (table)
        std::fprintf(table,
                     "# gemm on %s (cuBLASLt, TN, FP32 accumulate, BF16 output)\n"
                     "# %-9s %7s %7s %7s  %5s  %10s  %8s\n",
                     prop.name, "label", "m", "n", "k", "dtype", "time_us", "TFLOP/s");
    std::vector<GemmPoint> out;
    const int total = int(shapes.size()) * (opt.fp8 && hasFp8 ? 2 : 1);
    int done = 0;
    for (const bool fp8 : {false, true}) {
        if (fp8 && !(opt.fp8 && hasFp8))
            continue;
        for (const auto& shape : shapes) {
            ++done;
            Matmul mm(h, shape, fp8, std::size_t(64) << 20);
            const char* dtype = fp8 ? "fp8" : "bf16";
            if (!mm.ok()) {
                warnings.push_back("gemm: cuBLASLt has no algorithm for " + shape.label + " " +
                                   std::to_string(shape.m) + "x" + std::to_string(shape.n) + "x" +
                                   std::to_string(shape.k) + " " + dtype);
                continue;
            }
            for (int w = 0; w < opt.warmup; ++w)
                mm.run(s);
            for (int it = 0; it < opt.iters; ++it) {
                check(cudaEventRecord(ev[2 * it], s), "cudaEventRecord");
                mm.run(s);
                check(cudaEventRecord(ev[2 * it + 1], s), "cudaEventRecord");
            }
            check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
            std::vector<double> t(opt.iters);
            for (int it = 0; it < opt.iters; ++it) {
                float ms = 0;
                check(cudaEventElapsedTime(&ms, ev[2 * it], ev[2 * it + 1]),
                      "cudaEventElapsedTime");
                t[it] = ms * 1e-3;
            }
            std::sort(t.begin(), t.end());
            const double med = t[t.size() / 2];
            GemmPoint p;
            p.label = shape.label;
            p.m = double(shape.m);
            p.n = double(shape.n);
            p.k = double(shape.k);
            p.dtype = dtype;
            p.time_seconds = med;
            p.tflops = 2.0 * p.m * p.n * p.k / med / 1e12;
            out.push_back(p);
            if (table) {
                std::fprintf(table, "  %-9s %7lld %7lld %7lld  %5s  %10.1f  %8.1f\n",
                             shape.label.c_str(), shape.m, shape.n, shape.k, dtype, med * 1e6,
                             p.tflops);
                std::fflush(table);
            }
            char fields[256];
            std::snprintf(fields, sizeof fields,
                          "\"label\":\"%s\",\"m\":%lld,\"n\":%lld,\"k\":%lld,\"dtype\":\"%s\","
                          "\"tflops\":%.4g,\"done\":%d,\"total\":%d",
                          shape.label.c_str(), shape.m, shape.n, shape.k, dtype, p.tflops, done,
                          total);
            progress("gemm", fields);
        }
    }
    for (auto& e : ev)
        cudaEventDestroy(e);
    cudaStreamDestroy(s);
    cublasLtDestroy(h);
    return out;
}

} // namespace paralens::measure
