// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/autosave.h"
#include "app/document.h"
#include "core/error.h"
#include "core/json_reader.h"
#include "core/scenario_io.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLocale>
#include <QLockFile>
#include <QMessageBox>
#include <QPushButton>
#include <QRandomGenerator>
#include <QSaveFile>
#include <QStandardPaths>
#include <QTimer>

#include <nlohmann/json.hpp>

#include <algorithm>

namespace paralens {
namespace {

constexpr char kSuffix[] = ".autosave.json";
constexpr char kLockSuffix[] = ".autosave.lock";
constexpr int kFormatVersion = 1;

/// The lock file that guards an autosave file.
QString lockFor(const QString& file)
{
    QString stem = file;
    stem.chop(int(sizeof kSuffix) - 1);
    return stem + QLatin1String(kLockSuffix);
}

/// A lock on `file`'s lock file, or nullptr when a running process holds it. A lock left by
/// a process that is gone counts as free (QLockFile checks the owner's PID and name); age
/// alone never does, so a long-running instance keeps its file.
std::unique_ptr<QLockFile> tryTake(const QString& file)
{
    auto lock = std::make_unique<QLockFile>(lockFor(file));
    lock->setStaleLockTime(0);
    if (!lock->tryLock(0))
        return nullptr;
    return lock;
}

/// Autosave files in `dir`, newest first by modification time.
QStringList autosaveFiles(const QString& dir)
{
    QStringList out;
    const QFileInfoList infos = QDir(dir).entryInfoList(
        {QStringLiteral("*") + QLatin1String(kSuffix)}, QDir::Files, QDir::Time);
    for (const QFileInfo& info : infos)
        out << info.absoluteFilePath();
    return out;
}

} // namespace

Autosave::Autosave(Document* doc, const PresetLibrary& presets, QObject* parent)
    : QObject(parent), m_doc(doc), m_presets(presets), m_dir(defaultDirectory()),
      m_id(QStringLiteral("%1-%2")
               .arg(QCoreApplication::applicationPid())
               .arg(QRandomGenerator::global()->generate(), 8, 16, QLatin1Char('0'))),
      m_timer(new QTimer(this))
{
    m_timer->setSingleShot(true);
    connect(m_timer, &QTimer::timeout, this, &Autosave::writeNow);
    connect(m_doc, &Document::scenarioChanged, this, &Autosave::schedule);
    connect(m_doc, &Document::modifiedChanged, this, [this](bool modified) {
        if (modified)
            schedule();
        else
            discard(); // saved, undone to the saved state, or reset by New/Open
    });
}

Autosave::~Autosave() = default; // m_lock unlocks; the file (if any) stays for recovery

QString Autosave::defaultDirectory()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) +
           QStringLiteral("/autosave");
}

void Autosave::setDirectory(const QString& dir)
{
    discard();
    m_dir = dir;
}

QString Autosave::fileName() const
{
    return QDir(m_dir).filePath(m_id + QLatin1String(kSuffix));
}

bool Autosave::isPending() const
{
    return m_timer->isActive();
}

void Autosave::schedule()
{
    if (!m_doc->isModified())
        return;
    // Debounced: `interval` after the last edit, but never more than 2·interval after the
    // first unsaved one, so a long editing session is still saved.
    if (!m_timer->isActive())
        m_firstPending.start();
    const qint64 left = 2LL * m_intervalMs - m_firstPending.elapsed();
    m_timer->start(int(std::clamp<qint64>(left, 0, m_intervalMs)));
}

bool Autosave::acquireLock()
{
    if (m_lock)
        return true;
    if (!QDir().mkpath(m_dir)) {
        m_lastError = tr("cannot create the folder %1").arg(m_dir);
        return false;
    }
    m_lock = tryTake(fileName());
    if (!m_lock) {
        m_lastError = tr("cannot lock %1").arg(lockFor(fileName()));
        return false;
    }
    return true;
}

bool Autosave::writeNow()
{
    m_timer->stop();
    if (!m_doc->isModified()) {
        discard();
        return true;
    }
    if (!acquireLock()) {
        qWarning("autosave: %s", qPrintable(m_lastError));
        return false;
    }
    nlohmann::json envelope = {
        {"paralens_autosave", kFormatVersion},
        {"original_path", m_doc->filePath().toStdString()},
        {"saved_at", QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs).toStdString()},
        {"pid", QCoreApplication::applicationPid()},
        {"scenario", scenarioToJson(m_doc->scenario())},
    };
    const std::string text = envelope.dump(2) + "\n";
    QSaveFile file(fileName());
    if (!file.open(QIODevice::WriteOnly) ||
        file.write(text.data(), qint64(text.size())) != qint64(text.size()) || !file.commit()) {
        m_lastError = tr("cannot write %1: %2").arg(fileName(), file.errorString());
        qWarning("autosave: %s", qPrintable(m_lastError));
        return false;
    }
    m_lastError.clear();
    emit written(fileName());
    return true;
}

void Autosave::discard()
{
    m_timer->stop();
    if (!m_lock)
        return; // never written
    QFile::remove(fileName());
    m_lock.reset(); // unlocks and removes the lock file
}

