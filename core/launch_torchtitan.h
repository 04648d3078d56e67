// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What the torchtitan writer and reader share.
#include "core/plan.h"

#include <optional>
#include <string>
#include <string_view>

namespace paralens::launch {

extern const char* const kTorchtitanVersion;

/// A torchtitan model: [model] name and flavor (torchtitan/models/*/__init__.py).
struct TorchtitanModel
{
    const char* preset;
    const char* name;
    const char* flavor;
};
/// The torchtitan model of a preset id, or of a [model] name and flavor; nullptr when none.
const TorchtitanModel* torchtitanModelOfPreset(std::string_view preset_id);
const TorchtitanModel* torchtitanModelOf(std::string_view name, std::string_view flavor);

/// parallelism.pipeline_parallel_schedule for a paralens schedule (torch.distributed.pipelining
/// get_schedule_class names), or nullptr when torchtitan has none; and back (case-insensitive).
const char* torchtitanSchedule(Schedule s);
std::optional<Schedule> scheduleOfTorchtitan(std::string_view name);

} // namespace paralens::launch
