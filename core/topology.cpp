// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/topology.h"

#include <algorithm>

namespace paralens {

RankCoordinates rankCoordinates(const ParallelPlan& plan, const ClusterSpec& cluster, int rank)
{
    const int t = std::max(1, plan.tp), c = std::max(1, plan.cp), d = std::max(1, plan.dp);
    const int ep = std::max(1, plan.ep), etp = plan.expertTp();
    RankCoordinates rc;
    rc.tp = rank % t;
    rc.cp = (rank / t) % c;
    rc.dp = (rank / (t * c)) % d;
    rc.pp = rank / (t * c * d);
    rc.ep = (rank / etp) % ep; // experts: etp-ep-edp-pp over the same ranks
    rc.node = rank / std::max(1, cluster.gpus_per_node);
    return rc;
}

GroupPlacement placeGroup(int size, int stride, int gpus, const ClusterSpec& cluster)
{
    GroupPlacement g;
    g.size = std::max(1, size);
    g.stride = std::max(1, stride);
    if (g.size == 1)
        return g; // one member: on one node, inside its domain (no divisions per evaluation)
    const int node = std::max(1, cluster.gpus_per_node);
    const int domain = std::max(1, cluster.scale_up_domain);
    const long block = long(g.size) * g.stride;
    g.per_node = g.stride >= node ? 1 : std::min(g.size, node / g.stride);
    g.per_domain = g.stride >= domain ? 1 : std::min(g.size, domain / g.stride);
    g.nodes = (g.size + g.per_node - 1) / g.per_node;
    // An aligned block stays inside a node (domain) when it is no larger and divides it, or
    // when the whole job fits in one.
    auto inside = [&](int unit) {
        return g.size == 1 || gpus <= unit || (block <= unit && unit % block == 0);
    };
    g.crosses_nodes = !inside(node);
    g.span = inside(domain) ? Span::ScaleUp : Span::ScaleOut;
    return g;
}

Topology placeGroups(const ParallelPlan& plan, const ClusterSpec& cluster)
{
    const int t = std::max(1, plan.tp), c = std::max(1, plan.cp), d = std::max(1, plan.dp);
    const int p = std::max(1, plan.pp), ep = std::max(1, plan.ep);
    const int gpus = t * c * d * p;
    Topology topo;
    topo.tp = placeGroup(t, 1, gpus, cluster);
    topo.cp = placeGroup(c, t, gpus, cluster);
    topo.dp = placeGroup(d, t * c, gpus, cluster);
    topo.pp = placeGroup(p, t * c * d, gpus, cluster);
    topo.dp_cp = placeGroup(c * d, t, gpus, cluster);
    // Megatron-Core builds the expert groups in the order etp-ep-edp-pp over the tp·cp·dp
    // ranks of a stage (MoE parallel folding, parallel_state.py), so EP members sit etp apart.
    const int etp = plan.expertTp();
    topo.etp = placeGroup(etp, 1, gpus, cluster);
    topo.ep = placeGroup(ep, etp, gpus, cluster);
    topo.tp_ep = placeGroup(etp * ep, 1, gpus, cluster);
    topo.edp = placeGroup(std::max(1, t * c * d / (etp * ep)), etp * ep, gpus, cluster);
    return topo;
}

} // namespace paralens
