// SPDX-License-Identifier: GPL-3.0-or-later
// Clusters typed in from docs/formulas.md §7 (datasheets), so the tests do not depend on presets.
#pragma once
#include "core/scenario.h"
#include "test_models.h"

namespace paralens::testmodels {

inline ClusterSpec a100_80gb()
{
    ClusterSpec c;
    c.name = "a100-80gb";
    c.gpu = {"A100 SXM4 80GB", 80, 2039, 312, 0};
    c.scale_up_gbps = 300;
    c.scale_out_gbps = 25; // 200 Gb/s HDR per GPU (Narayanan §5)
    return c;
}

inline ClusterSpec h100_sxm()
{
    ClusterSpec c;
    c.name = "h100-sxm";
    c.gpu = {"H100 SXM5", 80, 3350, 989, 1979};
    c.scale_up_gbps = 450;
    c.scale_out_gbps = 50;
    return c;
}

inline ClusterSpec gb200_nvl72()
{
    ClusterSpec c;
    c.name = "gb200-nvl72";
    c.gpu = {"GB200", 186, 8000, 2500, 5000};
    c.gpus_per_node = 4;
    c.scale_up_domain = 72;
    c.scale_up_gbps = 900;
    c.scale_out_gbps = 50;
    return c;
}

/// A scenario with the given model, cluster and plan; gpus = tp·pp·dp·cp.
inline Scenario scenario(const ModelSpec& m, const ClusterSpec& c, int tp, int pp, int dp,
                         int global_batch, int seq = 4096)
{
    Scenario s;
    s.model = m;
    s.cluster = c;
    s.parallel.tp = tp;
    s.parallel.pp = pp;
    s.parallel.dp = dp;
    s.parallel.sequence_parallel = tp > 1;
    s.gpus = tp * pp * dp;
    s.training.seq_len = seq;
    s.training.global_batch = global_batch;
    s.training.micro_batch = 1;
    return s;
}

/// Narayanan et al. 2021 Table 1 set-up: A100 80GB, s 2048, b 1, full recompute, no flash
/// attention, interleaved schedule (v = 2 where the layers allow; the paper does not print v).
inline Scenario narayananRow(int layers, int hidden, int heads, int tp, int pp, int gpus, int batch)
{
    Scenario s =
        scenario(gpt(layers, hidden, heads), a100_80gb(), tp, pp, gpus / (tp * pp), batch, 2048);
    s.parallel.sequence_parallel = false; // 2021: no sequence parallelism
    s.training.recompute = Recompute::Full;
    s.training.flash_attention = false;
    if (pp > 1 && layers % (2 * pp) == 0) {
        s.parallel.schedule = Schedule::Interleaved1F1B;
        s.parallel.virtual_stages = 2;
    }
    return s;
}

} // namespace paralens::testmodels
