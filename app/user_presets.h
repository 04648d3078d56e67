// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/presets.h"

#include <QString>
#include <QStringList>

namespace paralens {

/// The user's own preset folder: QStandardPaths::AppConfigLocation + "/presets"
/// (on Linux ~/.config/ParaLens/paralens/presets). It need not exist.
QString userPresetFolder();

/// Built-in presets plus the user folder (when it exists) plus every folder in `dirs`
/// (from --presets). Throws InputError naming the file for a broken preset or a reused id.
PresetLibrary loadPresetLibrary(const QStringList& dirs);

/// Removes every "--presets DIR" / "--presets=DIR" from args and returns the folders.
/// A trailing "--presets" with no folder is kept in args (the subcommand reports it).
QStringList takePresetOptions(QStringList& args);

} // namespace paralens
