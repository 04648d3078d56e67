// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/dims.h"
#include "core/params.h"

#include <algorithm>

namespace paralens {

ActivationShape ActivationShape::of(const Scenario& s)
{
    ActivationShape a;
    a.seq = s.training.seq_len;
    a.micro_batch = s.training.micro_batch;
    a.tp = s.parallel.tp;
    a.sequence_parallel = s.parallel.sequence_parallel;
    a.cp = s.parallel.cp;
    a.recompute = s.training.recompute;
    a.flash_attention = s.training.flash_attention;
    return a;
}

Dims dimsOf(const ModelSpec& m, const ActivationShape& a, int ep)
{
    Dims d;
    d.s = a.seq;
    d.b = a.micro_batch;
    d.h = double(m.hidden);
    d.heads = m.heads;
    d.q = double(m.heads) * double(m.headDim());
    d.kv = double(m.kv_heads > 0 ? m.kv_heads : m.heads) * double(m.headDim());
    d.c = mlpMatrices(m);
    d.t = std::max(1, a.tp);
    d.tsp = a.sequence_parallel ? d.t : 1.0;
    d.cp = std::max(1, a.cp);
    d.ep = std::max(1, ep);
    d.tokens = d.b * d.s / d.cp;
    return d;
}

ZeroShards zeroShards(const ParallelPlan& p)
{
    ZeroShards z;
    z.dense = double(p.shardGroup()) * std::max(1, p.cp);
    z.expert = std::max(1.0, z.dense / std::max(1, p.ep)); // expert DP group = dp·cp/ep
    return z;
}

} // namespace paralens
