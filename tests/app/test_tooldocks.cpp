// SPDX-License-Identifier: GPL-3.0-or-later
// The Search, Calibration and Accuracy docks of the main window: the Tools menu shows them, a
// plan chosen in the search, a saved profile and a measured run opened from the accuracy chart
// change the document as undoable edits; the accuracy note reaches the headline.
#include "app/accuracypanel.h"
#include "app/calibrationpanel.h"
#include "app/document.h"
#include "app/export.h"
#include "app/fitjob.h"
#include "app/mainwindow.h"
#include "app/tooldocks.h"
#include "core/calibration.h"
#include "core/evaluate.h"
#include "core/gpu_family.h"
#include "core/kernel_time.h"
#include "core/scenario_io.h"
#include "widgets/accuracyview.h"
#include "widgets/calibrationview.h"
#include "widgets/headline.h"
#include "widgets/searchview.h"

#include <QDockWidget>
#include <QFile>
#include <QImage>
#include <QMenuBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include <nlohmann/json.hpp>

using namespace paralens;

namespace {

// A runs file of `scenario` measured `factors` times the model's prediction with `k`.
QString writeRuns(const QTemporaryDir& dir, const std::vector<Scenario>& scenarios,
                  const std::vector<double>& factors, const ModelConstants& k = {})
{
    nlohmann::json runs = nlohmann::json::array();
    for (std::size_t i = 0; i < scenarios.size(); ++i) {
        Estimate e;
        evaluate(scenarios[i], e, nullptr, k);
        runs.push_back({{"name", "run " + std::to_string(i)},
                        {"scenario", scenarioToJson(scenarios[i])},
                        {"measured", {{"step_seconds", e.time.step_seconds * factors[i]}}}});
    }
    const QString path = dir.filePath(QStringLiteral("r%1.paralens-runs.json").arg(runs.size()));
    QFile f(path);
    f.open(QIODevice::WriteOnly);
    f.write(QByteArray::fromStdString(nlohmann::json{{"runs", runs}}.dump()));
    return path;
}

Scenario withBatch(Scenario s, int batch)
{
    s.training.global_batch = batch;
    return s;
}

} // namespace

