// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Runs the built `paralens` (PARALENS_BIN, set by tests/app/CMakeLists.txt) the way a user's
// script would on a machine without a display, for the command-line tests.
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

namespace paralens::testcli {

struct Result
{
    int code = -1; ///< exit code; -1 timed out, -2 crashed
    QString out;
    QString err;
};

/// No DISPLAY, no platform plugin forced, and a private config folder (empty unless
/// `configHome` is given) so the developer's own presets never leak into a test.
inline Result run(const QStringList& args, const QString& configHome = QString(),
                  int timeoutMs = 120000)
{
    static QTemporaryDir emptyConfig;
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove("DISPLAY");
    env.remove("WAYLAND_DISPLAY");
    env.remove("QT_QPA_PLATFORM");
    env.insert("XDG_CONFIG_HOME", configHome.isEmpty() ? emptyConfig.path() : configHome);
    p.setProcessEnvironment(env);
    p.start(PARALENS_BIN, args);
    if (!p.waitForFinished(timeoutMs))
        return {};
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2,
            QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

} // namespace paralens::testcli
