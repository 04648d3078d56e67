// SPDX-License-Identifier: GPL-3.0-or-later
// Helpers the launch-config tests share: argument lists, a base scenario, a config's files and
// its round trip through importLaunch().
#pragma once
#include "core/launch_config.h"
#include "core/launch_import.h"
#include "core/presets.h"
#include "core/scenario_io.h"

#include <QFile>
#include <QSet>
#include <QString>

#include <stdexcept>
#include <string>

namespace paralens::testlaunch {

/// The names in tests/data/launch/FILE, one per line ('#' starts a comment line).
inline QSet<QString> nameList(const char* file)
{
    QFile f(QStringLiteral(PARALENS_SOURCE_DIR "/tests/data/launch/") + QLatin1String(file));
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot open %s", file);
    QSet<QString> names;
    for (const QByteArray& raw : f.readAll().split('\n')) {
        const QString line = QString::fromUtf8(raw).trimmed();
        if (!line.isEmpty() && !line.startsWith('#'))
            names.insert(line);
    }
    return names;
}

/// A preset model on `gpus` GPUs of plain DP under framework `f`, sequence 4,096, batch 256.
inline Scenario base(const char* model, int gpus, Framework f)
{
    Scenario s = defaultScenario();
    s.model_id = model;
    s.model = *PresetLibrary::builtin().model(model);
    s.gpus = gpus;
    s.parallel = ParallelPlan{};
    s.parallel.dp = gpus;
    s.training = TrainingSettings{};
    s.training.framework = f;
    s.training.seq_len = 4096;
    s.training.global_batch = 256;
    return s;
}

inline const std::string& fileText(const LaunchConfig& c, const char* name)
{
    for (const auto& f : c.files)
        if (f.name == name)
            return f.text;
    qFatal("no file %s", name);
}

/// The config read back by importLaunch() (DeepSpeed: its script with its JSON beside it).
inline LaunchImport roundTrip(const LaunchConfig& c)
{
    if (c.framework == LaunchFramework::DeepSpeed) {
        const std::string json = fileText(c, "ds_config.json");
        return importLaunch(fileText(c, "launch.sh"), "launch.sh", {}, PresetLibrary::builtin(),
                            [json](const std::string& name) {
                                if (name != "ds_config.json")
                                    throw std::runtime_error("unexpected " + name);
                                return json;
                            });
    }
    return importLaunch(c.files.front().text, c.files.front().name);
}

inline QString describe(const Scenario& a, const Scenario& b)
{
    return QString::fromStdString("\nwritten:\n" + scenarioToText(a) + "read back:\n" +
                                  scenarioToText(b));
}

inline bool hasWarning(const LaunchConfig& c, const std::string& id)
{
    for (const auto& w : c.warnings)
        if (w.id == id)
            return true;
    return false;
}

inline QString warningsOf(const LaunchConfig& c)
{
    QString s;
    for (const auto& w : c.warnings)
        s += QString::fromStdString(" [" + w.id + ": " + w.message + "]");
    return s;
}

} // namespace paralens::testlaunch