class TestToolDocks : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void toolsMenuTogglesTheDocks()
    {
        MainWindow w;
        w.show();
        QMenu* tools = nullptr;
        for (QAction* a : w.menuBar()->actions())
            if (a->text() == "&Tools")
                tools = a->menu();
        QVERIFY(tools);
        QCOMPARE(tools->actions().size(), 6); // and a separator, Fit advice, Plan map (PlanDocks)
        auto* search = w.findChild<QDockWidget*>("SearchDock");
        auto* calibration = w.findChild<QDockWidget*>("CalibrationDock");
        auto* accuracy = w.findChild<QDockWidget*>("AccuracyDock");
        QVERIFY(search && calibration && accuracy);
        QVERIFY(!search->isVisible()); // closed until asked for
        tools->actions().at(0)->trigger();
        QVERIFY(search->isVisible());
        QCOMPARE(tools->actions().at(2)->text(), QStringLiteral("Accuracy"));
        QVERIFY(!accuracy->isVisible());
        tools->actions().at(2)->trigger();
        QVERIFY(accuracy->isVisible());
    }

    void openedRunIsOneUndoableEdit()
    {
        MainWindow w;
        Document* doc = w.document();
        Scenario s = doc->scenario();
        s.calibration = "/profiles/cluster.json";
        doc->edit(s, "calibration");
        const Scenario before = doc->scenario();
        Scenario run = before;
        run.model.name = "measured model";
        run.model.layers = 40;
        run.parallel.pp = 4;
        run.parallel.dp = 2;
        run.calibration.clear();
        emit w.toolDocks()->accuracyPanel()->view()->runChosen(run, "a run");
        QCOMPARE(doc->scenario().model.name, std::string("measured model"));
        QCOMPARE(doc->scenario().parallel.pp, 4);
        QCOMPARE(doc->scenario().calibration, before.calibration); // the run names none
        doc->undoStack()->undo();
        QCOMPARE(doc->scenario().model.name, before.model.name);
        QCOMPARE(doc->scenario().parallel.pp, before.parallel.pp);
    }

    void loadedRunsGiveTheHeadlineItsAccuracy()
    {
        QTemporaryDir dir;
        MainWindow w;
        const Scenario s = w.document()->scenario();
        // Three runs of this model on this GPU, measured 10 % slower, 10 % faster and 5 %
        // slower than predicted: the mean absolute error is (10 + 10 + 5) / 3 = 8.3 %.
        const QString file =
            writeRuns(dir, {s, withBatch(s, 2 * s.training.global_batch), withBatch(s, 512)},
                      {1 / 1.1, 1 / 0.9, 1 / 1.05});
        AccuracyPanel* panel = w.toolDocks()->accuracyPanel();
        QSignalSpy ready(panel, &AccuracyPanel::reportReady);
        w.toolDocks()->openAccuracy({file});
        QVERIFY(ready.wait(20000));
        QCOMPARE(panel->view()->pointCount(), 3);
        QCOMPARE(w.headline()->accuracyNote(),
                 QStringLiteral("vs measured: ±8.3 % on 3 similar runs"));
        // Another model: no similar run.
        Scenario other = s;
        other.model.layers += 8;
        w.document()->edit(other, "layers");
        QCOMPARE(w.headline()->accuracyNote(), QStringLiteral("vs measured: no similar run"));
        // Without loaded runs the note falls back to the built-in published ones.
        panel->clear();
        QTRY_VERIFY_WITH_TIMEOUT(panel->hasPublishedReport(), 60000);
        QVERIFY2(w.headline()->accuracyNote().startsWith("vs published: "),
                 qPrintable(w.headline()->accuracyNote()));
    }

    void publishedRunsGiveTheHeadlineItsAccuracy()
    {
        MainWindow w;
        AccuracyPanel* panel = w.toolDocks()->accuracyPanel();
        QTRY_VERIFY_WITH_TIMEOUT(panel->hasPublishedReport(), 60000);
        // The built-in speed figures of a stack, counted here from the runs themselves (every
        // built-in run is predicted, test_reference_runs): one per measured figure that is not
        // a peak memory.
        const RunSet set = builtinReferenceRuns();
        auto figures = [&](Framework fw, std::string_view family) {
            int n = 0;
            for (const MeasuredRun& r : set.runs)
                if (r.scenario.training.framework == fw &&
                    gpuFamily(r.scenario.cluster.gpu.name) == family)
                    for (const Measurement& m : r.measured)
                        n += m.metric != RunMetric::PeakMemoryGib;
            return n;
        };
        // The default plan is Megatron-LM on H100.
        Scenario s = w.document()->scenario();
        QCOMPARE(gpuFamily(s.cluster.gpu.name), std::string_view("Hopper"));
        QVERIFY(s.training.framework == Framework::Megatron);
        const QString megatron = w.headline()->accuracyNote();
        const int nm = figures(Framework::Megatron, "Hopper");
        QVERIFY(nm > 10);
        QVERIFY2(megatron.startsWith("vs published: ") &&
                     megatron.contains(QStringLiteral(" on %1 runs (").arg(nm)),
                 qPrintable(megatron));
        // PyTorch FSDP on the same GPUs is another stack, with its own runs.
        s.training.framework = Framework::FSDP;
        w.document()->edit(s, "framework");
        const QString fsdp = w.headline()->accuracyNote();
        QVERIFY2(
            fsdp.contains(QStringLiteral(" on %1 runs (").arg(figures(Framework::FSDP, "Hopper"))),
            qPrintable(fsdp));
        // Runs of the user's own replace the published ones.
        QTemporaryDir dir;
        const QString file = writeRuns(dir, {s}, {1.0});
        QSignalSpy ready(panel, &AccuracyPanel::reportReady);
        w.toolDocks()->openAccuracy({file});
        QVERIFY(ready.wait(20000));
        QCOMPARE(w.headline()->accuracyNote(),
                 QStringLiteral("vs measured: ±0.0 % on 1 similar runs"));
    }

    void fitToMeasuredRunsShowsErrorBeforeAndAfter()
    {
        QTemporaryDir dir;
        MainWindow w;
        const Scenario s = w.document()->scenario();
        ModelConstants truth;
        truth.gemm_efficiency = 0.55;
        std::vector<Scenario> plans;
        for (int batch : {128, 256, 512, 1024, 2048, 4096})
            for (int mb : {1, 2}) {
                plans.push_back(withBatch(s, batch));
                plans.back().training.micro_batch = mb;
            }
        const QString file = writeRuns(dir, plans, std::vector<double>(plans.size(), 1.0), truth);
        CalibrationPanel* panel = w.toolDocks()->calibrationPanel();
        AccuracyPanel* accuracy = w.toolDocks()->accuracyPanel();
        QSignalSpy loaded(accuracy, &AccuracyPanel::reportReady);
        QVERIFY(accuracy->loadFiles({file}));
        QVERIFY(loaded.wait(20000));
        QVERIFY(accuracy->view()->report().summary.mape > 0.1); // the defaults are off

        QSignalSpy done(panel, &CalibrationPanel::fitFinished);
        QVERIFY(panel->fitToRuns({file}));
        QVERIFY(!panel->fitButton()->isEnabled()); // one fit at a time
        QVERIFY(done.wait(60000));
        QVERIFY2(done.at(0).at(0).toBool(), qPrintable(panel->errorText()));
        QVERIFY(panel->hasProfile() && panel->profile().model_constants);
        const auto& g = panel->profile().model_constants->gemm_efficiency;
        QCOMPARE(g.size(), size_t(1));
        // Runs that differ only in batch cannot tell GEMM efficiency from the other kernel
        // constants apart; what they pin down is the prediction (below), not each constant.
        QCOMPARE(g[0].gpu, s.cluster.gpu.name);
        QVERIFY2(panel->fitText().contains("before") && panel->fitText().contains("after"),
                 qPrintable(panel->fitText()));
        // The accuracy dock predicts again with the fitted constants.
        QVERIFY(loaded.wait(20000));
        QVERIFY2(accuracy->view()->report().summary.mape < 0.01,
                 qPrintable(QString::number(accuracy->view()->report().summary.mape)));
        QVERIFY(!panel->fitToRuns({dir.filePath("missing.paralens-runs.json")}));
        QVERIFY(!panel->errorText().isEmpty());
    }

    void accuracyNoteReachesTheHeadline()
    {
        MainWindow w;
        emit w.toolDocks()->accuracyPanel()->noteChanged("vs measured: ±5.0 % on 3 similar runs",
                                                         "tip");
        QCOMPARE(w.headline()->accuracyNote(),
                 QStringLiteral("vs measured: ±5.0 % on 3 similar runs"));
    }

    void dockChartsExportLikeTheViews()
    {
        QTemporaryDir dir;
        MainWindow w;
        const QList<ChartView*> charts = w.toolDocks()->charts();
        QCOMPARE(charts.size(), 3);
        QCOMPARE(charts.at(0), static_cast<ChartView*>(w.toolDocks()->searchView()));
        QCOMPARE(charts.at(1), static_cast<ChartView*>(w.toolDocks()->calibrationPanel()->view()));
        QCOMPARE(charts.at(2), static_cast<ChartView*>(w.toolDocks()->accuracyPanel()->view()));
        for (ChartView* c : charts) {
            const QString path = dir.filePath(c->chartId() + QStringLiteral(".png"));
            QString error;
            QVERIFY2(exportChart(c, path, ExportOptions{}, QStringLiteral("stamp"), &error),
                     qPrintable(error));
            QImage image(path);
            QCOMPARE(image.size(), ExportOptions{}.size);
        }
    }

    void chosenPlanIsOneUndoableEdit()
    {
        MainWindow w;
        Document* doc = w.document();
        const Scenario before = doc->scenario();
        Scenario chosen = before;
        chosen.parallel.pp = 8;
        chosen.parallel.dp = 1;
        chosen.parallel.virtual_stages = 1;
        chosen.parallel.schedule = Schedule::OneF1B;
        chosen.training.micro_batch = 2;
        chosen.model.name = "ignored"; // only the plan and batch split are taken
        emit w.toolDocks()->searchView()->planChosen(chosen);
        QCOMPARE(doc->scenario().parallel.pp, 8);
        QCOMPARE(doc->scenario().training.micro_batch, 2);
        QCOMPARE(doc->scenario().model.name, before.model.name);
        QVERIFY(doc->isModified());
        doc->undoStack()->undo();
        QCOMPARE(doc->scenario().parallel.pp, before.parallel.pp);
        QCOMPARE(doc->scenario().training.micro_batch, before.training.micro_batch);
    }

    void savedProfileBecomesTheCalibration()
    {
        QTemporaryDir dir;
        MainWindow w;
        Document* doc = w.document();
        QVERIFY(doc->scenario().calibration.empty());
        CalibrationPanel* panel = w.toolDocks()->calibrationPanel();
        emit panel->profileChanged(QString()); // an unsaved import names no file
        QVERIFY(doc->scenario().calibration.empty());
        const QString path = dir.filePath("cluster.json");
        emit panel->profileChanged(path);
        QCOMPARE(QString::fromStdString(doc->scenario().calibration), path);
        doc->undoStack()->undo();
        QVERIFY(doc->scenario().calibration.empty());
    }
};

QTEST_MAIN(TestToolDocks)
#include "test_tooldocks.moc"
