// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What the Megatron-Bridge writer and reader share.
#include <string>
#include <utility>
#include <vector>

namespace paralens::launch {

extern const char* const kBridgeVersion;
/// Preset id -> Megatron-Bridge pretrain recipe of the same model.
const std::vector<std::pair<std::string, std::string>>& bridgeRecipes();

} // namespace paralens::launch
