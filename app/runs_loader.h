// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/accuracy.h"
#include "core/presets.h"

#include <QString>
#include <QStringList>

#include <vector>

namespace paralens {

/// Reads runs files (*.paralens-runs.json) and measured-iteration CSVs through core's readRuns.
/// A CSV needs `hardware`: the cluster its rows ran on, a preset id or a hardware preset file
/// (core's hardwareTemplate). Throws InputError naming the file (and line) at the first problem.
std::vector<RunSet> loadRunFiles(const QStringList& files, const QString& hardware,
                                 const PresetLibrary& presets);

/// Every run of the sets, in order.
std::vector<MeasuredRun> allRuns(const std::vector<RunSet>& sets);

/// True for a file name the CSV reader takes (core's detectRunsFormat, by name alone).
bool isIterationCsv(const QString& file);

} // namespace paralens
