// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/tour.h"

#include <QObject>
#include <QPointer>
#include <QString>

#include <vector>

class QAction;
class QDockWidget;
class QLabel;

namespace paralens {

class MainWindow;

/// A guided tour (docs/tour-format.md) in the window: File ▸ Open Tour… reads one, a caption
/// strip at the top shows "Step N of M", the step's title and its caption (filled from the
/// live model, in large type while presenting), and Next / Previous step through it: Page
/// Down / Page Up always, and while presenting also the arrow keys and the space bar (what
/// presenter remotes send). Each step is one document edit, so Undo goes back and the class can
/// explore from any step; the previous step is pinned as the compare baseline (ghosted).
class TourController : public QObject
{
    Q_OBJECT
public:
    explicit TourController(MainWindow* window);

    QAction* openAction() const { return m_open; }
    QAction* nextAction() const { return m_next; }
    QAction* previousAction() const { return m_previous; }

    /// Reads a tour file (or a bundled tour by id) and shows its first step; shows the error and
    /// returns false when it cannot be read or run.
    bool openTour(const QString& path);
    /// Shows an already parsed tour from its first step (InputError when a caption fails).
    void setTour(const Tour& tour);
    void closeTour();
    bool hasTour() const { return !m_tour.steps.empty(); }
    /// 0-based; -1 without a tour.
    int currentStep() const { return hasTour() ? m_index : -1; }
    int stepCount() const { return static_cast<int>(m_tour.steps.size()); }
    void goTo(int index);
    void next() { goTo(m_index + 1); }
    void previous() { goTo(m_index - 1); }

    QString counterText() const;
    QString captionText() const;

private:
    void openDialog();
    void updateStrip();
    void updateKeys();

    MainWindow* m_window;
    Tour m_tour;
    std::vector<TourStepResult> m_results;
    int m_index = 0;
    QAction* m_open = nullptr;
    QAction* m_next = nullptr;
    QAction* m_previous = nullptr;
    QAction* m_close = nullptr;
    QDockWidget* m_dock = nullptr;
    QLabel* m_counter = nullptr;
    QLabel* m_title = nullptr;
    QLabel* m_caption = nullptr;
    QPointer<QAction> m_borrowedSpace; ///< the workshop's Play, while the tour has Space
};

} // namespace paralens
