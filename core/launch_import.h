// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/launch_config.h"
#include "core/presets.h"
#include "core/scenario.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

// A running job's launch file read back into a scenario (docs/launch-config.md): a Megatron-LM
// launch script or argument list, a Megatron-Bridge run_recipe.py script, a torchtitan TOML, a
// DeepSpeed JSON config, or a Megatron-DeepSpeed launch script with the JSON it names.
namespace paralens {

/// Largest launch file read (docs/limits.md): real ones are a few KiB.
inline constexpr std::uint64_t kMaxLaunchFileBytes = 1u << 20; ///< 1 MiB

struct LaunchImportOptions
{
    std::string model_id;    ///< preset to use for the model; empty: the file's shape or header
    std::string hardware_id; ///< preset to use for the cluster; empty: header, else h100-sxm
};

struct LaunchImport
{
    Scenario scenario;
    LaunchFramework framework = LaunchFramework::Megatron;
    /// What was assumed or left out ("no launcher line: 1 data-parallel replica assumed").
    std::vector<std::string> notes;
};

/// Reads another file a launch script names (a DeepSpeed config), by the name as written.
/// Throws InputError when it cannot. Empty: such a file is an error.
using SiblingReader = std::function<std::string(const std::string& name)>;

/// Which framework's file `text` is: JSON (an object) is DeepSpeed, TOML tables are
/// torchtitan, run_recipe.py is Megatron-Bridge, --deepspeed flags Megatron-DeepSpeed, other
/// --flags Megatron-LM. Throws InputError("", ...) naming `source` when it is none of them.
LaunchFramework detectLaunchFramework(std::string_view text, const std::string& source);

/// Reads a launch file into a scenario (not validated: see validate.h). Throws InputError
/// naming `source`, the line and the key or flag for what it cannot read: malformed syntax,
/// a wrong type, an out-of-bounds or inconsistent value, a model it cannot determine.
LaunchImport importLaunch(std::string_view text, const std::string& source,
                          const LaunchImportOptions& options = {},
                          const PresetLibrary& presets = PresetLibrary::builtin(),
                          const SiblingReader& read_sibling = {});

/// importLaunch on a file read from disk; a DeepSpeed config the script names is read from
/// the script's folder.
LaunchImport importLaunchFile(const std::string& path, const LaunchImportOptions& options = {},
                              const PresetLibrary& presets = PresetLibrary::builtin());

} // namespace paralens
