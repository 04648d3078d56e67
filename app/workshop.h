// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/plan.h"

#include <QByteArray>
#include <QFont>
#include <QList>
#include <QObject>
#include <QPalette>
#include <QPointer>

class QAction;
class QLabel;
class QMainWindow;
class QSplitter;
class QToolBar;
class QVariantAnimation;

namespace paralens {

class Document;
class GanttView;

/// The arrangement of a window that presentation mode and a tour's emphasis change and put
/// back: the docks and toolbars (QMainWindow::saveState), the sizes of every splitter in the
/// window and which of their panes are hidden, and whether the central widget and each of
/// `widgets` are hidden.
class LayoutSnapshot
{
public:
    static LayoutSnapshot take(QMainWindow* window, const QList<QWidget*>& widgets = {});
    /// Puts the window back as taken (a splitter or widget deleted since is skipped).
    void restore(QMainWindow* window) const;
    bool isEmpty() const { return m_state.isEmpty(); }

private:
    struct Splitter
    {
        QPointer<QSplitter> splitter;
        QList<int> sizes;
        QList<bool> hidden;
    };
    QByteArray m_state;
    QList<Splitter> m_splitters;
    QList<QPair<QPointer<QWidget>, bool>> m_widgets;
};

/// Lays `window` out now and gives it `size` back when a passing state of its layout (a pane
/// shown before another was hidden) grew it: the window's minimum size only ever pushes it
/// bigger. A window whose minimum no longer fits `size` keeps that minimum; a maximised or
/// full-screen one is only laid out.
void keepWindowSize(QMainWindow* window, const QSize& size);

/// Workshop mode (View ▸ Presentation): large fonts and high contrast for a projector, a
/// play / step control that moves a time cursor through the schedule (the memory lane and the
/// in-flight counts follow), and one-click schedule buttons that keep the Gantt's time range
/// so the bubble visibly shrinks. Schedule switches are document edits (undoable).
class Workshop : public QObject
{
    Q_OBJECT
public:
    Workshop(QMainWindow* window, Document* doc, GanttView* gantt);

    QToolBar* toolBar() const { return m_bar; }
    QAction* presentationAction() const { return m_presentation; }
    /// Esc: leaves presentation mode (enabled only while presenting).
    QAction* leaveAction() const { return m_leave; }
    QAction* playAction() const { return m_play; }
    bool isPresenting() const;
    void setPresentation(bool on);

    /// Starts (or resumes) the cursor animation from its position to the pipeline's end.
    void play();
    void pause();
    bool isPlaying() const;
    /// Moves the cursor to the next op start on any stage.
    void step();
    /// Rewinds the cursor to the step's start.
    void rewind();
    /// Switches the document's schedule (v made consistent by withSchedule, as the control
    /// panel does) without changing the Gantt's time range.
    void switchSchedule(Schedule s);
    /// Seconds of animation per whole pipeline step.
    void setDurationSeconds(double seconds) { m_durationSeconds = seconds; }
    QVariantAnimation* animation() const { return m_anim; }
    /// Widgets hidden while presenting, so the Gantt and the memory stacks fill the screen.
    /// Leaving puts back the whole layout as it was: docks, toolbars, splitter sizes and
    /// these widgets (what a tour showed while presenting included).
    void setHiddenWhilePresenting(const QList<QWidget*>& widgets) { m_hide = widgets; }

private:
    double pipelineSeconds() const;

    QMainWindow* m_window;
    Document* m_doc;
    GanttView* m_gantt;
    QToolBar* m_bar = nullptr;
    QAction* m_presentation = nullptr;
    QAction* m_leave = nullptr;
    QAction* m_play = nullptr;
    QVariantAnimation* m_anim = nullptr;
    double m_durationSeconds = 12;
    QFont m_savedFont;
    QPalette m_savedPalette;
    bool m_active = false;                              // the presentation layout is applied
    bool m_hadOwnFont = false, m_hadOwnPalette = false; // set on the window, not inherited
    QList<QWidget*> m_hide;
    LayoutSnapshot m_saved; ///< the layout before presenting, restored on leaving
};

} // namespace paralens
