// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/runs_loader.h"

#include <optional>

namespace paralens {

bool isIterationCsv(const QString& file)
{
    return detectRunsFormat(file.toStdString(), {}) == RunsFormat::IterationCsv;
}

std::vector<RunSet> loadRunFiles(const QStringList& files, const QString& hardware,
                                 const PresetLibrary& presets)
{
    std::optional<Scenario> cluster;
    if (!hardware.isEmpty())
        cluster = hardwareTemplate(hardware.toStdString(), presets);
    std::vector<RunSet> sets;
    for (const QString& f : files)
        sets.push_back(readRuns(f.toStdString(), presets, cluster ? &*cluster : nullptr));
    return sets;
}

std::vector<MeasuredRun> allRuns(const std::vector<RunSet>& sets)
{
    std::vector<MeasuredRun> runs;
    for (const RunSet& s : sets)
        runs.insert(runs.end(), s.runs.begin(), s.runs.end());
    return runs;
}

} // namespace paralens
