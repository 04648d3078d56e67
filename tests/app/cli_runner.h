// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The one way the tests run the built `paralens` (PARALENS_BIN, set by paralens_add_test's
// RUNS_PARALENS): the way a user's script would, on a machine without a display.
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

struct Options
{
    QString configHome; ///< the user's config folder; empty: a private, empty one
    QString workingDir; ///< empty: the test's own
    int timeoutMs = 120000;
};

/// No DISPLAY, no platform plugin forced, and a private config folder so the developer's own
/// presets never leak into a test.
inline Result run(const QStringList& args, const Options& o)
{
    static QTemporaryDir emptyConfig;
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove("DISPLAY");
    env.remove("WAYLAND_DISPLAY");
    env.remove("QT_QPA_PLATFORM");
    env.insert("XDG_CONFIG_HOME", o.configHome.isEmpty() ? emptyConfig.path() : o.configHome);
    p.setProcessEnvironment(env);
    if (!o.workingDir.isEmpty())
        p.setWorkingDirectory(o.workingDir);
    p.start(PARALENS_BIN, args);
    if (!p.waitForFinished(o.timeoutMs))
        return {};
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2,
            QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

inline Result run(const QStringList& args, const QString& configHome = QString(),
                  int timeoutMs = 120000)
{
    return run(args, Options{configHome, QString(), timeoutMs});
}

} // namespace paralens::testcli
