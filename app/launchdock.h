// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/launch_config.h"

#include <QObject>

class QAction;
class QComboBox;
class QDockWidget;
class QLabel;
class QMainWindow;
class QPlainTextEdit;
class QPushButton;

namespace paralens {

class Document;

/// The Launch dock: the current plan's launch configuration for the chosen framework
/// (core/launch_config.h), rewritten on every edit of the document, with its warnings, Copy
/// and Save; and File ▸ Import Launch Config…, which reads a launch file into the document as
/// one undoable edit.
class LaunchDock : public QObject
{
    Q_OBJECT
public:
    LaunchDock(QMainWindow* window, Document* doc);

    QDockWidget* dock() const { return m_dock; }
    /// File ▸ Import Launch Config… (opens a file dialog, then importFile()).
    QAction* importAction() const { return m_import; }

    void setFramework(LaunchFramework f);
    LaunchFramework framework() const;
    /// The configuration shown now, and the text of the file chosen in the dock.
    const LaunchConfig& config() const { return m_config; }
    QString shownText() const;
    /// Copies the shown file to the clipboard.
    void copy();
    /// Writes the shown file to `path` atomically; false with *error set on failure.
    bool saveTo(const QString& path, QString* error);
    /// Reads a launch file into the document (one undo step); false with *error on failure.
    bool importFile(const QString& path, QString* error);

signals:
    /// An import or save failed; the message names the file and the problem.
    void failed(const QString& message);

private:
    void rebuild();
    void showFile();
    void saveDialog();
    void importDialog();

    Document* m_doc;
    QDockWidget* m_dock;
    QComboBox* m_framework;
    QComboBox* m_file;
    QLabel* m_warnings;
    QPlainTextEdit* m_text;
    QPushButton* m_copy;
    QPushButton* m_save;
    QAction* m_import;
    LaunchConfig m_config;
};

} // namespace paralens
