// SPDX-License-Identifier: GPL-3.0-or-later
// The GPUs this run drives: every local device in one process, and under MPI (when built
// with it) every process's devices joined into one NCCL world. No home-made launcher.
#pragma once
#include "measure/common.h"

#include "core/collective.h"

#include <string>
#include <vector>

namespace paralens::measure {

/// The local members of one or more equal-sized NCCL groups that run together.
struct CommSet
{
    int group_size = 0;
    Span span = Span::ScaleUp;     ///< inter when any group has members on several hosts
    int nodes = 1;                 ///< hosts spanned by group 0
    std::vector<int> group0_ranks; ///< world ranks of group 0 (for the table's device lines)
    std::vector<ncclComm_t> comms; ///< one per local device
    std::vector<int> group_rank;   ///< this device's rank inside its group
};

class World
{
public:
    /// Initialises MPI when built with it. Throws MeasureError with "no CUDA device visible"
    /// (see noDevice()) when there is no GPU.
    World(int* argc, char*** argv);
    ~World();
    World(const World&) = delete;
    World& operator=(const World&) = delete;

    /// True on the process that prints and writes the profile (MPI rank 0, or the only one).
    bool root() const { return m_process == 0; }
    int localDevices() const { return m_localDevices; }
    int worldSize() const { return m_worldSize; }
    int firstRank() const { return m_firstRank; }
    const std::vector<std::string>& hostOfRank() const { return m_hostOfRank; }
    int nodes() const;
    bool mpi() const { return m_mpi; }

    /// Creates the world communicator (non-blocking, so a hang can be aborted).
    void initNccl(double timeout_seconds);
    CommSet& all() { return m_all; }
    /// Groups of `size` ranks: contiguous ranks (inside a node first) or, when `strided`,
    /// ranks worldSize/size apart (across nodes). Created with ncclCommSplit.
    CommSet split(int size, bool strided, double timeout_seconds);
    /// Waits until every communicator finished its pending (non-blocking) work.
    void waitReady(const std::vector<ncclComm_t>& comms, double timeout_seconds);
    /// ncclCommAbort on every communicator created so far.
    void abortAll();
    void destroy(CommSet& set);

    /// Largest value over processes (MPI), elementwise.
    void maxAcrossProcesses(std::vector<double>& v) const;
    long long sumAcrossProcesses(long long v) const;
    /// Barrier across processes (no-op without MPI).
    void barrier() const;

private:
    void release(std::vector<ncclComm_t>& comms);

    bool m_mpi = false;
    int m_process = 0;
    int m_processes = 1;
    int m_localDevices = 0;
    int m_worldSize = 0;
    int m_firstRank = 0;
    std::vector<std::string> m_hostOfRank;
    CommSet m_all;
    std::vector<ncclComm_t> m_created;
};

} // namespace paralens::measure
