// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/import_model_action.h"

#include "app/document.h"
#include "app/import_model.h"
#include "app/user_presets.h"
#include "core/error.h"
#include "core/input_file.h"
#include "core/params.h"

#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>

namespace paralens {

ModelImportAction::ModelImportAction(QWidget* window, Document* doc, QMenu* fileMenu)
    : QObject(window), m_window(window), m_doc(doc)
{
    QAction* a = fileMenu->addAction(tr("Import &Model (config.json)…"), this,
                                     &ModelImportAction::openDialog);
    a->setObjectName(QStringLiteral("ImportModelAction"));
}

void ModelImportAction::openDialog()
{
    const QString path =
        QFileDialog::getOpenFileName(m_window, tr("Import Hugging Face Model"), QString(),
                                     tr("Model config (config.json *.json);;All files (*)"));
    if (!path.isEmpty())
        importFile(path);
}

bool ModelImportAction::isModelConfig(const QString& path)
{
    if (QFileInfo(path).fileName() == QLatin1String("config.json"))
        return true;
    try { // a small read: configs are KiB, and anything over the limit is not one
        return looksLikeHfConfig(
            readInputFile(path.toStdString(), kMaxHfConfigFileBytes, "file", "file"));
    } catch (const InputError&) {
        return false;
    }
}

bool ModelImportAction::importFile(const QString& path)
{
    const PresetLibrary& lib = m_doc->presets();
    const QString folder = userPresetFolder();
    ModelImport m;
    try {
        const HfImport first = importHfConfigFile(path.toStdString());
        m = importModelPreset(path, freePresetId(defaultPresetId(first, path), lib, folder), lib);
    } catch (const InputError& e) {
        emit failed(tr("Cannot import model"), QString::fromStdString(e.what()));
        return false;
    }
    const QString target = QDir(folder).filePath(m.id + QStringLiteral(".json"));
    if (const QString e = writePresetFile(target, m.text); !e.isEmpty()) {
        emit failed(tr("Cannot import model"), target + ": " + e);
        return false;
    }
    m_lastPath = target;
    // The window's preset library is fixed for the session: the scenario takes the model as its
    // own spec, and the preset file serves the next start and --presets.
    Scenario s = m_doc->scenario();
    s.model = m.imported.model;
    s.model_id.clear();
    m_doc->edit(s, QStringLiteral("model"));

    const ModelSpec& spec = m.imported.model;
    QString text =
        tr("%1 (%2): %3 B parameters")
            .arg(QString::fromStdString(spec.name), QString::fromStdString(m.imported.family))
            .arg(totalParameters(spec) / 1e9, 0, 'f', 2);
    if (spec.isMoe())
        text += tr(", %1 B active").arg(activeParameters(spec) / 1e9, 0, 'f', 2);
    if (spec.mtp_layers > 0)
        text += tr(", + %1 B in %n multi-token-prediction module(s)", nullptr, spec.mtp_layers)
                    .arg(mtpParameters(spec) / 1e9, 0, 'f', 2);
    text += tr(".\nSaved as preset '%1' in %2.").arg(m.id, QDir::toNativeSeparators(target));
    QStringList notes;
    for (const auto& n : m.imported.notes)
        notes << QString::fromStdString(n);
    auto* box = new QMessageBox(QMessageBox::Information, tr("Model imported"), text,
                                QMessageBox::Ok, m_window);
    box->setObjectName(QStringLiteral("ModelImportedBox"));
    if (!notes.isEmpty())
        box->setDetailedText(tr("What was assumed or left out:\n") + notes.join("\n"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open(); // non-modal for the event loop: the imported model shows at once
    return true;
}

} // namespace paralens
