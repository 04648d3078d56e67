// SPDX-License-Identifier: GPL-3.0-or-later
#include "measure/world.h"

#include "measure/no_device.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <set>
#include <thread>
#include <unistd.h>

#ifdef PARALENS_MEASURE_MPI
#include <mpi.h>
#endif

namespace paralens::measure {
namespace {

ncclConfig_t nonBlocking()
{
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = 0;
    return cfg;
}

std::string hostName()
{
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) != 0)
        return "localhost";
    return buf;
}

} // namespace

World::World(int* argc, char*** argv)
{
#ifdef PARALENS_MEASURE_MPI
    // Launched by mpirun/srun when the MPI environment says so; a plain start stays single-process.
    if (std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") ||
        std::getenv("PMIX_RANK") || std::getenv("SLURM_STEP_ID")) {
        MPI_Init(argc, argv);
        m_mpi = true;
        MPI_Comm_rank(MPI_COMM_WORLD, &m_process);
        MPI_Comm_size(MPI_COMM_WORLD, &m_processes);
    }
#else
    (void)argc;
    (void)argv;
#endif
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (isNoDevice(e, count))
        throw NoDeviceError(noDeviceMessage(e));
    check(e, "cudaGetDeviceCount");
    m_localDevices = count;

    std::vector<int> counts(m_processes, count);
    std::vector<std::string> hosts(m_processes, hostName());
#ifdef PARALENS_MEASURE_MPI
    if (m_mpi) {
        MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
        char mine[256] = {};
        std::strncpy(mine, hostName().c_str(), sizeof mine - 1);
        std::vector<char> all(256 * m_processes);
        MPI_Allgather(mine, 256, MPI_CHAR, all.data(), 256, MPI_CHAR, MPI_COMM_WORLD);
        for (int p = 0; p < m_processes; ++p)
            hosts[p] = std::string(all.data() + 256 * p);
    }
#endif
    for (int p = 0; p < m_processes; ++p) {
        if (p == m_process)
            m_firstRank = m_worldSize;
        m_worldSize += counts[p];
        for (int d = 0; d < counts[p]; ++d)
            m_hostOfRank.push_back(hosts[p]);
    }
}

World::~World()
{
    try {
        release(m_created);
    } catch (const std::exception&) {
        abortAll(); // a communicator that cannot finish is aborted rather than waited on
    }
#ifdef PARALENS_MEASURE_MPI
    if (m_mpi)
        MPI_Finalize();
#endif
}

int World::nodes() const
{
    return static_cast<int>(std::set<std::string>(m_hostOfRank.begin(), m_hostOfRank.end()).size());
}

