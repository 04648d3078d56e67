// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What the DeepSpeed writer and reader share.

namespace paralens::launch {

extern const char* const kDeepSpeedVersion;
/// The JSON config's file name, which the launch script passes as --deepspeed_config.
extern const char* const kDeepSpeedConfigName;

} // namespace paralens::launch
