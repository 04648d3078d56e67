// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Binary byte units, the one definition every layer uses (HBM capacities are quoted in GiB,
// nccl-tests sizes are powers of two). Plain C++17 so paralens-measure can include it too.

namespace paralens::units {

inline constexpr double kKiB = 1024.0;
inline constexpr double kMiB = 1024.0 * kKiB;
inline constexpr double kGiB = 1024.0 * kMiB;

} // namespace paralens::units
