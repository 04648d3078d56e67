// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/scenario.h"

#include <QObject>
#include <QString>

class QUndoStack;

namespace paralens {

class PresetLibrary;

/// The scenario being edited: the Scenario itself, its file, its undo history and whether it
/// differs from the file. Every edit goes through the undo stack; the edits of one slider drag
/// merge into one step.
class Document : public QObject
{
    Q_OBJECT
public:
    /// `presets` resolves preset ids in files; it must outlive the document.
    Document(const Scenario& initial, const PresetLibrary& presets, QObject* parent = nullptr);

    const Scenario& scenario() const { return m_scenario; }
    const PresetLibrary& presets() const { return m_presets; }
    QUndoStack* undoStack() const { return m_undo; }
    QString filePath() const { return m_path; }
    /// File name for the title bar ("Untitled" before the first save).
    QString displayName() const;
    bool isModified() const;

    /// Records an edit as one undo step. Edits with the same field and the same mergeKey > 0
    /// (one slider drag) merge into a single step.
    void edit(const Scenario& s, const QString& field, int mergeKey = 0);

    /// Replaces the document (New, Open): clears the history and marks it unmodified.
    void reset(const Scenario& s, const QString& path = QString());

    /// Replaces the document with recovered work (an autosave): like reset(), but the result
    /// counts as modified, so it is saved to `path` only when the user saves.
    void restore(const Scenario& s, const QString& path);

    /// Loads a `.paralens.json` file. On failure returns false, sets `error` and leaves the
    /// document as it was. A file above kMaxFileBytes, a folder or a device is refused by
    /// its size or type before anything is read.
    bool load(const QString& path, QString* error);

    /// Largest scenario file load() reads: 1 MiB, the core's kMaxScenarioFileBytes
    /// (docs/limits.md); real scenarios are 1-5 KiB.
    static constexpr qint64 kMaxFileBytes = qint64(1) << 20;
    /// Writes the scenario atomically (QSaveFile) and marks the document clean.
    bool save(const QString& path, QString* error);

    /// Applies a scenario without recording it; used by the undo commands.
    void apply(const Scenario& s);

signals:
    void scenarioChanged(const paralens::Scenario& scenario);
    void modifiedChanged(bool modified);
    void filePathChanged(const QString& path);

private:
    Scenario m_scenario;
    const PresetLibrary& m_presets;
    QString m_path;
    QUndoStack* m_undo = nullptr;
};

} // namespace paralens
