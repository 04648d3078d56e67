// SPDX-License-Identifier: GPL-3.0-or-later
#include "measure/collectives.h"

#include "measure/kernels.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>
#include <unistd.h>

namespace paralens::measure {
namespace {

struct Buffers
{
    std::vector<void*> send, recv;
    std::vector<cudaStream_t> streams;
    std::vector<unsigned long long*> wrong;
    std::vector<std::vector<cudaEvent_t>> start, end; // [device][iteration]
};

bool chunked(Collective c)
{
    return c == Collective::AllGather || c == Collective::ReduceScatter ||
           c == Collective::AllToAll;
}

/// Elements per call argument, nccl-tests' count column.
std::size_t callCount(Collective c, double size, int n, std::size_t elem)
{
    const auto all = static_cast<std::size_t>(size) / elem;
    return chunked(c) ? all / std::size_t(n) : all;
}

void launch(Collective c, const CommSet& set, Buffers& b, int d, std::size_t count, bool inPlace,
            DType dt)
{
    const ncclDataType_t type = dt == DType::BF16 ? ncclBfloat16 : ncclFloat32;
    const std::size_t elem = dtypeBytes(dt);
    const int n = set.group_size;
    const int r = set.group_rank[d];
    ncclComm_t comm = set.comms[d];
    cudaStream_t s = b.streams[d];
    char* send = static_cast<char*>(b.send[d]);
    char* recv = static_cast<char*>(b.recv[d]);
    switch (c) {
    case Collective::AllReduce:
        check(ncclAllReduce(inPlace ? recv : send, recv, count, type, ncclSum, comm, s),
              "ncclAllReduce");
        break;
    case Collective::AllGather:
        check(ncclAllGather(inPlace ? recv + r * count * elem : send, recv, count, type, comm, s),
              "ncclAllGather");
        break;
    case Collective::ReduceScatter:
        check(ncclReduceScatter(send, inPlace ? send + r * count * elem : recv, count, type,
                                ncclSum, comm, s),
              "ncclReduceScatter");
        break;
    case Collective::AllToAll:
        check(ncclGroupStart(), "ncclGroupStart");
        for (int p = 0; p < n; ++p) {
            check(ncclSend(send + p * count * elem, count, type, p, comm, s), "ncclSend");
            check(ncclRecv(recv + p * count * elem, count, type, p, comm, s), "ncclRecv");
        }
        check(ncclGroupEnd(), "ncclGroupEnd");
        break;
    case Collective::SendRecv:
        check(ncclGroupStart(), "ncclGroupStart");
        check(ncclSend(send, count, type, (r + 1) % n, comm, s), "ncclSend");
        check(ncclRecv(recv, count, type, (r - 1 + n) % n, comm, s), "ncclRecv");
        check(ncclGroupEnd(), "ncclGroupEnd");
        break;
    case Collective::Broadcast:
        check(ncclBroadcast(inPlace ? recv : send, recv, count, type, 0, comm, s), "ncclBroadcast");
        break;
    }
}

/// Polls the streams (and NCCL's async error) until done; aborts everything on timeout.
void waitStreams(World& world, const CommSet& set, Buffers& b, double timeout_seconds,
                 const std::string& what)
{
    const auto t0 = std::chrono::steady_clock::now();
    for (;;) {
        bool busy = false;
        for (std::size_t d = 0; d < b.streams.size(); ++d) {
            const cudaError_t e = cudaStreamQuery(b.streams[d]);
            if (e == cudaErrorNotReady)
                busy = true;
            else
                check(e, "cudaStreamQuery");
            ncclResult_t r = ncclSuccess;
            check(ncclCommGetAsyncError(set.comms[d], &r), "ncclCommGetAsyncError");
            if (r != ncclSuccess && r != ncclInProgress)
                throw MeasureError(what + ": NCCL: " + ncclGetErrorString(r));
        }
        if (!busy)
            return;
        if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() >
            timeout_seconds) {
            world.abortAll();
            throw TimeoutError(what + " did not finish within " +
                               std::to_string(static_cast<int>(timeout_seconds)) +
                               " s; NCCL communicators aborted (ncclCommAbort)");
        }
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
}

void groupLaunch(World& world, Collective c, const CommSet& set, Buffers& b, std::size_t count,
                 bool inPlace, DType dt, double timeout)
{
    check(ncclGroupStart(), "ncclGroupStart");
    for (std::size_t d = 0; d < set.comms.size(); ++d) {
        check(cudaSetDevice(int(d)), "cudaSetDevice");
        launch(c, set, b, int(d), count, inPlace, dt);
    }
    const ncclResult_t r = ncclGroupEnd();
    check(r, "ncclGroupEnd");
    if (r == ncclInProgress)
        world.waitReady(set.comms, timeout); // non-blocking enqueue still running
}

/// Fills the buffers so that every collective has a known answer, runs it once out of place
/// and counts the wrong elements (-c).
long long validate(World& world, Collective c, const CommSet& set, Buffers& b, std::size_t count,
                   DType dt, double timeout)
{
    const int n = set.group_size;
    const std::size_t total = chunked(c) ? count * std::size_t(n) : count;
    for (std::size_t d = 0; d < set.comms.size(); ++d) {
        check(cudaSetDevice(int(d)), "cudaSetDevice");
        const int r = set.group_rank[d];
        float v = 1.0f;
        if (c == Collective::AllGather || c == Collective::AllToAll || c == Collective::SendRecv)
            v = float(r + 1);
        if (c == Collective::Broadcast)
            v = r == 0 ? 1.0f : 0.0f;
        fillBuffer(b.send[d], total, dt, v, b.streams[d]);
        fillBuffer(b.recv[d], total, dt, -1.0f, b.streams[d]);
    }
    groupLaunch(world, c, set, b, count, false, dt, timeout);
    waitStreams(world, set, b, timeout, "validation");
    long long wrong = 0;
    for (std::size_t d = 0; d < set.comms.size(); ++d) {
        check(cudaSetDevice(int(d)), "cudaSetDevice");
        const int r = set.group_rank[d];
        check(cudaMemsetAsync(b.wrong[d], 0, sizeof(unsigned long long), b.streams[d]),
              "cudaMemset");
        std::size_t len = count, chunk = count;
        float a = float(n), step = 0; // reductions of ones
        switch (c) {
        case Collective::AllReduce:
            break;
        case Collective::ReduceScatter:
            break;
        case Collective::AllGather:
        case Collective::AllToAll:
            len = count * std::size_t(n);
            a = 1;
            step = 1; // chunk j came from rank j, which sent j + 1
            break;
        case Collective::SendRecv:
            a = float((r - 1 + n) % n + 1);
            break;
        case Collective::Broadcast:
            a = 1;
            break;
        }
        countWrong(b.recv[d], len, dt, chunk, a, step, b.wrong[d], b.streams[d]);
        unsigned long long w = 0;
        check(cudaMemcpyAsync(&w, b.wrong[d], sizeof w, cudaMemcpyDeviceToHost, b.streams[d]),
              "cudaMemcpy");
        check(cudaStreamSynchronize(b.streams[d]), "cudaStreamSynchronize");
        wrong += static_cast<long long>(w);
    }
    return world.sumAcrossProcesses(wrong);
}

struct Timing
{
    double median = 0, min = 0, max = 0;
};

Timing timeIt(World& world, Collective c, const CommSet& set, Buffers& b, std::size_t count,
              bool inPlace, const Options& opt, DType dt, const std::string& what)
{
    for (int w = 0; w < opt.warmup; ++w)
        groupLaunch(world, c, set, b, count, inPlace, dt, opt.timeout_seconds);
    waitStreams(world, set, b, opt.timeout_seconds, what + " (warm-up)");
    for (int it = 0; it < opt.iters; ++it) {
        for (std::size_t d = 0; d < set.comms.size(); ++d) {
            check(cudaSetDevice(int(d)), "cudaSetDevice");
            check(cudaEventRecord(b.start[d][it], b.streams[d]), "cudaEventRecord");
        }
        groupLaunch(world, c, set, b, count, inPlace, dt, opt.timeout_seconds);
        for (std::size_t d = 0; d < set.comms.size(); ++d) {
            check(cudaSetDevice(int(d)), "cudaSetDevice");
            check(cudaEventRecord(b.end[d][it], b.streams[d]), "cudaEventRecord");
        }
    }
    waitStreams(world, set, b, opt.timeout_seconds, what);
    std::vector<double> t(opt.iters, 0.0);
    for (int it = 0; it < opt.iters; ++it)
        for (std::size_t d = 0; d < set.comms.size(); ++d) {
            float ms = 0;
            check(cudaEventElapsedTime(&ms, b.start[d][it], b.end[d][it]), "cudaEventElapsedTime");
            t[it] = std::max(t[it], ms * 1e-3);
        }
    world.maxAcrossProcesses(t); // the slowest rank sets the time
    std::sort(t.begin(), t.end());
    Timing r;
    r.min = t.front();
    r.max = t.back();
    r.median = t.size() % 2 ? t[t.size() / 2] : 0.5 * (t[t.size() / 2 - 1] + t[t.size() / 2]);
    return r;
}

std::string fmtTime(double us)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, us >= 10000 ? "%7.0f" : us >= 100 ? "%7.1f" : "%7.2f", us);
    return buf;
}

