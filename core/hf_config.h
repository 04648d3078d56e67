// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/model_spec.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace paralens {

/// Largest config.json the importer reads: real ones are a few KiB (multimodal ones with label
/// maps some 100 KiB), so anything larger is refused before parsing.
inline constexpr std::uint64_t kMaxHfConfigFileBytes = 4u << 20; ///< 4 MiB

/// A model read from a Hugging Face `config.json` (docs/cli.md, import-model).
struct HfImport
{
    ModelSpec model;          ///< name from `_name_or_path` when present, else the family
    std::string family;       ///< the family it was read as ("Llama", "DeepSeek-V3", ...)
    std::string architecture; ///< the `architectures` entry (or `model_type`) that matched
    std::string name_or_path; ///< the last part of `_name_or_path`, "" when absent
    /// What was assumed (absent keys and their defaults) and what is not modelled, one sentence
    /// each, in reading order; the last lists the keys that were not read.
    std::vector<std::string> notes;
    /// The config.json keys each spec field came from ("layers" -> "num_hidden_layers 32").
    std::map<std::string, std::string> sources;
};

/// Reads a config.json text. Throws InputError("<key>", "SOURCE: <key>: ...") for malformed
/// JSON, wrong types, absurd or negative sizes (docs/scenario-format.md bounds), inconsistent
/// shapes, and an unsupported architecture (the message lists the supported ones).
HfImport importHfConfig(std::string_view text, const std::string& source);

/// The same for a file: refuses files over kMaxHfConfigFileBytes, folders and unreadable paths.
HfImport importHfConfigFile(const std::string& path);

/// True when text is a JSON object with `architectures` or `model_type` and none of a
/// scenario's or preset's keys (`model`, `kind`): how a dropped file is told apart. Never throws.
bool looksLikeHfConfig(std::string_view text);

/// "LlamaForCausalLM (llama), MistralForCausalLM (mistral), ...": what importHfConfig reads.
std::string supportedHfArchitectures();

/// A preset id from free text ("meta-llama/Llama-3.1-8B" -> "llama-3.1-8b"): its last path
/// part, lowercased, other characters as '-', at most 64 characters; "" when nothing is left.
std::string presetIdFrom(std::string_view text);

/// The model preset file for `imp` (resources/presets format: id, kind, name, source, the spec
/// keys, sources and notes), which PresetLibrary::addText() accepts. `file` names the
/// config.json in the source line.
nlohmann::ordered_json hfPresetJson(const HfImport& imp, const std::string& id,
                                    const std::string& file);

} // namespace paralens
