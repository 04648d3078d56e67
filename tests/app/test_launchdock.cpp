// SPDX-License-Identifier: GPL-3.0-or-later
// The Launch dock of the main window: it shows the current plan's launch configuration for
// the chosen framework, follows every edit, names what the framework cannot express, copies
// and saves the shown file, and File ▸ Import Launch Config… reads a file back into the
// document as one undoable edit.
#include "app/document.h"
#include "app/launchdock.h"
#include "app/mainwindow.h"
#include "core/launch_config.h"
#include "core/scenario_io.h"

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDockWidget>
#include <QFile>
#include <QLabel>
#include <QMenuBar>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

using namespace paralens;

class TestLaunchDock : public QObject
{
    Q_OBJECT
private slots:
    void menusOfferTheDockAndTheImport()
    {
        MainWindow w;
        bool import = false, toggle = false;
        for (QAction* menu : w.menuBar()->actions())
            for (QAction* a : menu->menu()->actions()) {
                import |= a == w.launchDock()->importAction();
                toggle |= a == w.launchDock()->dock()->toggleViewAction();
            }
        QVERIFY(import);
        QVERIFY(toggle);
    }

    // The default scenario is the Llama 3 70B example plan: tp 8, pp 4 × 5 chunks, dp 2.
    void showsThePlanAndFollowsEdits()
    {
        MainWindow w;
        LaunchDock* d = w.launchDock();
        QVERIFY(d->framework() == LaunchFramework::Megatron);
        QVERIFY(d->shownText().contains("--tensor-model-parallel-size 8 "));
        QVERIFY(d->shownText().contains("--num-virtual-stages-per-pipeline-rank 5 "));

        Scenario s = w.document()->scenario();
        s.parallel.tp = 4;
        s.parallel.dp = 4;
        w.document()->edit(s, "tp");
        QVERIFY(d->shownText().contains("--tensor-model-parallel-size 4 "));

        d->setFramework(LaunchFramework::Torchtitan);
        QVERIFY(d->shownText().contains("tensor_parallel_degree = 4\n"));
        auto* warnings = d->dock()->findChild<QLabel*>();
        QVERIFY(warnings);
        QVERIFY(warnings->text().contains("zero1_unsupported")); // named in the dock too

        d->setFramework(LaunchFramework::DeepSpeed);
        auto* files = d->dock()->findChildren<QComboBox*>().at(1);
        QCOMPARE(files->count(), 2); // ds_config.json and launch.sh
        QVERIFY(d->shownText().startsWith("{"));
        files->setCurrentIndex(1);
        QVERIFY(d->shownText().contains("deepspeed --num_nodes 8 --num_gpus 8"));
    }

    void copySaveAndImportRoundTrip()
    {
        MainWindow w;
        LaunchDock* d = w.launchDock();
        d->copy();
        QCOMPARE(QApplication::clipboard()->text(), d->shownText());

        QTemporaryDir dir;
        const QString path = dir.filePath("launch.sh");
        QString error;
        QVERIFY2(d->saveTo(path, &error), qPrintable(error));
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(QString::fromUtf8(f.readAll()), d->shownText());
        QVERIFY(!d->saveTo(dir.filePath("no/such/dir/x.sh"), &error));
        QVERIFY(!error.isEmpty());

        // Change the plan, then import the saved file: back to the saved plan, one undo step.
        const Scenario saved = w.document()->scenario();
        Scenario other = saved;
        other.training.global_batch = 256;
        w.document()->edit(other, "batch");
        const int steps = w.document()->undoStack()->count();
        QVERIFY2(d->importFile(path, &error), qPrintable(error));
        QVERIFY2(w.document()->scenario() == saved,
                 scenarioToText(w.document()->scenario()).c_str());
        QCOMPARE(w.document()->undoStack()->count(), steps + 1);

        QFile bad(dir.filePath("bad.toml"));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("[model]\nname = \"llama3\"\nflavor = \"8B\"\n[parallelism]\n"
                  "tensor_parallel_degree = \"x\"\n");
        bad.close();
        QVERIFY(!d->importFile(bad.fileName(), &error));
        QVERIFY2(error.contains("bad.toml:5"), qPrintable(error));
    }
};

QTEST_MAIN(TestLaunchDock)
#include "test_launchdock.moc"
