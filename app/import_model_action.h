// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include <QObject>
#include <QString>

class QMenu;
class QWidget;

namespace paralens {

class Document;

/// File ▸ Import Model… and a dropped config.json: the Hugging Face config becomes a model
/// preset in the user preset folder (available from the next start, and to --presets) and the
/// current scenario's model, under a free id.
class ModelImportAction : public QObject
{
    Q_OBJECT
public:
    /// Adds "Import Model…" to `fileMenu`; dialogs and messages are parented to `window`.
    ModelImportAction(QWidget* window, Document* doc, QMenu* fileMenu);

    /// Imports the config.json at `path`: writes the preset, sets the document's model, and
    /// shows what was assumed (non-modal). On failure emits failed() and returns false.
    bool importFile(const QString& path);
    /// Whether a dropped file is a Hugging Face config.json rather than a scenario.
    static bool isModelConfig(const QString& path);
    /// Where the last import wrote its preset ("" before one).
    QString lastPresetPath() const { return m_lastPath; }

signals:
    void failed(const QString& title, const QString& message);

private:
    void openDialog();

    QWidget* m_window;
    Document* m_doc;
    QString m_lastPath;
};

} // namespace paralens
