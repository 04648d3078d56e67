// SPDX-License-Identifier: GPL-3.0-or-later
// ui_update: one slider tick to every view repainted, offscreen at 1600x1000. A tick is the
// key press on the TP slider (panel, document, undo stack), the synchronous evaluation and
// replot of every chart, and a grab() of the whole window. Cases: the default scenario, and
// p = 64, m = 1024, v = 2 (262k ops in the Gantt; TP 8 <-> 4 halves m on every other tick);
// and the default with the plan map dock open.
#include "app/document.h"
#include "app/mainwindow.h"
#include "core/presets.h"
#include "core/scenario_io.h"
#include "widgets/controlpanel.h"
#include "widgets/planmapview.h"
#include "widgets/snapslider.h"

#include <QApplication>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QSlider>
#include <QTest>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace {

bool runCase(paralens::MainWindow& window, const char* name)
{
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
            return false;
        if (i >= kWarmup)
            ms.push_back(elapsed);
        // Outside the timing: let the superseded background evaluation finish and be dropped.
        (void)QTest::qWaitFor([&] { return !window.evaluator()->isBusy(); }, 1000);
    }
    std::sort(ms.begin(), ms.end());
    const double median = ms[ms.size() / 2];
    const double p95 = ms[std::min(ms.size() - 1, std::size_t(ms.size() * 0.95))];
    std::printf("{\"bench\":\"ui_update\",\"case\":\"%s\",\"median_ms\":%.2f,\"p95_ms\":%.2f}\n",
                name, median, p95);
    std::fflush(stdout);
    return true;
}

} // namespace

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
    if (!runCase(window, "default"))
        return 1;
    // PARALENS_BENCH_CASE=default stops here (to profile one case, e.g. under callgrind).
    if (qEnvironmentVariable("PARALENS_BENCH_CASE") == QLatin1String("default"))
        return 0;
    // The same with the plan map open: a TP tick only moves its outline (the map is kept).
    auto* mapDock = window.findChild<QDockWidget*>(QStringLiteral("PlanMapDock"));
    auto* map = window.findChild<paralens::PlanMapView*>();
    if (!mapDock || !map)
        return 1;
    mapDock->show();
    if (!QTest::qWaitFor([&] { return !map->isComputing(); }, 120000))
        return 1;
    if (!runCase(window, "default-planmap"))
        return 1;
    mapDock->hide();
    // p = 64, v = 2 needs 128 layers: llama3-70b's shape with 128 of them.
    paralens::Scenario big = paralens::defaultScenario();
    big.model_id.clear();
    big.model.layers = 128;
    big.model.name = "llama3-70b-128-layers";
    big.gpus = 512;
    big.parallel.tp = 8;
    big.parallel.pp = 64;
    big.parallel.dp = 1;
    big.parallel.virtual_stages = 2;
    big.parallel.schedule = paralens::Schedule::Interleaved1F1B;
    big.training.global_batch = 1024;
    window.document()->reset(big);
    window.updateNow();
    if (!runCase(window, "p64-m1024-v2"))
        return 1;
    return 0;
}
