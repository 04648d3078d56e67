// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/cli_commands.h"

namespace paralens::cli {

int cmdPresets(const QStringList&)
{
    return fail("presets: not implemented yet");
}

} // namespace paralens::cli
