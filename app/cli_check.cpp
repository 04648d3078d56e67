// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/cli_commands.h"

namespace paralens::cli {

int cmdCheck(const QStringList&)
{
    return fail("check: not implemented yet");
}

} // namespace paralens::cli
