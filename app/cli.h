// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include <QStringList>

namespace paralens::cli {

/// True when the arguments ask for a headless subcommand (or --version/--help) rather than
/// the GUI. Subcommands never need a display.
bool wantsCli(const QStringList& args);

/// True for subcommands that draw (export): they need a QApplication, offscreen when there
/// is no display.
bool needsGui(const QStringList& args);

/// Runs the subcommand named in args (args[0] is the program). Returns the exit code; bad
/// input prints one `error: ...` line on stderr and returns non-zero.
int run(const QStringList& args);

} // namespace paralens::cli
