// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What the Megatron-Bridge writer and reader share.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace paralens::launch {

extern const char* const kBridgeVersion;
/// Preset id -> Megatron-Bridge pretrain recipe of the same model.
const std::vector<std::pair<std::string, std::string>>& bridgeRecipes();
/// True when the recipe's model provider is MLAModelProvider (multi-head latent attention), so
/// its model.q_lora_rank, kv_lora_rank, qk_head_dim, qk_pos_emb_head_dim and v_head_dim exist.
bool bridgeRecipeIsMla(std::string_view recipe);

} // namespace paralens::launch
