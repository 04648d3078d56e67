// SPDX-License-Identifier: GPL-3.0-or-later
// File ▸ Import Model… and a dropped config.json: the preset lands in the user preset folder
// (and loads there), the document takes the model in one undoable edit, the views show what the
// core computes for it, and a bad config is a shown error that leaves the document alone.
#include "app/document.h"
#include "app/import_model_action.h"
#include "app/mainwindow.h"
#include "app/user_presets.h"
#include "core/evaluate.h"
#include "core/presets.h"
#include "core/spec_io.h"
#include "core/units.h"
#include "widgets/memoryview.h"

#include <QAction>
#include <QDir>
#include <QDropEvent>
#include <QFile>
#include <QMessageBox>
#include <QMimeData>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

using namespace paralens;

class TestImportModelAction : public QObject
{
    Q_OBJECT

    static bool settle(MainWindow& w)
    {
        return QTest::qWaitFor([&] {
            return !w.evaluator()->isBusy() && w.shown().generation == w.evaluator()->generation();
        });
    }

    static void drop(MainWindow& w, const QString& path)
    {
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(path)});
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton,
                              Qt::NoModifier);
        QCoreApplication::sendEvent(&w, &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent ev(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(&w, &ev);
    }

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("ParaLensTest"));
        QCoreApplication::setApplicationName(QStringLiteral("test_import_model_action"));
        QDir(userPresetFolder()).removeRecursively();
    }
    void cleanupTestCase() { QDir(userPresetFolder()).removeRecursively(); }

    void menuHasTheAction()
    {
        MainWindow w;
        QVERIFY(w.findChild<QAction*>(QStringLiteral("ImportModelAction")));
    }

    // A dropped DeepSeek-V3 config.json (named for the model, so recognised by its content):
    // the id deepseek-v3 is built in, so the preset is saved as deepseek-v3-2.
    void dropImportsTheModel()
    {
        MainWindow w;
        QVERIFY(settle(w));
        const Scenario before = w.document()->scenario();
        drop(w, QStringLiteral(PARALENS_SOURCE_DIR "/tests/data/hf/deepseek-v3.json"));
        const Scenario& s = w.document()->scenario();
        QVERIFY(s.model_id.empty());
        ModelSpec expected = *PresetLibrary::builtin().model("deepseek-v3");
        expected.name = s.model.name;
        QVERIFY(s.model == expected);
        QCOMPARE(w.modelImport()->lastPresetPath(),
                 QDir(userPresetFolder()).filePath("deepseek-v3-2.json"));
        PresetLibrary lib;
        lib.addFolder(userPresetFolder().toStdString());
        QVERIFY(lib.model("deepseek-v3-2"));
        QVERIFY(*lib.model("deepseek-v3-2") == s.model);
        auto* box = w.findChild<QMessageBox*>(QStringLiteral("ModelImportedBox"));
        QVERIFY(box);
        QVERIFY(box->text().contains("671.03 B parameters, 37.55 B active"));
        // The MTP module is modelled (mtp_layers 1), counted apart from the 671 B, not a note.
        QVERIFY(box->text().contains("+ 11.61 B in 1 multi-token-prediction module(s)"));
        QVERIFY(!box->detailedText().contains("num_nextn_predict_layers"));
        box->close();

        // The views show the core's memory for the imported model.
        QVERIFY(settle(w));
        const Estimate e = evaluate(s);
        QCOMPARE(w.memoryView()->stageCount(), int(e.stages.size()));
        for (int i = 0; i < w.memoryView()->stageCount(); ++i)
            QCOMPARE(w.memoryView()->segmentGiB(MemoryView::Activations, i),
                     e.stages[std::size_t(i)].activations / units::kGiB);

        w.document()->undoStack()->undo(); // one edit
        QVERIFY(w.document()->scenario().model == before.model);
    }

    void importAgainTakesTheNextFreeId()
    {
        MainWindow w;
        QVERIFY(w.modelImport()->importFile(
            QStringLiteral(PARALENS_SOURCE_DIR "/tests/data/hf/deepseek-v3.json")));
        QCOMPARE(QFileInfo(w.modelImport()->lastPresetPath()).fileName(),
                 QString("deepseek-v3-3.json"));
    }

    void badConfigIsAShownError()
    {
        QTemporaryDir dir;
        QFile f(dir.filePath("config.json"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": -1})");
        f.close();
        MainWindow w;
        const ModelSpec before = w.document()->scenario().model;
        QSignalSpy errors(&w, &MainWindow::errorShown);
        drop(w, f.fileName());
        QCOMPARE(errors.count(), 1);
        QVERIFY(
            errors.at(0).at(0).toString().contains("num_hidden_layers: -1 is below the minimum 1"));
        QVERIFY(w.findChild<QMessageBox*>(QStringLiteral("ErrorBox")));
        QVERIFY(w.document()->scenario().model == before);
    }

    void scenariosStillOpenByDrop()
    {
        QVERIFY(!ModelImportAction::isModelConfig(QStringLiteral(
            PARALENS_SOURCE_DIR "/resources/examples/mixtral-8x7b-32xh100.paralens.json")));
        QVERIFY(ModelImportAction::isModelConfig(
            QStringLiteral(PARALENS_SOURCE_DIR "/tests/data/hf/gemma-2-9b.json")));
    }
};

QTEST_MAIN(TestImportModelAction)
#include "test_import_model_action.moc"
