// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/runs_loader.h"
#include "core/error.h"
#include "core/input_file.h"
#include "core/spec_io.h"

#include <QFileInfo>

#include <nlohmann/json.hpp>

namespace paralens {
namespace {

/// The cluster of CSV rows: a hardware preset id, or a hardware preset file.
Scenario clusterTemplate(const QString& hw, const PresetLibrary& presets)
{
    Scenario s;
    if (const ClusterSpec* c = presets.hardware(hw.toStdString())) {
        s.hardware_id = hw.toStdString();
        s.cluster = *c;
        return s;
    }
    const std::string path = hw.toStdString();
    if (!QFileInfo(hw).isFile())
        throw InputError("hardware",
                         "--hardware: '" + path + "' is neither a hardware preset nor a file");
    const std::string text = readInputFile(path, kMaxPresetFileBytes, "hardware file", path);
    try {
        s.cluster = clusterFromJson(nlohmann::json::parse(text), "hardware", true);
    } catch (const nlohmann::json::exception& e) {
        throw InputError("hardware", path + ": malformed hardware JSON: " + e.what());
    }
    return s;
}

} // namespace

bool isIterationCsv(const QString& file)
{
    return file.endsWith(QLatin1String(".csv"), Qt::CaseInsensitive);
}

std::vector<RunSet> loadRunFiles(const QStringList& files, const QString& hardware,
                                 const PresetLibrary& presets)
{
    std::vector<RunSet> sets;
    std::optional<Scenario> cluster;
    for (const QString& f : files) {
        const std::string path = f.toStdString();
        if (!isIterationCsv(f)) {
            sets.push_back(readRunsFile(path, presets));
            continue;
        }
        if (hardware.isEmpty())
            throw InputError("hardware", path + ": a measured-iteration CSV needs the cluster "
                                                "its rows ran on (--hardware ID|FILE)");
        if (!cluster)
            cluster = clusterTemplate(hardware, presets);
        sets.push_back(readIterationCsv(path, *cluster));
    }
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
