// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/scenario.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

// A scenario's plan written as what a training framework reads (docs/launch-config.md): the
// launch files for Megatron-LM, Megatron-Bridge, torchtitan and DeepSpeed, and the settings
// each cannot express, named. The argument and key names are those of the framework versions
// docs/launch-config.md lists; tests/data/launch/ holds the name lists they are checked against.
namespace paralens {

enum class LaunchFramework
{
    Megatron,       ///< Megatron-LM pretrain_gpt.py under torchrun
    MegatronBridge, ///< Megatron-Bridge run_recipe.py with Hydra-style overrides
    Torchtitan,     ///< torchtitan TOML job config
    DeepSpeed,      ///< DeepSpeed JSON config and a Megatron-DeepSpeed launch line
};

/// "megatron", "megatron-bridge", "torchtitan", "deepspeed".
std::string_view toString(LaunchFramework);
std::optional<LaunchFramework> parseLaunchFramework(std::string_view);
inline constexpr LaunchFramework kAllLaunchFrameworks[] = {
    LaunchFramework::Megatron, LaunchFramework::MegatronBridge, LaunchFramework::Torchtitan,
    LaunchFramework::DeepSpeed};

/// A setting of the scenario the framework cannot express as it is. `id` is stable
/// ("schedule_unsupported"); `message` says what was written instead, or that nothing was.
struct LaunchWarning
{
    std::string id;
    std::string message;
};

/// One file of a launch configuration: its suggested name and its text.
struct LaunchFile
{
    std::string name; ///< "launch.sh", "train.toml", "ds_config.json"
    std::string text;
};

/// Every file one framework needs (the first is the main one), and the settings it cannot
/// express. Each warning is also written into the main file as a comment, except in a JSON
/// file, which has none: there it is in the launch script that reads the JSON.
struct LaunchConfig
{
    LaunchFramework framework = LaunchFramework::Megatron;
    std::vector<LaunchFile> files;
    std::vector<LaunchWarning> warnings;
};

/// The launch configuration of `s` for `f`. Never throws for a scenario validate() accepts;
/// a plan it does not accept gives a configuration of what it holds.
LaunchConfig launchConfig(const Scenario& s, LaunchFramework f);

// One per framework (launch_megatron.cpp, launch_bridge.cpp, launch_torchtitan.cpp,
// launch_deepspeed.cpp).
LaunchConfig megatronLaunch(const Scenario& s);
LaunchConfig bridgeLaunch(const Scenario& s);
LaunchConfig torchtitanLaunch(const Scenario& s);
LaunchConfig deepspeedLaunch(const Scenario& s);

} // namespace paralens
