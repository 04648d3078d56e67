// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/accuracypanel.h"
#include "app/autosave.h"
#include "app/cli.h"
#include "app/mainwindow.h"
#include "app/tooldocks.h"
#include "app/tourcontroller.h"
#include "app/user_presets.h"
#include "app/workshop.h"
#include "core/error.h"
#include "widgets/accuracyview.h"

#include <QApplication>
#include <QCoreApplication>
#include <QDir>
#include <QDockWidget>
#include <QMessageBox>
#include <QScreen>
#include <QTimer>

#include <cstdio>
#include <memory>
#include <optional>

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
    // The user's preset folder and --presets DIR add to the built-in presets.
    QStringList rest = args;
    const QStringList dirs = paralens::takePresetOptions(rest);
    // `paralens FILE --present`: opens in workshop mode with the animation running.
    const bool present = rest.removeAll(QStringLiteral("--present")) > 0;
    // `paralens [FILE] --tour TOUR [--tour-step N]`: opens a guided tour (a file or a bundled
    // id) at step N (1-based; the first when not given).
    const paralens::TourLaunch tour = paralens::TourLaunch::take(rest);
    std::optional<paralens::PresetLibrary> presets;
    try {
        presets.emplace(paralens::loadPresetLibrary(dirs));
    } catch (const paralens::InputError& e) {
        QMessageBox::critical(nullptr, QObject::tr("Presets not loaded"),
                              QObject::tr("%1\nUsing the built-in presets only.")
                                  .arg(QString::fromStdString(e.what())));
    }
    paralens::MainWindow window(presets ? &*presets : nullptr);
    window.restoreSession(rest.size() <= 1);
    if (rest.size() > 1)
        window.openFile(rest.at(1));
    window.show();
    window.fitToScreen(); // again with the window frame known
    // Screenshots and demos: PARALENS_ACCURACY_RUNS=FILE[:FILE...] opens the Accuracy dock on
    // those runs (CSV rows on PARALENS_ACCURACY_HARDWARE, a preset id or hardware file);
    // docs/fit.md shows how.
    if (const QString runs = qEnvironmentVariable("PARALENS_ACCURACY_RUNS"); !runs.isEmpty()) {
        // The dock must be in the picture: on a screen narrower than the window can be, it
        // floats over the whole screen.
        QRect floating;
        if (const QScreen* screen = window.screen()) {
            window.setGeometry(screen->availableGeometry());
            if (window.sizeHint().width() > screen->availableGeometry().width())
                floating = screen->availableGeometry();
        }
        // PARALENS_ACCURACY_OPEN=N then opens point N as the scenario, as a double-click does.
        bool open = false;
        const int point = qEnvironmentVariableIntValue("PARALENS_ACCURACY_OPEN", &open);
        paralens::AccuracyPanel* panel = window.toolDocks()->accuracyPanel();
        if (open)
            QObject::connect(
                panel, &paralens::AccuracyPanel::reportReady, panel,
                [panel, point] { panel->view()->choosePoint(point); }, Qt::SingleShotConnection);
        window.toolDocks()->openAccuracy(runs.split(QDir::listSeparator(), Qt::SkipEmptyParts),
                                         qEnvironmentVariable("PARALENS_ACCURACY_HARDWARE"),
                                         floating);
    }
    // Presenting first: a tour's steps are then laid out for the projector from the start.
    // A projector shows the whole screen: started to present, the window takes all of it
    // (F5 later keeps the window's size, as a user who sized it wants).
    if (present) {
        if (const QScreen* screen = window.screen())
            window.setGeometry(screen->availableGeometry());
        window.workshop()->setPresentation(true);
    }
    window.findChild<paralens::TourController*>()->launch(tour); // errors: a box and stderr
    // Screenshots and demos: PARALENS_SHOW_DOCKS=SearchDock,CalibrationDock,... opens those
    // docks (object names), as their Tools menu entries do.
    for (const QString& name :
         qEnvironmentVariable("PARALENS_SHOW_DOCKS").split(QLatin1Char(','), Qt::SkipEmptyParts))
        if (auto* dock = window.findChild<QDockWidget*>(name.trimmed())) {
            dock->show();
            dock->raise();
        }
    // PARALENS_BASELINE=A.paralens.json paralens B.paralens.json: compare mode, A pinned.
    window.applyEnvironment();
    // Screenshots and demos: PARALENS_WINDOW_SIZE=WxH (or "max": the available screen).
    if (const QString size = qEnvironmentVariable("PARALENS_WINDOW_SIZE"); !size.isEmpty()) {
        const QStringList wh = size.split(QLatin1Char('x'));
        if (size == QStringLiteral("max") && window.screen())
            window.setGeometry(window.screen()->availableGeometry());
        else if (wh.size() == 2 && wh[0].toInt() > 0 && wh[1].toInt() > 0)
            window.resize(wh[0].toInt(), wh[1].toInt());
        window.fitToScreen();
    }
    if (present)
        QTimer::singleShot(1000, window.workshop(), &paralens::Workshop::play);
    // Work left by a session that crashed: offered once the window is on screen.
    QTimer::singleShot(0, &window, [&window] { window.autosave()->offerRecovery(&window); });
    return app.exec();
}
