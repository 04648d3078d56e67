// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/cluster_spec.h"
#include "core/collective.h"
#include "core/plan.h"

namespace paralens {

/// Where a rank sits in the parallel grid (Megatron's order tp-cp-ep-dp-pp: TP varies fastest).
/// `ep` is the rank's index in its expert-parallel group: experts use the order etp-ep-edp-pp
/// over the same ranks (Megatron-Core MoE parallel folding; expert TP = TP by default, when
/// the EP group is carved out of DP×CP); `node` = rank / gpus_per_node.
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

/// All process groups of a plan. dp_cp is the gradient-reduction group (DP×CP); etp the expert
/// TP group, ep the expert-parallel group (stride etp), tp_ep the two together (the allgather
/// and flex dispatchers' group), edp the expert-data-parallel group (TP×CP×DP / (ETP×EP)).
struct Topology
{
    GroupPlacement tp, cp, ep, dp, pp, dp_cp, edp, etp, tp_ep;
};

/// Places a group of `size` members at `stride` ranks on `gpus` GPUs of `cluster`.
GroupPlacement placeGroup(int size, int stride, int gpus, const ClusterSpec& cluster);
Topology placeGroups(const ParallelPlan& plan, const ClusterSpec& cluster);

} // namespace paralens
