// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <string>

namespace paralens {

/// Largest input files the readers accept (docs/limits.md). Real files are far smaller (a
/// scenario or preset is a few KiB, an nccl-tests log ~10 KiB per table, a measured profile
/// well under 1 MiB); a larger file is refused by its size before anything is parsed, so a
/// wrong or hostile file cannot make the parser run for minutes or exhaust memory.
inline constexpr std::uint64_t kMaxScenarioFileBytes = 1u << 20; ///< 1 MiB
inline constexpr std::uint64_t kMaxPresetFileBytes = 1u << 20;   ///< 1 MiB
inline constexpr std::uint64_t kMaxTourFileBytes = 1u << 20;     ///< 1 MiB
inline constexpr std::uint64_t kMaxProfileFileBytes = 64u << 20; ///< 64 MiB
inline constexpr std::uint64_t kMaxNcclLogFileBytes = 64u << 20; ///< 64 MiB

/// Reads a whole file as bytes. Throws InputError(field, ...) naming `path` when it cannot be
/// opened ("cannot open the <what>"), cannot be read, or holds more than `max_bytes`: the size
/// is checked before reading for regular files, and reading stops at max_bytes + 1 for anything
/// else (pipes, devices), so memory stays bounded by the limit either way.
std::string readInputFile(const std::string& path, std::uint64_t max_bytes, const std::string& what,
                          const std::string& field);

} // namespace paralens
