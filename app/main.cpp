// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/cli.h"
#include "app/mainwindow.h"

#include <QApplication>
#include <QCoreApplication>

#include <cstdio>
#include <memory>

int main(int argc, char** argv)
{
    QStringList args;
    for (int i = 0; i < argc; ++i)
        args << QString::fromLocal8Bit(argv[i]);

    // Drawing subcommands need widgets but no screen: offscreen when there is no display.
    if (paralens::cli::needsGui(args)) {
        if (qEnvironmentVariableIsEmpty("DISPLAY") &&
            qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
        // Headless output is one `error: ...` line or nothing: Qt's platform chatter (e.g. a
        // missing XDG_RUNTIME_DIR) stays out of stderr unless PARALENS_DEBUG is set.
        if (qEnvironmentVariableIsEmpty("PARALENS_DEBUG"))
            qInstallMessageHandler(
                [](QtMsgType type, const QMessageLogContext&, const QString& msg) {
                    if (type == QtCriticalMsg || type == QtFatalMsg)
                        std::fprintf(stderr, "%s\n", qPrintable(msg));
                });
        QApplication app(argc, argv);
        QCoreApplication::setApplicationName("paralens");
        QCoreApplication::setOrganizationName("ParaLens");
        return paralens::cli::run(args);
    }
    // Subcommands run without a GUI platform, so they work over ssh and in CI.
    if (paralens::cli::wantsCli(args)) {
        QCoreApplication app(argc, argv);
        QCoreApplication::setApplicationName("paralens");
        QCoreApplication::setOrganizationName("ParaLens");
        return paralens::cli::run(args);
    }

    QApplication app(argc, argv);
    QApplication::setApplicationName("paralens");
    QApplication::setApplicationDisplayName("ParaLens");
    QApplication::setOrganizationName("ParaLens");
    QApplication::setApplicationVersion(PARALENS_VERSION);
    QApplication::setDesktopFileName("io.github.paralens.ParaLens");
    paralens::MainWindow window;
    window.restoreSession(args.size() <= 1);
    if (args.size() > 1)
        window.openFile(args.at(1));
    window.show();
    return app.exec();
}
