// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include <optional>
#include <string_view>

namespace paralens {

struct ModelConstants;

/// The collectives the model prices and paralens-measure measures (nccl-tests' names).
enum class Collective
{
    AllReduce,
    AllGather,
    ReduceScatter,
    AllToAll,
    SendRecv,
    Broadcast
};

/// Which link class a process group spans: all members inside one scale-up (NVLink) domain,
/// or some members across the scale-out network.
enum class Span
{
    ScaleUp,
    ScaleOut
};

std::string_view toString(Collective); ///< "all_reduce", "all_gather", ... (profile keys)
std::optional<Collective> parseCollective(std::string_view);
std::string_view toString(Span); ///< "intra" / "inter"

/// nccl-tests' bus-bandwidth factor (doc/PERFORMANCE.md): busbw = algbw * factor.
/// all-reduce 2(n-1)/n; all-gather, reduce-scatter, all-to-all (n-1)/n; others 1. Inline:
/// every collective of every evaluation asks for it.
inline double busFactor(Collective c, int ranks)
{
    if (ranks <= 1)
        return c == Collective::SendRecv || c == Collective::Broadcast ? 1.0 : 0.0;
    const double n = ranks;
    switch (c) {
    case Collective::AllReduce:
        return 2.0 * (n - 1) / n;
    case Collective::AllGather:
    case Collective::ReduceScatter:
    case Collective::AllToAll:
        return (n - 1) / n;
    case Collective::SendRecv:
    case Collective::Broadcast:
        return 1.0;
    }
    return 1.0;
}

/// Measured performance that replaces datasheet figures in the model. A calibration profile
/// implements it; evaluate() takes an optional pointer to one.
class MeasuredPerformance
{
public:
    virtual ~MeasuredPerformance() = default;
    /// Seconds for one collective of `bytes` (nccl-tests' size convention: all-reduce the
    /// per-rank buffer, all-gather the total output, reduce-scatter the total input,
    /// all-to-all the per-rank send buffer) over `ranks` ranks on `span`; nullopt when the
    /// profile has no measurement for that collective, size class and span.
    virtual std::optional<double> collectiveSeconds(Collective c, int ranks, Span span,
                                                    double bytes) const = 0;
    /// Achieved fraction of the dense peak for a GEMM of m x n x k in the given precision
    /// (bf16 when fp8 is false); nullopt when not measured.
    virtual std::optional<double> gemmEfficiency(double m, double n, double k, bool fp8) const = 0;
    /// Achieved HBM bandwidth in GB/s; nullopt when not measured.
    virtual std::optional<double> hbmGbps() const = 0;
    /// Replaces model constants with values fitted on measured runs of GPUs named `gpu_name`
    /// (a calibration profile of schema 2); evaluate() calls it. The default changes nothing.
    virtual void adjustConstants(std::string_view /*gpu_name*/, ModelConstants& /*k*/) const {}
};

} // namespace paralens
