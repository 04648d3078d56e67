// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What the launch-file readers share (launch_import.cpp) and the readers themselves
// (import_megatron.cpp, import_bridge.cpp, import_torchtitan.cpp, import_deepspeed.cpp).
#include "core/launch_common.h"
#include "core/launch_import.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace paralens::launch {

struct ImportContext
{
    std::string source;
    const LaunchImportOptions& options;
    const PresetLibrary& presets;
    HeaderIds header;
    std::vector<std::string>& notes;
    const SiblingReader& read_sibling;
    [[noreturn]] void fail(const std::string& field, const std::string& what) const;
    /// Notes the options or keys a reader did not model (the first twelve), if any.
    void noteUnread(const std::vector<std::string>& unread);
};

/// True when two models have the same shape (every figure the launch files carry; the name
/// aside), so an imported shape can be named by its preset.
bool sameShape(const ModelSpec& a, const ModelSpec& b);

/// Sets the model: the --model preset when given; else the file's shape, named by the preset
/// of the header or any preset of that shape; else the header's preset. Throws when none.
void resolveModel(ImportContext& ctx, const std::optional<ModelSpec>& shape, Scenario& s);
/// Sets the cluster: the --hardware preset, the header's, else h100-sxm (with a note).
void resolveHardware(ImportContext& ctx, Scenario& s);
/// Sets gpus and dp from the world size; throws when tp·pp·cp does not divide it.
void setWorld(ImportContext& ctx, Scenario& s, std::int64_t world, const std::string& field);

/// Reads --moe-layer-freq (an integer N, or a Python list expression of 0/1 per layer built
/// from [..], *, + and parentheses) into moe.first_dense_layers and moe.layer_frequency.
/// Throws via ctx for a malformed expression or a pattern paralens cannot hold.
void readMoeLayerFreq(const ImportContext& ctx, const std::string& field, std::string_view text,
                      int layers, MoeSpec& moe);

LaunchImport importMegatronScript(std::string_view text, ImportContext& ctx);
LaunchImport importBridgeScript(std::string_view text, ImportContext& ctx);
LaunchImport importTorchtitanToml(std::string_view text, ImportContext& ctx);
LaunchImport importDeepSpeedJson(std::string_view text, ImportContext& ctx);

/// What a DeepSpeed JSON config holds, read into `s` (batch, ZeRO, offload, overlap, pipeline
/// stages). Returns the gradient accumulation steps it states (0 when absent) and sets
/// *stages to pipeline.stages (0 when absent).
struct DeepSpeedJson
{
    std::int64_t train_batch = 0;
    std::int64_t micro_batch = 0;
    std::int64_t accumulation = 0;
    std::int64_t stages = 0;
};
DeepSpeedJson readDeepSpeedJson(std::string_view text, const std::string& source, Scenario& s,
                                std::vector<std::string>& notes);

} // namespace paralens::launch
