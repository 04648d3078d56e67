// SPDX-License-Identifier: GPL-3.0-or-later
// The `collectives` subcommand: nccl-tests-style sweeps of the six collectives.
#pragma once
#include "measure/common.h"
#include "measure/world.h"

#include "core/calibration.h"

#include <cstdio>
#include <vector>

namespace paralens::measure {

/// Runs every requested collective on the whole world and on sub-groups (contiguous, and
/// strided across nodes when there are several), appending one curve per collective, group
/// size and span to `out` as soon as it is measured (so a later timeout keeps it). Prints
/// nccl-tests-layout tables on `table` (root only). Throws TimeoutError after aborting.
void runCollectives(World& world, const Options& opt, std::vector<CollectiveCurve>& out,
                    std::FILE* table);

/// nccl-tests' op names accepted by --ops.
const std::vector<std::string>& allOps();

} // namespace paralens::measure
