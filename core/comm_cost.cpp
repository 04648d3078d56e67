// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/comm_cost.h"

#include <algorithm>
#include <cmath>

namespace paralens {

LinkModel linkFor(const GroupPlacement& g, const ClusterSpec& cluster, const ModelConstants& k)
{
    LinkModel l;
    l.ranks = g.size;
    l.per_domain = g.per_domain;
    l.span = g.span;
    l.scale_up_Bps = cluster.scale_up_gbps * kBytesPerGB * k.scale_up_efficiency;
    l.scale_out_Bps = cluster.scale_out_gbps * kBytesPerGB * k.scale_out_efficiency;
    // A cluster without a scale-out figure still has some network; never divide by zero.
    if (l.scale_out_Bps <= 0)
        l.scale_out_Bps = kFallbackScaleOutBytesPerSecond;
    if (l.scale_up_Bps <= 0)
        l.scale_up_Bps = l.scale_out_Bps;
    l.alpha_seconds =
        kSecondsPerMicrosecond *
        (g.span == Span::ScaleUp ? cluster.latencies.scale_up_us : cluster.latencies.scale_out_us);
    return l;
}

double collectiveSeconds(Collective c, const LinkModel& link, double bytes,
                         const MeasuredPerformance* measured)
{
    const int n = link.ranks;
    if (bytes <= 0 || (n <= 1 && c != Collective::SendRecv))
        return 0;
    if (measured)
        if (auto t = measured->collectiveSeconds(c, n, link.span, bytes))
            return *t;
    if (c == Collective::SendRecv || c == Collective::Broadcast) {
        const double bw = link.span == Span::ScaleUp ? link.scale_up_Bps : link.scale_out_Bps;
        return link.alpha_seconds + bytes / bw;
    }
    // NCCL runs all-gather, reduce-scatter and all-to-all as rings (n − 1 steps); all-reduce
    // switches to trees / NVLS at scale (2 · 2·log2 n steps).
    const double ring = c == Collective::AllReduce ? 2.0 * (n - 1) : double(n - 1);
    const double steps =
        c == Collective::AllReduce ? std::min(ring, 4.0 * std::ceil(std::log2(n))) : ring;
    const double latency = steps * link.alpha_seconds;
    if (c == Collective::AllToAll && link.span == Span::ScaleOut) {
        const double g = std::min(n, std::max(1, link.per_domain));
        const double nic = (n - g) / n * bytes / link.scale_out_Bps;
        const double nvl = (g - 1) / n * bytes / link.scale_up_Bps;
        return latency + std::max(nic, nvl);
    }
    return latency + busFactor(c, n) * bytes / link.busBps();
}

} // namespace paralens
