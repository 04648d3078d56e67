// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/scenario.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QObject>
#include <QString>

#include <functional>
#include <memory>

class QLockFile;
class QTimer;
class QWidget;

namespace paralens {

class Document;
class PresetLibrary;

/// Work found in an autosave that no running window owns (its session crashed or was killed).
struct AutosaveRecord
{
    QString file;         ///< the autosave file itself
    QString originalPath; ///< the document's own file; "" for an Untitled document
    QDateTime savedAt;    ///< when it was written (UTC)
    Scenario scenario;
};

/// Keeps a copy of a document's unsaved changes on disk so a crash loses at most the last
/// few seconds of work, and offers that copy back at the next start.
///
/// Each instance writes one file, AppLocalDataLocation/autosave/<pid>-<random>.autosave.json
/// (written atomically with QSaveFile; it records the original file path next to the
/// scenario), `interval` after the last edit, and no later than 2·interval after the first
/// unsaved one while edits keep coming. A QLockFile next to it, held while the instance lives,
/// marks it as owned, so several windows and instances never write or recover each other's
/// files: only an autosave whose lock is free or stale (its process is gone) is offered.
/// The file is removed when the document becomes unmodified (saved, undone back to the
/// saved state, discarded by New/Open) and on discard() (a clean close).
class Autosave : public QObject
{
    Q_OBJECT
public:
    enum class Choice
    {
        Restore, ///< load it into the document
        Discard, ///< delete it
        Later    ///< keep it for the next start (Ask Later, Esc, the box closed)
    };
    /// Asks the user what to do with recovered work; tests inject their own answer.
    using Prompt = std::function<Choice(const AutosaveRecord&)>;

    static constexpr int kDefaultIntervalMs = 30'000;

    /// Watches `doc`; `presets` resolves the preset ids of recovered scenarios. Both must
    /// outlive this object. Nothing is written until the document is modified.
    Autosave(Document* doc, const PresetLibrary& presets, QObject* parent = nullptr);
    /// Releases the lock. A file still present (unsaved work, no clean close) stays, so the
    /// next start offers it.
    ~Autosave() override;

    /// AppLocalDataLocation/autosave.
    static QString defaultDirectory();
    /// Folder of the autosaves (before the first write; tests).
    void setDirectory(const QString& dir);
    QString directory() const { return m_dir; }
    /// Quiet time after the last edit before writing (30 s by default).
    void setIntervalMs(int ms) { m_intervalMs = ms; }
    int intervalMs() const { return m_intervalMs; }
    /// This instance's autosave file (it exists only while there is unsaved work).
    QString fileName() const;
    /// Whether a write is scheduled.
    bool isPending() const;

    /// Writes the unsaved work now (removes the file when there is none). Returns false and
    /// sets lastError() when it cannot be written; the document is untouched either way.
    bool writeNow();
    /// Removes this instance's autosave (a clean close, or the user discarded the changes).
    void discard();
    QString lastError() const { return m_lastError; }

    /// Replaces the question shown by offerRecovery() (tests; nullptr: the message box).
    void setPrompt(Prompt prompt) { m_prompt = std::move(prompt); }
    /// Opens recovered work beside the document (a second window); returns whether it did.
    using OpenBeside = std::function<bool(const AutosaveRecord&)>;
    /// Used by Restore when the document holds another file (one named on the command line):
    /// both stay open rather than the recovered work silently replacing it.
    void setOpenBeside(OpenBeside open) { m_openBeside = std::move(open); }
    /// At start-up: finds autosaves that no running instance owns and asks about the newest
    /// first. Restore loads it into the document as modified work for its original file and
    /// stops, or, when the document already holds another file and an OpenBeside is set,
    /// opens it beside the document through that; Discard deletes it and asks about the next; Later
    /// keeps it for the next start and stops. Unreadable files are left alone. Does nothing while
    /// the document has unsaved changes of its own. Returns whether work was restored.
    bool offerRecovery(QWidget* parent = nullptr);
    /// The autosaves in `dir` that no running instance owns, newest first (changes nothing but
    /// stale lock files). Unreadable ones are skipped.
    static QList<AutosaveRecord> orphans(const QString& dir, const PresetLibrary& presets);
    /// Reads one autosave file; throws InputError naming the file when it is not one.
    static AutosaveRecord readRecord(const QString& file, const PresetLibrary& presets);

signals:
    /// An autosave was written (the file name).
    void written(const QString& file);

private:
    void schedule();
    bool acquireLock();
    static Choice askUser(const AutosaveRecord& record, const QString& openFile, QWidget* parent);

    Document* m_doc;
    const PresetLibrary& m_presets;
    QString m_dir;
    QString m_id;
    int m_intervalMs = kDefaultIntervalMs;
    QTimer* m_timer = nullptr;
    QElapsedTimer m_firstPending;
    std::unique_ptr<QLockFile> m_lock;
    QString m_lastError;
    Prompt m_prompt;
    OpenBeside m_openBeside;
};

} // namespace paralens
