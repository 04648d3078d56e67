// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/user_presets.h"

#include <QDir>
#include <QStandardPaths>

namespace paralens {

QString userPresetFolder()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppConfigLocation) + "/presets";
}

PresetLibrary loadPresetLibrary(const QStringList& dirs)
{
    PresetLibrary library;
    if (const QString user = userPresetFolder(); QDir(user).exists())
        library.addFolder(QDir::toNativeSeparators(user).toStdString());
    for (const auto& dir : dirs)
        library.addFolder(dir.toStdString());
    return library;
}

QStringList takePresetOptions(QStringList& args)
{
    QStringList dirs;
    for (int i = 0; i < args.size();) {
        const QString& a = args.at(i);
        if (a.startsWith("--presets=")) {
            dirs << a.mid(10);
            args.removeAt(i);
        } else if (a == "--presets" && i + 1 < args.size()) {
            dirs << args.at(i + 1);
            args.remove(i, 2);
        } else {
            ++i;
        }
    }
    return dirs;
}

} // namespace paralens
