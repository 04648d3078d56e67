// SPDX-License-Identifier: GPL-3.0-or-later
// ui_update: one slider tick to every view repainted, offscreen at 1600x1000. A tick is the
// key press on the TP slider (panel, document, undo stack), the synchronous evaluation and
// replot of every chart, and a grab() of the whole window.
#include "app/mainwindow.h"
#include "widgets/controlpanel.h"
#include "widgets/snapslider.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QSlider>
#include <QTest>

#include <algorithm>
#include <cstdio>
#include <vector>

int main(int argc, char** argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    // One JSON line on stdout; Qt's offscreen-platform chatter stays out of the way.
    qInstallMessageHandler([](QtMsgType type, const QMessageLogContext&, const QString& msg) {
        if (type == QtCriticalMsg || type == QtFatalMsg)
            std::fprintf(stderr, "%s\n", qPrintable(msg));
    });
    QApplication app(argc, argv);
    QCoreApplication::setOrganizationName(QStringLiteral("ParaLensBench"));
    paralens::MainWindow window;
    window.resize(1600, 1000);
    window.show();
    if (!QTest::qWaitForWindowExposed(&window))
        return 1;
    QSlider* tp = window.controlPanel()->slider(paralens::ControlPanel::Tp)->slider();
    tp->setFocus();

    const bool detail = !qEnvironmentVariableIsEmpty("PARALENS_BENCH_DETAIL");
    constexpr int kWarmup = 10, kTicks = 200;
    std::vector<double> ms;
    ms.reserve(kTicks);
    for (int i = 0; i < kWarmup + kTicks; ++i) {
        QElapsedTimer timer;
        timer.start();
        QTest::keyClick(tp, i % 2 == 0 ? Qt::Key_Left : Qt::Key_Right); // TP 8 <-> 4
        const double tKey = timer.nsecsElapsed() / 1e6;
        window.updateNow();
        const double tUpdate = timer.nsecsElapsed() / 1e6;
        const QPixmap shot = window.grab();
        const double elapsed = timer.nsecsElapsed() / 1e6;
        if (detail && i >= kWarmup)
            std::fprintf(stderr, "key %.2f update %.2f grab %.2f\n", tKey, tUpdate - tKey,
                         elapsed - tUpdate);
        if (shot.isNull())
            return 1;
        if (i >= kWarmup)
            ms.push_back(elapsed);
        // Outside the timing: let the superseded background evaluation finish and be dropped.
        QTest::qWaitFor([&] { return !window.evaluator()->isBusy(); }, 1000);
    }
    std::sort(ms.begin(), ms.end());
    const double median = ms[ms.size() / 2];
    const double p95 = ms[std::min(ms.size() - 1, std::size_t(ms.size() * 0.95))];
    std::printf(
        "{\"bench\":\"ui_update\",\"case\":\"default\",\"median_ms\":%.2f,\"p95_ms\":%.2f}\n",
        median, p95);
    return 0;
}
