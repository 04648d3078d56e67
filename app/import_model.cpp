// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/import_model.h"

#include "core/error.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSaveFile>

namespace paralens {

namespace {

// What names the model: `_name_or_path`, else the file's name unless it is config.json, else
// its folder's unless that is a Hugging Face snapshot hash (snapshots/<40-hex commit>/); "".
QString nameHint(const HfImport& imp, const QString& configPath)
{
    if (!imp.name_or_path.empty())
        return QString::fromStdString(imp.name_or_path);
    const QFileInfo info(configPath);
    if (info.completeBaseName() != QLatin1String("config"))
        return info.completeBaseName();
    static const QRegularExpression hash(QStringLiteral("^[0-9a-f]{32,}$"));
    const QString folder = info.absoluteDir().dirName();
    return hash.match(folder).hasMatch() ? QString() : folder;
}

} // namespace

QString defaultPresetId(const HfImport& imp, const QString& configPath)
{
    if (const std::string id = presetIdFrom(nameHint(imp, configPath).toStdString()); !id.empty())
        return QString::fromStdString(id);
    return QString::fromStdString(presetIdFrom(imp.family)) + QStringLiteral("-import");
}

ModelImport importModelPreset(const QString& configPath, const QString& id,
                              const PresetLibrary& library)
{
    ModelImport out;
    out.imported = importHfConfigFile(configPath.toStdString());
    if (const QString name = nameHint(out.imported, configPath);
        out.imported.name_or_path.empty() && !name.isEmpty() && name.size() <= 128)
        out.imported.model.name = name.toStdString();
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
