// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/import_model.h"

#include "core/error.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSaveFile>

namespace paralens {

QString defaultPresetId(const HfImport& imp, const QString& configPath)
{
    if (const std::string id = presetIdFrom(imp.name_or_path); !id.empty())
        return QString::fromStdString(id);
    const QFileInfo info(configPath);
    if (info.completeBaseName() != QLatin1String("config"))
        if (const std::string id = presetIdFrom(info.completeBaseName().toStdString()); !id.empty())
            return QString::fromStdString(id);
    // Hugging Face caches keep config.json in snapshots/<40-hex commit>/.
    static const QRegularExpression hash(QStringLiteral("^[0-9a-f]{32,}$"));
    const QString folder = info.absoluteDir().dirName();
    if (!hash.match(folder).hasMatch())
        if (const std::string id = presetIdFrom(folder.toStdString()); !id.empty())
            return QString::fromStdString(id);
    return QString::fromStdString(presetIdFrom(imp.family)) + QStringLiteral("-import");
}

ModelImport importModelPreset(const QString& configPath, const QString& id,
                              const PresetLibrary& library)
{
    ModelImport out;
    out.imported = importHfConfigFile(configPath.toStdString());
    out.id = id.isEmpty() ? defaultPresetId(out.imported, configPath) : id;
    const std::string file = QFileInfo(configPath).fileName().toStdString();
    const std::string text =
        hfPresetJson(out.imported, out.id.toStdString(), file).dump(2, ' ', false) + "\n";
    PresetLibrary check = library; // the preset must load as the library would load it
    check.addText(text, "preset '" + out.id.toStdString() + "'");
    out.text = QString::fromStdString(text);
    return out;
}

QString freePresetId(const QString& id, const PresetLibrary& library, const QString& folder)
{
    for (int n = 1;; ++n) {
        const QString candidate = n == 1 ? id : QStringLiteral("%1-%2").arg(id).arg(n);
        if (!library.model(candidate.toStdString()) && !library.hardware(candidate.toStdString()) &&
            !QFileInfo::exists(QDir(folder).filePath(candidate + QStringLiteral(".json"))))
            return candidate;
    }
}

QString writePresetFile(const QString& path, const QString& text)
{
    const QFileInfo info(path);
    if (!QDir().mkpath(info.absolutePath()))
        return QStringLiteral("cannot create the folder %1").arg(info.absolutePath());
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return f.errorString();
    const QByteArray bytes = text.toUtf8();
    if (f.write(bytes) != bytes.size() || !f.commit())
        return f.errorString();
    return QString();
}

} // namespace paralens