void World::waitReady(const std::vector<ncclComm_t>& comms, double timeout_seconds)
{
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
        bool pending = false;
        for (auto c : comms) {
            ncclResult_t r = ncclSuccess;
            check(ncclCommGetAsyncError(c, &r), "ncclCommGetAsyncError");
            if (r == ncclInProgress)
                pending = true;
            else if (r != ncclSuccess)
                throw MeasureError(std::string("NCCL: ") + ncclGetErrorString(r));
        }
        if (!pending)
            return;
        const double waited =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (waited > timeout_seconds) {
            abortAll();
            throw TimeoutError("NCCL did not finish within " + std::to_string(timeout_seconds) +
                               " s; communicators aborted");
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

void World::initNccl(double timeout_seconds)
{
    ncclUniqueId id;
    if (m_process == 0)
        check(ncclGetUniqueId(&id), "ncclGetUniqueId");
#ifdef PARALENS_MEASURE_MPI
    if (m_mpi)
        MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
#endif
    m_all = CommSet{};
    m_all.group_size = m_worldSize;
    m_all.nodes = nodes();
    m_all.span = m_all.nodes > 1 ? Span::ScaleOut : Span::ScaleUp;
    m_all.comms.assign(m_localDevices, nullptr);
    for (int r = 0; r < m_worldSize; ++r)
        m_all.group0_ranks.push_back(r);
    ncclConfig_t cfg = nonBlocking();
    check(ncclGroupStart(), "ncclGroupStart");
    for (int d = 0; d < m_localDevices; ++d) {
        check(cudaSetDevice(d), "cudaSetDevice");
        check(ncclCommInitRankConfig(&m_all.comms[d], m_worldSize, id, m_firstRank + d, &cfg),
              "ncclCommInitRankConfig");
        m_all.group_rank.push_back(m_firstRank + d);
    }
    check(ncclGroupEnd(), "ncclGroupEnd");
    m_created.insert(m_created.end(), m_all.comms.begin(), m_all.comms.end());
    waitReady(m_all.comms, timeout_seconds);
}

CommSet World::split(int size, bool strided, double timeout_seconds)
{
    CommSet set;
    set.group_size = size;
    const int groups = m_worldSize / size;
    // Contiguous: color = rank / size. Strided: color = rank % groups (members groups apart).
    auto color = [&](int r) { return strided ? r % groups : r / size; };
    auto key = [&](int r) { return strided ? r / groups : r % size; };
    std::set<std::string> hosts0;
    bool anyInter = false;
    for (int g = 0; g < groups; ++g) {
        std::set<std::string> hs;
        for (int r = 0; r < m_worldSize; ++r)
            if (color(r) == g) {
                hs.insert(m_hostOfRank[r]);
                if (g == color(0))
                    set.group0_ranks.push_back(r);
            }
        anyInter = anyInter || hs.size() > 1;
        if (g == color(0))
            hosts0 = hs;
    }
    set.nodes = static_cast<int>(hosts0.size());
    set.span = anyInter ? Span::ScaleOut : Span::ScaleUp;
    set.comms.assign(m_localDevices, nullptr);
    ncclConfig_t cfg = nonBlocking();
    check(ncclGroupStart(), "ncclGroupStart");
    for (int d = 0; d < m_localDevices; ++d) {
        const int r = m_firstRank + d;
        check(cudaSetDevice(d), "cudaSetDevice");
        check(ncclCommSplit(m_all.comms[d], color(r), key(r), &set.comms[d], &cfg),
              "ncclCommSplit");
        set.group_rank.push_back(key(r));
    }
    check(ncclGroupEnd(), "ncclGroupEnd");
    m_created.insert(m_created.end(), set.comms.begin(), set.comms.end());
    waitReady(set.comms, timeout_seconds);
    return set;
}

void World::abortAll()
{
    for (auto& c : m_created)
        if (c) {
            ncclCommAbort(c);
            c = nullptr;
        }
}

void World::release(std::vector<ncclComm_t>& comms)
{
    // One thread owns several communicators: finalize them together (non-blocking), wait,
    // then free; destroying one at a time could wait on a peer that is never finalized.
    std::vector<ncclComm_t> live;
    for (auto c : comms)
        if (c)
            live.push_back(c);
    if (live.empty())
        return;
    check(ncclGroupStart(), "ncclGroupStart");
    for (auto c : live)
        check(ncclCommFinalize(c), "ncclCommFinalize");
    check(ncclGroupEnd(), "ncclGroupEnd");
    waitReady(live, 60);
    for (auto c : live) {
        ncclCommDestroy(c);
        std::replace(m_created.begin(), m_created.end(), c, ncclComm_t{nullptr});
    }
    for (auto& c : comms)
        c = nullptr;
}

void World::destroy(CommSet& set)
{
    release(set.comms);
    set.comms.clear();
}

void World::maxAcrossProcesses(std::vector<double>& v) const
{
#ifdef PARALENS_MEASURE_MPI
    if (m_mpi)
        MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_MAX,
                      MPI_COMM_WORLD);
#else
    (void)v;
#endif
}

long long World::sumAcrossProcesses(long long v) const
{
#ifdef PARALENS_MEASURE_MPI
    if (m_mpi)
        MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
#endif
    return v;
}

void World::barrier() const
{
#ifdef PARALENS_MEASURE_MPI
    if (m_mpi)
        MPI_Barrier(MPI_COMM_WORLD);
#endif
}

} // namespace paralens::measure
