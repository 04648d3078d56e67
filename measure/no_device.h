// SPDX-License-Identifier: GPL-3.0-or-later
// "No CUDA device" in all its causes (no GPU, no driver, a driver too old for the runtime,
// the toolkit's stub libcuda), told apart so that the one error line says which.
#pragma once
#include <cuda_runtime.h>

#include <string>

namespace paralens::measure {

/// True when cudaGetDeviceCount's result means this process can use no GPU at all (exit 3)
/// rather than a failed call (exit 1).
bool isNoDevice(cudaError_t e, int count);

/// "no CUDA device visible", followed by ": why" where the error tells more (the driver's
/// CUDA version against the runtime's, a missing driver).
std::string noDeviceMessage(cudaError_t e);

} // namespace paralens::measure
