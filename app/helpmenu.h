// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include <QObject>

class QDialog;
class QMenu;
class QWidget;

namespace paralens {

/// Help ▸ User Guide (F1: docs/user-guide.md, built in as a resource, in a dialog), What's
/// This? (Shift+F1), About ParaLens and About Qt.
class HelpMenu : public QObject
{
    Q_OBJECT
public:
    HelpMenu(QWidget* window, QMenu* menu);

    /// Shows the user guide (one dialog, raised when already open); returns it.
    QDialog* showGuide();
    /// The guide's text (Markdown) as built into the program.
    static QString guideText();

private:
    void showAbout();

    QWidget* m_window;
    QDialog* m_guide = nullptr;
};

/// Whether `w` is a control a user works with, not a part of another widget (a scroll bar,
/// a table's corner button, Qt's menu and toolbar overflow buttons).
bool isUserControl(const QWidget* w);

/// Gives every control under `root` that has no "What's This?" text one: its tool tip, or
/// else its accessible name. Run after the controls are built.
void fillWhatsThis(QWidget* root);

} // namespace paralens
