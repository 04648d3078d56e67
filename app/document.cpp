// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/document.h"
#include "core/error.h"
#include "core/scenario_io.h"

#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QUndoCommand>
#include <QUndoStack>

namespace paralens {
namespace {

constexpr int kEditCommandId = 0x504c; // "PL"

/// One edit of the scenario: the state before and after. Commands from the same slider drag
/// (same field, same merge key) merge, so the drag undoes in one step.
class EditCommand : public QUndoCommand
{
public:
    EditCommand(Document* doc, Scenario before, Scenario after, QString field, int mergeKey)
        : m_doc(doc), m_before(std::move(before)), m_after(std::move(after)),
          m_field(std::move(field)), m_mergeKey(mergeKey)
    {
        setText(QObject::tr("Change %1").arg(m_field));
    }
    void undo() override { m_doc->apply(m_before); }
    void redo() override { m_doc->apply(m_after); }
    int id() const override { return m_mergeKey > 0 ? kEditCommandId : -1; }
    bool mergeWith(const QUndoCommand* other) override
    {
        const auto* o = static_cast<const EditCommand*>(other);
        if (o->m_field != m_field || o->m_mergeKey != m_mergeKey)
            return false;
        m_after = o->m_after;
        return true;
    }

private:
    Document* m_doc;
    Scenario m_before, m_after;
    QString m_field;
    int m_mergeKey;
};

} // namespace

Document::Document(const Scenario& initial, const PresetLibrary& presets, QObject* parent)
    : QObject(parent), m_scenario(initial), m_presets(presets), m_undo(new QUndoStack(this))
{
    connect(m_undo, &QUndoStack::cleanChanged, this,
            [this](bool clean) { emit modifiedChanged(!clean); });
}

QString Document::displayName() const
{
    return m_path.isEmpty() ? tr("Untitled") : QFileInfo(m_path).fileName();
}

bool Document::isModified() const
{
    return !m_undo->isClean();
}

void Document::edit(const Scenario& s, const QString& field, int mergeKey)
{
    m_undo->push(new EditCommand(this, m_scenario, s, field, mergeKey));
}

void Document::apply(const Scenario& s)
{
    m_scenario = s;
    emit scenarioChanged(m_scenario);
}

void Document::reset(const Scenario& s, const QString& path)
{
    m_undo->clear(); // emits cleanChanged, hence modifiedChanged, when it was modified
    m_path = path;
    emit filePathChanged(m_path);
    apply(s);
}

void Document::restore(const Scenario& s, const QString& path)
{
    reset(s, path);
    m_undo->resetClean(); // modified until saved, with no step to undo
}

bool Document::load(const QString& path, QString* error)
{
    // Refused by size or type before reading, so a huge or endless file (a 100 MB log opened
    // by mistake, /dev/zero) never stalls the GUI thread.
    const QFileInfo info(path);
    QString refusal;
    if (info.isDir())
        refusal = tr("%1: cannot open the file: it is a folder").arg(path);
    else if (info.exists() && !info.isFile())
        refusal = tr("%1: cannot open the file: it is not a regular file").arg(path);
    else if (info.size() > kMaxFileBytes)
        refusal = tr("%1: the file is %2 bytes, above the limit of %3 MiB (%4 bytes) for a "
                     "scenario")
                      .arg(path)
                      .arg(info.size())
                      .arg(kMaxFileBytes >> 20)
                      .arg(kMaxFileBytes);
    if (!refusal.isEmpty()) {
        if (error)
            *error = refusal;
        return false;
    }
    try {
        Scenario s = loadScenarioFile(path.toStdString(), m_presets);
        reset(s, path);
        return true;
    } catch (const InputError& e) {
        if (error)
            *error = QString::fromStdString(e.what());
    } catch (const std::exception& e) {
        if (error)
            *error = tr("%1: %2").arg(path, QString::fromStdString(e.what()));
    }
    return false;
}

bool Document::save(const QString& path, QString* error)
{
    QSaveFile file(path);
    const std::string text = scenarioToText(m_scenario);
    if (!file.open(QIODevice::WriteOnly) ||
        file.write(text.data(), static_cast<qint64>(text.size())) !=
            static_cast<qint64>(text.size()) ||
        !file.commit()) {
        if (error)
            *error = tr("Cannot write %1: %2").arg(path, file.errorString());
        return false;
    }
    m_path = path;
    emit filePathChanged(m_path);
    m_undo->setClean();
    return true;
}

} // namespace paralens
