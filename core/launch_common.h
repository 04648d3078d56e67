// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What the four launch-config writers and their readers share: the header every file starts
// with, the node count, the warnings, and the Megatron-style MoE layer pattern.
#include "core/launch_config.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace paralens::launch {

/// Collects warnings in order; each id at most once.
class Warnings
{
public:
    explicit Warnings(std::vector<LaunchWarning>& out) : m_out(out) {}
    void add(std::string id, std::string message);

private:
    std::vector<LaunchWarning>& m_out;
};

/// GPUs per node the launch line starts (the cluster's, or all GPUs when fewer) and nodes.
struct Nodes
{
    int nodes = 1;
    int per_node = 1;
};
Nodes nodesOf(const Scenario& s);

/// The comment lines every file starts with, `prefix` ("# ") before each: what generated it,
/// the framework version whose names it uses, and the "paralens:" line the reader takes the
/// preset ids from (docs/launch-config.md).
std::string headerComment(const Scenario& s, std::string_view framework_version,
                          std::string_view prefix);
/// Warnings every framework shares: a scenario modelled for another framework, a custom
/// cluster or calibration that no launch file carries.
void commonWarnings(const Scenario& s, LaunchFramework f, Warnings& w);
/// "# WARNING id: message" lines, `prefix` before each.
std::string warningComments(const std::vector<LaunchWarning>& warnings, std::string_view prefix);

/// The paralens framework a launch framework runs as (Megatron-Bridge runs Megatron-Core).
Framework modelledFramework(LaunchFramework f);

/// Megatron-Core's --moe-layer-freq for the model: an integer N when the pattern starts at
/// layer 0 (an MoE layer every N), else a Python list expression such as "([0]*3+[1]*58)".
std::string moeLayerFreq(const ModelSpec& m);

/// The preset ids and model name of a "paralens:" header line.
struct HeaderIds
{
    std::string model_id;
    std::string hardware_id;
    std::string model_name;
};
/// Reads the "paralens: model=ID hardware=ID" and "paralens: model-name=..." lines of a
/// launch file, wherever they are; fields left empty when absent.
HeaderIds readHeaderIds(std::string_view text);

/// Command-line options in the order written: "--name value" or "--name" alone.
class ArgList
{
public:
    void flag(std::string name) { m_args.push_back({std::move(name), {}}); }
    void opt(std::string name, std::string value)
    {
        m_args.push_back({std::move(name), std::move(value)});
    }
    void opt(std::string name, long long value) { opt(std::move(name), std::to_string(value)); }
    /// One option per line, `indent` before each, joined by shell line continuations.
    std::string lines(std::string_view indent) const;

private:
    std::vector<std::pair<std::string, std::string>> m_args;
};

/// Megatron-Core's AttnBackend value (megatron/core/transformer/enums.py: flash, fused,
/// unfused, local, auto) for the attention settings, as Megatron-LM's --attention-backend and
/// Megatron-Bridge's model.attention_backend take it; empty when it is not written (auto, the
/// default). training.attention_kernel triton has no backend: the named warning
/// attention_kernel_not_megatron, and nothing written.
std::string megatronAttentionBackend(const TrainingSettings& t, Warnings& w);

/// The attention settings an AttnBackend value stands for; false for a value that is not one.
/// auto is the default kernel; unfused and local (Megatron's own unfused DotProductAttention)
/// are flash_attention false.
bool readMegatronAttentionBackend(std::string_view value, TrainingSettings& t);

/// Megatron-Core's position_embedding_type names (GPTModel, Megatron-LM
/// --position-embedding-type and Megatron-Bridge model.position_embedding_type): learned_absolute,
/// rope, none; and its normalization names, LayerNorm and RMSNorm.
/// torchtitan's [optimizer] implementation: "fused" (also for Default), "foreach", "for-loop".
std::string_view torchtitanOptimizerImpl(OptimizerImpl impl);
std::optional<OptimizerImpl> parseTorchtitanOptimizerImpl(std::string_view name);
std::string_view megatronPositionType(PositionEmbedding p);
/// Megatron-LM's and Megatron-DeepSpeed's precision flag: --fp16 (with Megatron's dynamic loss
/// scaling, --loss-scale unset) for fp16, --bf16 otherwise (FP8 adds --fp8-format to it).
std::string_view megatronPrecisionFlag(Precision p);
std::optional<PositionEmbedding> parseMegatronPositionType(std::string_view name);
std::string_view megatronNormalization(NormType n);

/// Shortest text of a double that reads back the same ("0.1", "1e-05").
std::string formatNumber(double v);

/// Adam's moments from Megatron-Core's precision-aware optimizer settings (Megatron-LM
/// --use-precision-aware-optimizer --exp-avg-dtype --exp-avg-sq-dtype, Megatron-Bridge
/// optimizer.use_precision_aware_optimizer, exp_avg_dtype, exp_avg_sq_dtype): bf16 when it is
/// on and both moments are bf16 ("bf16", "bfloat16", "torch.bfloat16"); fp32 otherwise, with
/// `note` saying why when it is on with other dtypes (fp16, fp8, one moment alone).
AdamMomentsDtype readAdamMoments(bool precision_aware, const std::optional<std::string>& exp_avg,
                                 const std::optional<std::string>& exp_avg_sq, std::string& note);

/// The set those names stand for; nullopt, with the first unknown name in `bad`, when one is
/// not a module ParaLens models.
std::optional<std::uint8_t> parseRecomputeModuleList(const std::vector<std::string>& names,
                                                     std::string& bad);

} // namespace paralens::launch
