// SPDX-License-Identifier: GPL-3.0-or-later
// What the three launch-file fuzz targets check after a reader: a read scenario that
// validate() accepts writes launch files for every framework and reads back without a crash.
#pragma once

#include "core/error.h"
#include "core/launch_config.h"
#include "core/launch_import.h"
#include "core/validate.h"

#include <cstdlib>
#include <string_view>

namespace paralens::fuzzcheck {

inline void afterImport(const LaunchImport& imported)
{
    const Scenario& s = imported.scenario;
    if (s.gpus < 1 || s.parallel.dp < 1 || s.model.layers < 1)
        std::abort(); // a reader never returns a scenario without GPUs or layers
    if (!validate(s).empty())
        return;
    for (LaunchFramework f : kAllLaunchFrameworks) {
        const LaunchConfig c = launchConfig(s, f);
        if (c.files.empty() || c.files.front().text.empty())
            std::abort();
        for (const auto& w : c.warnings)
            if (w.id.empty() || w.message.empty())
                std::abort();
    }
}

/// Runs `read`; an InputError must name the problem, anything else escaping is a bug.
template <typename Read> void guarded(Read read)
{
    try {
        afterImport(read());
    } catch (const InputError& e) {
        if (std::string_view(e.what()).empty())
            std::abort();
    }
}

} // namespace paralens::fuzzcheck