void printHeader(std::FILE* f, World& world, const std::string& op, const CommSet& set,
                 const Options& opt)
{
    int version = 0;
    ncclGetVersion(&version);
    std::fprintf(f, "# paralens-measure %s nccl-library=%d\n# Collective test starting: %s_perf\n",
                 PARALENS_VERSION, version, op.c_str());
    std::fprintf(f,
                 "# nThread 1 nGpus %d minBytes %.0f maxBytes %.0f step: %g(factor) warmup "
                 "iters: %d iters: %d agg iters: 1 validation: %d graph: 0\n#\n# Using devices\n",
                 world.localDevices(), opt.min_bytes, opt.max_bytes, opt.factor, opt.warmup,
                 opt.iters, opt.check ? 1 : 0);
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, 0);
    for (int r : set.group0_ranks) {
        const int local = r - world.firstRank();
        char bus[32] = "remote";
        if (local >= 0 && local < world.localDevices())
            cudaDeviceGetPCIBusId(bus, sizeof bus, local);
        std::fprintf(f, "#  Rank %2d Group  0 Pid %6d on %10s device %2d [%s] %s\n", r,
                     local >= 0 && local < world.localDevices() ? int(getpid()) : 0,
                     world.hostOfRank()[r].c_str(), r % std::max(1, world.localDevices()), bus,
                     prop.name);
    }
    std::fprintf(f, "#\n#                                                              out-of-place"
                    "                       in-place\n"
                    "#       size         count      type   redop    root     time   algbw   busbw"
                    " #wrong     time   algbw   busbw #wrong\n"
                    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)"
                    "            (us)  (GB/s)  (GB/s)\n");
}

} // namespace

