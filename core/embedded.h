// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include <vector>

namespace paralens::embedded {

/// A resource file compiled into the core (see cmake/EmbedFiles.cmake).
struct EmbeddedFile
{
    const char* path;    ///< path relative to resources/, e.g. "presets/models/llama3-70b.json"
    const char* content; ///< the file's text
};

/// Every file under resources/presets/.
const std::vector<EmbeddedFile>& presetFiles();
/// Every file under resources/reference/ (published runs for `paralens reference`).
const std::vector<EmbeddedFile>& referenceFiles();
/// Every file under resources/tours/ (the bundled guided tours).
const std::vector<EmbeddedFile>& tourFiles();

} // namespace paralens::embedded
