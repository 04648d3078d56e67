// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/cluster_spec.h"
#include "core/collective.h"
#include "core/plan.h"

namespace paralens {

/// Where a rank sits in the parallel grid (Megatron's order tp-cp-ep-dp-pp: TP varies fastest).
/// `ep` is the rank's index in its expert-parallel group, carved out of DP×CP (experts use the
/// order tp-ep-edp-pp with expert-TP = TP); `node` = rank / gpus_per_node.
struct RankCoordinates
{
    int tp = 0, cp = 0, ep = 0, dp = 0, pp = 0, node = 0;
};

/// rank must be in [0, plan.gpus()).
RankCoordinates rankCoordinates(const ParallelPlan& plan, const ClusterSpec& cluster, int rank);

/// How one kind of process group lands on the machine. Members of a group are
/// first + j·stride, j < size, inside an aligned block of size·stride ranks.
struct GroupPlacement
{
    int size = 1;
    int stride = 1;
    int per_node = 1;   ///< members on one node
    int per_domain = 1; ///< members inside one scale-up domain
    int nodes = 1;      ///< nodes one group spans
    bool crosses_nodes = false;
    Span span = Span::ScaleUp; ///< ScaleOut when some group leaves its scale-up domain
};

/// All process groups of a plan. dp_cp is the gradient-reduction group (DP×CP); edp the
/// expert-data-parallel group (DP×CP / EP).
struct Topology
{
    GroupPlacement tp, cp, ep, dp, pp, dp_cp, edp;
};

/// Places a group of `size` members at `stride` ranks on `gpus` GPUs of `cluster`.
GroupPlacement placeGroup(int size, int stride, int gpus, const ClusterSpec& cluster);
Topology placeGroups(const ParallelPlan& plan, const ClusterSpec& cluster);

} // namespace paralens
