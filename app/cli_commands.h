// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include <QStringList>

// One function per subcommand, each in its own cli_<name>.cpp. `args` starts with the
// subcommand name. Each returns the process exit code.
namespace paralens::cli {

int cmdPresets(const QStringList& args);
int cmdCheck(const QStringList& args);
int cmdExport(const QStringList& args);

/// Prints "error: <message>" on stderr and returns the exit code for bad input.
int fail(const QString& message);
/// Exit codes shared by all subcommands.
enum ExitCode
{
    Ok = 0,
    BadInput = 1,
    BadUsage = 2
};

} // namespace paralens::cli