const std::vector<std::string>& allOps()
{
    static const std::vector<std::string> ops{"all_reduce", "all_gather", "reduce_scatter",
                                              "alltoall",   "sendrecv",   "broadcast"};
    return ops;
}

void runCollectives(World& world, const Options& opt, std::vector<CollectiveCurve>& out,
                    std::FILE* table)
{
    const DType dt = opt.dtype == "fp32" ? DType::FP32 : DType::BF16;
    const std::size_t elem = dtypeBytes(dt);
    const int local = world.localDevices();
    const std::size_t maxBytes = static_cast<std::size_t>(opt.max_bytes);

    Buffers b;
    b.send.resize(local);
    b.recv.resize(local);
    b.streams.resize(local);
    b.wrong.resize(local);
    b.start.assign(local, std::vector<cudaEvent_t>(opt.iters));
    b.end.assign(local, std::vector<cudaEvent_t>(opt.iters));
    for (int d = 0; d < local; ++d) {
        check(cudaSetDevice(d), "cudaSetDevice");
        check(cudaMalloc(&b.send[d], maxBytes + 256), "cudaMalloc (send buffer)");
        check(cudaMalloc(&b.recv[d], maxBytes + 256), "cudaMalloc (receive buffer)");
        check(cudaMalloc(&b.wrong[d], sizeof(unsigned long long)), "cudaMalloc");
        check(cudaStreamCreateWithFlags(&b.streams[d], cudaStreamNonBlocking), "cudaStreamCreate");
        for (int it = 0; it < opt.iters; ++it) {
            check(cudaEventCreate(&b.start[d][it]), "cudaEventCreate");
            check(cudaEventCreate(&b.end[d][it]), "cudaEventCreate");
        }
    }

    world.initNccl(opt.timeout_seconds);
    // The whole world, then sub-groups: contiguous (inside a node first), and strided across
    // nodes when there are several.
    std::vector<std::pair<int, bool>> sets{{world.worldSize(), false}};
    std::vector<int> sizes = opt.group_sizes;
    if (sizes.empty())
        for (int g = 2; g < world.worldSize(); g *= 2)
            sizes.push_back(g);
    for (int g : sizes) {
        if (g < 2 || g >= world.worldSize() || world.worldSize() % g != 0)
            continue;
        sets.push_back({g, false});
        if (world.nodes() > 1)
            sets.push_back({g, true});
    }
    const auto& ops = opt.ops.empty() ? allOps() : opt.ops;
    std::vector<double> sweep;
    for (double s = opt.min_bytes; s <= opt.max_bytes * (1 + 1e-9);
         s = opt.factor > 1 ? s * opt.factor : opt.max_bytes * 2)
        sweep.push_back(s);
    const int total = int(sets.size() * ops.size() * sweep.size());
    int done = 0;

    for (const auto& [size, strided] : sets) {
        CommSet owned;
        if (size != world.worldSize())
            owned = world.split(size, strided, opt.timeout_seconds);
        CommSet& set = size == world.worldSize() ? world.all() : owned;
        const std::string spanName(toString(set.span));
        for (const auto& opName : ops) {
            const auto c = parseCollective(opName);
            if (!c)
                throw MeasureError("unknown collective '" + opName + "'");
            CollectiveCurve curve;
            curve.collective = *c;
            curve.ranks = set.group_size;
            curve.span = set.span;
            curve.nodes = set.nodes;
            curve.dtype = opt.dtype;
            curve.source = "paralens-measure";
            const bool hasInPlace = *c != Collective::AllToAll && *c != Collective::SendRecv;
            if (world.root() && table)
                printHeader(table, world, opName, set, opt);
            double busSum = 0;
            long long wrongTotal = 0;
            auto keepPartial = [&] {
                curve.fit = fitAlphaBeta(curve.collective, curve.ranks, curve.points);
                if (!curve.points.empty())
                    out.push_back(curve);
            };
            try {
                for (double s : sweep) {
                    const std::size_t count = callCount(*c, s, set.group_size, elem);
                    ++done;
                    if (count == 0)
                        continue;
                    const double bytes =
                        double(count * elem * (chunked(*c) ? std::size_t(set.group_size) : 1));
                    const std::string what = opName + " " + std::to_string(set.group_size) +
                                             " ranks, " + std::to_string(std::size_t(bytes)) + " B";
                    long long wrong = -1;
                    if (opt.check) {
                        wrong = validate(world, *c, set, b, count, dt, opt.timeout_seconds);
                        wrongTotal += wrong;
                    }
                    const Timing oop = timeIt(world, *c, set, b, count, false, opt, dt, what);
                    Timing ip{};
                    if (hasInPlace)
                        ip = timeIt(world, *c, set, b, count, true, opt, dt, what + " in place");
                    const double f = busFactor(*c, set.group_size);
                    SizePoint p;
                    p.size_bytes = bytes;
                    p.time_median_seconds = oop.median;
                    p.time_min_seconds = oop.min;
                    p.time_max_seconds = oop.max;
                    p.algbw_gbps = bytes / oop.median / 1e9;
                    p.busbw_gbps = p.algbw_gbps * f;
                    if (hasInPlace)
                        p.in_place_seconds = ip.median;
                    curve.points.push_back(p);
                    busSum += p.busbw_gbps;
                    if (world.root()) {
                        if (table) {
                            const double ipAlg = hasInPlace ? bytes / ip.median / 1e9 : 0;
                            char wrongS[24], ipWrong[24];
                            std::snprintf(wrongS, sizeof wrongS, "%lld", wrong);
                            std::snprintf(ipWrong, sizeof ipWrong, "N/A");
                            std::fprintf(
                                table,
                                "%12zu  %12zu  %8s  %6s  %6d  %s  %6.2f  %6.2f  %6s  %s  %6.2f  "
                                "%6.2f  %6s\n",
                                std::size_t(bytes), count, dt == DType::BF16 ? "bfloat16" : "float",
                                (*c == Collective::AllGather || *c == Collective::AllToAll ||
                                 *c == Collective::Broadcast)
                                    ? "none"
                                    : "sum",
                                *c == Collective::Broadcast ? 0 : -1,
                                fmtTime(oop.median * 1e6).c_str(), p.algbw_gbps, p.busbw_gbps,
                                opt.check ? wrongS : "N/A",
                                fmtTime(hasInPlace ? ip.median * 1e6 : 0).c_str(), ipAlg, ipAlg * f,
                                ipWrong);
                            std::fflush(table);
                        }
                        char fields[512];
                        std::snprintf(
                            fields, sizeof fields,
                            "\"op\":\"%s\",\"ranks\":%d,\"span\":\"%s\",\"size_bytes\":%.0f,"
                            "\"time_seconds\":%.9g,\"busbw_gbps\":%.4g,\"done\":%d,"
                            "\"total\":%d",
                            opName.c_str(), set.group_size, spanName.c_str(), bytes, oop.median,
                            p.busbw_gbps, done, total);
                        progress("collectives", fields);
                    }
                }
            } catch (const TimeoutError&) {
                keepPartial(); // what was measured before the hang still counts
                throw;
            }
            if (world.root() && table && !curve.points.empty()) {
                std::fprintf(table, "# Out of bounds values : %lld %s\n",
                             opt.check ? wrongTotal : 0, wrongTotal > 0 ? "FAILED" : "OK");
                std::fprintf(table, "# Avg bus bandwidth    : %g\n#\n",
                             busSum / double(curve.points.size()));
                std::fprintf(table, "# Collective test concluded: %s_perf\n#\n\n", opName.c_str());
            }
            curve.fit = fitAlphaBeta(curve.collective, curve.ranks, curve.points);
            if (!curve.points.empty())
                out.push_back(std::move(curve));
        }
        if (size != world.worldSize())
            world.destroy(owned);
    }
    for (int d = 0; d < local; ++d) {
        cudaSetDevice(d);
        cudaFree(b.send[d]);
        cudaFree(b.recv[d]);
        cudaFree(b.wrong[d]);
        for (int it = 0; it < opt.iters; ++it) {
            cudaEventDestroy(b.start[d][it]);
            cudaEventDestroy(b.end[d][it]);
        }
        cudaStreamDestroy(b.streams[d]);
    }
}

} // namespace paralens::measure