AutosaveRecord Autosave::readRecord(const QString& file, const PresetLibrary& presets)
{
    const std::string source = file.toStdString();
    QFile f(file);
    if (f.size() > 4 * Document::kMaxFileBytes)
        throw InputError("", source + ": too large for an autosave");
    if (!f.open(QIODevice::ReadOnly))
        throw InputError("", source + ": cannot open the file");
    const QByteArray bytes = f.readAll();
    const nlohmann::json j =
        jsonio::parseText(std::string_view(bytes.constData(), std::size_t(bytes.size())), source);
    if (!j.is_object() || !j.contains("paralens_autosave") ||
        j["paralens_autosave"] != kFormatVersion || !j.contains("scenario"))
        throw InputError("", source + ": not a ParaLens autosave (version " +
                                 std::to_string(kFormatVersion) + ")");
    AutosaveRecord r;
    r.file = file;
    r.scenario = parseScenario(j["scenario"].dump(), source, presets);
    if (const auto it = j.find("original_path"); it != j.end() && it->is_string())
        r.originalPath = QString::fromStdString(it->get<std::string>());
    if (const auto it = j.find("saved_at"); it != j.end() && it->is_string())
        r.savedAt =
            QDateTime::fromString(QString::fromStdString(it->get<std::string>()), Qt::ISODate);
    if (!r.savedAt.isValid())
        r.savedAt = QFileInfo(file).lastModified().toUTC();
    return r;
}

QList<AutosaveRecord> Autosave::orphans(const QString& dir, const PresetLibrary& presets)
{
    QList<AutosaveRecord> out;
    for (const QString& file : autosaveFiles(dir)) {
        if (!tryTake(file)) // owned by a running instance; the probe's lock is released here
            continue;
        try {
            out << readRecord(file, presets);
        } catch (const std::exception& e) {
            qWarning("autosave: skipped %s", e.what());
        }
    }
    return out;
}

bool Autosave::offerRecovery(QWidget* parent)
{
    if (m_doc->isModified())
        return false;
    for (const QString& file : autosaveFiles(m_dir)) {
        if (file == fileName())
            continue;
        // Held while the user decides, so another instance starting now does not offer it too.
        std::unique_ptr<QLockFile> lock = tryTake(file);
        if (!lock)
            continue;
        AutosaveRecord record;
        try {
            record = readRecord(file, m_presets);
        } catch (const std::exception& e) {
            qWarning("autosave: cannot recover %s", e.what());
            continue;
        }
        // A file the user opened (named on the command line) is not replaced by other work.
        const QString open = m_doc->filePath();
        const bool beside =
            m_openBeside && !open.isEmpty() &&
            QFileInfo(open).absoluteFilePath() != QFileInfo(record.originalPath).absoluteFilePath();
        const Choice choice =
            m_prompt ? m_prompt(record) : askUser(record, beside ? open : QString(), parent);
        if (choice == Choice::Later)
            return false;
        if (choice == Choice::Discard) {
            QFile::remove(file);
            continue;
        }
        if (beside) {
            // The other window's autosave holds the work before the old copy goes.
            if (m_openBeside(record))
                QFile::remove(file);
            return true;
        }
        m_doc->restore(record.scenario, record.originalPath);
        // The recovered work is in this instance's autosave before the old copy goes.
        if (writeNow())
            QFile::remove(file);
        return true;
    }
    return false;
}

Autosave::Choice Autosave::askUser(const AutosaveRecord& record, const QString& openFile,
                                   QWidget* parent)
{
    const QString name = record.originalPath.isEmpty() ? tr("an untitled scenario")
                                                       : QFileInfo(record.originalPath).fileName();
    QMessageBox box(
        QMessageBox::Question, tr("Recover unsaved changes"),
        tr("ParaLens did not close normally. Unsaved changes to %1 were kept from "
           "%2.")
            .arg(name, QLocale().toString(record.savedAt.toLocalTime(), QLocale::ShortFormat)),
        QMessageBox::NoButton, parent);
    box.setObjectName(QStringLiteral("RecoveryBox"));
    box.setInformativeText(
        openFile.isEmpty()
            ? tr("Restore opens them as a modified document (save to keep them); Discard deletes "
                 "them; Ask Later keeps them for the next start.")
            : tr("Restore opens them in a second window (save to keep them); %1 stays open in "
                 "this one. Discard deletes them; Ask Later keeps them for the next start.")
                  .arg(QFileInfo(openFile).fileName()));
    if (!record.originalPath.isEmpty())
        box.setDetailedText(record.originalPath);
    QPushButton* restore = box.addButton(tr("&Restore"), QMessageBox::AcceptRole);
    QPushButton* discard = box.addButton(tr("&Discard"), QMessageBox::DestructiveRole);
    QPushButton* later = box.addButton(tr("Ask &Later"), QMessageBox::RejectRole);
    later->setToolTip(tr("Keep the changes on disk and ask again at the next start"));
    box.setDefaultButton(restore);
    box.setEscapeButton(later);
    box.exec();
    // Closing the box (Esc, the title bar) keeps the work: only an explicit Discard deletes it.
    if (box.clickedButton() == restore)
        return Choice::Restore;
    return box.clickedButton() == discard ? Choice::Discard : Choice::Later;
}

} // namespace paralens
