// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/cluster_spec.h"
#include "core/model_spec.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace paralens {

/// Sane bounds for user input; values outside them are rejected with the bound named.
/// docs/scenario-format.md lists the same numbers.
namespace bounds {
inline constexpr std::int64_t kMaxLayers = 100000;
inline constexpr std::int64_t kMaxHidden = 1000000;
inline constexpr std::int64_t kMaxHeads = 100000;
inline constexpr std::int64_t kMaxFfnHidden = 10000000;
inline constexpr std::int64_t kMaxVocab = 100000000;
inline constexpr std::int64_t kMaxExperts = 100000;
inline constexpr std::int64_t kMaxGpus = 1000000;
inline constexpr std::int64_t kMaxSeqLen = 100000000;
inline constexpr std::int64_t kMaxBatch = 1000000000;
inline constexpr double kMaxMemoryGib = 1e6;
inline constexpr double kMaxGbps = 1e7;
inline constexpr double kMaxTflops = 1e7;
inline constexpr double kMaxLatencyUs = 1e7;
/// Metrics over the logits per micro-batch (training.logit_metrics): a training loop computes a
/// handful (Composer's defaults are two); more is a typo.
inline constexpr std::int64_t kMaxLogitMetrics = 16;
/// A load imbalance of the busiest EP rank over the mean can not exceed the EP degree.
inline constexpr double kMaxMoeLoadImbalance = double(kMaxGpus);
} // namespace bounds

/// Reads a model object (the "model" object of docs/scenario-format.md). `path` prefixes error keys
/// ("model"). With preset = true the preset keys id, kind, source, sources and notes are allowed
/// too. Throws InputError naming the key.
ModelSpec modelFromJson(const nlohmann::json& j, const std::string& path, bool preset = false);
/// Every field of the spec; "moe" only when it differs from a dense model, "mla" only with MLA,
/// "position_embedding" and "norm" only when they differ from gated_mlp's convention.
nlohmann::json modelToJson(const ModelSpec& m);

/// Reads a hardware object (the "hardware" object of docs/scenario-format.md). Same conventions as
/// modelFromJson.
ClusterSpec clusterFromJson(const nlohmann::json& j, const std::string& path, bool preset = false);
nlohmann::json clusterToJson(const ClusterSpec& c);

/// The JSON / CLI names of a model's positions and norm: rope, learned, none; rmsnorm, layernorm.
std::string_view toString(PositionEmbedding);
std::string_view toString(NormType);
std::optional<PositionEmbedding> parsePositionEmbedding(std::string_view);
std::optional<NormType> parseNormType(std::string_view);

bool operator==(const MoeSpec& a, const MoeSpec& b);
bool operator==(const MlaSpec& a, const MlaSpec& b);
bool operator==(const ModelSpec& a, const ModelSpec& b);
bool operator==(const GpuSpec& a, const GpuSpec& b);
bool operator==(const Latencies& a, const Latencies& b);
bool operator==(const ClusterSpec& a, const ClusterSpec& b);

} // namespace paralens
