// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/cluster_spec.h"
#include "core/collective.h"
#include "core/constants.h"
#include "core/topology.h"

#include <algorithm>

namespace paralens {

/// The links one process group uses (docs/formulas.md §5, hierarchical placement).
struct LinkModel
{
    int ranks = 1;
    int per_domain = 1; ///< members inside one scale-up domain
    Span span = Span::ScaleUp;
    double scale_up_Bps = 0;  ///< achievable per-GPU scale-up busbw, bytes/s
    double scale_out_Bps = 0; ///< achievable per-GPU scale-out bandwidth, bytes/s
    double alpha_seconds = 0; ///< per-step latency on the slowest link the group uses

    /// Ring bus bandwidth, bytes/s: NVLink inside the domain; across domains the rings stripe
    /// over the per_domain members' NICs: min(NVLink, per_domain · NIC).
    double busBps() const
    {
        if (span == Span::ScaleUp)
            return scale_up_Bps;
        return std::min(scale_up_Bps, std::max(1, per_domain) * scale_out_Bps);
    }
};

LinkModel linkFor(const GroupPlacement& g, const ClusterSpec& cluster, const ModelConstants& k);

/// Seconds for one collective of `bytes` (nccl-tests' size convention: all-reduce the per-rank
/// buffer, all-gather the total output, reduce-scatter the total input, all-to-all the per-rank
/// send buffer, send/recv the message) on `link`: alpha-beta with nccl-tests' bus factors,
///   t = busFactor(c, n) · bytes / busbw + steps · alpha,
/// steps = n − 1 ring steps for all-gather, reduce-scatter and all-to-all (NCCL's rings);
/// all-reduce 2(n − 1), capped at 4·log2 n (NCCL's trees at scale). An all-to-all leaving the
/// domain is bound by the slower of its NIC and NVLink parts: max((n − g)/n · S / NIC, (g − 1)/n ·
/// S / NVLink). A measured profile, when given and holding that collective, replaces the formula. 0
/// for a group of one.
double collectiveSeconds(Collective c, const LinkModel& link, double bytes,
                         const MeasuredPerformance* measured = nullptr);

} // namespace paralens
