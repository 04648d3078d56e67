// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "app/workshop.h"
#include "core/tour.h"

#include <QObject>
#include <QPointer>
#include <QString>
#include <QStringList>

#include <optional>
#include <vector>

class QAction;
class QDockWidget;
class QLabel;
class QSplitter;
class QWidget;

namespace paralens {

class MainWindow;

/// The window's tour options, `--tour TOUR [--tour-step N]` (docs/cli.md), taken out of the
/// command line. `step` is 1-based (1 when not given); `error` names a bad option (a step that
/// is not a positive whole number, --tour-step without --tour, --tour without a value).
struct TourLaunch
{
    QString tour;
    int step = 1;
    QString error;
    /// Removes the options from `args` (each also as `--option=VALUE`).
    static TourLaunch take(QStringList& args);
};

/// A guided tour (docs/tour-format.md) in the window: File ▸ Open Tour… reads one, a caption
/// strip at the top shows "Step N of M", the step's title and its caption (filled from the
/// live model, in large type while presenting), and Next / Previous step through it: Page
/// Down / Page Up always, and while presenting also the arrow keys and the space bar (what
/// presenter remotes send). Each step is one document edit, so Undo goes back and the class can
/// explore from any step; the previous step is pinned as the compare baseline (ghosted).
///
/// While presenting, each step brings its view forward: the chart is shown (a pane hidden for
/// the presentation comes back), its splitter gives it the larger share, its dock or tab is
/// raised and the chart takes the focus; for the plan map the Plan map dock opens with the
/// step's plan outlined. The layout before the first step's emphasis comes back with every
/// step, when the tour closes while presenting, and (with the rest of the window) when the
/// presentation ends (Workshop's LayoutSnapshot). In a column of charts (the views' rows) the
/// other rows give way, the Gantt's last, while the chart would get under 40 % of the column
/// or the window could not hold its minimum height. A step does not open docks by itself: the
/// Fit advice that a plan over capacity opens is closed again when the step's evaluation
/// arrives (the caption says the plan does not fit; Tools ▸ Fit advice still opens it). The caption
/// strip is exactly as tall as its wrapped text at the window's width; in presentation type, shrunk
/// a point at a time when the text would take more than ~40 % of the window.
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
    /// `step` is 1-based; one outside 1..steps is a named error and nothing changes. With
    /// `error`, the message goes there instead of a message box.
    bool openTour(const QString& path, int step = 1, QString* error = nullptr);
    /// The window's --tour options: opens the tour at the step, or shows the error (a message
    /// box, and on stderr for the terminal that started it).
    bool launch(const TourLaunch& options);
    /// Shows an already parsed tour from its first step, or from `step` (0-based; clamped)
    /// (InputError when a caption fails).
    void setTour(const Tour& tour, int step = 0);
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
    /// The strip's parts (tests).
    QDockWidget* dock() const { return m_dock; }
    QLabel* captionLabel() const { return m_caption; }
    QLabel* titleLabel() const { return m_title; }
    /// The chart a step's view puts in front (the plan map is the Plan map dock's).
    QWidget* viewWidget(TourView view) const;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void openDialog();
    void updateStrip();
    void updateKeys();
    void onPresentation(bool on);
    void onViewsUpdated();
    /// Sizes the strip to its text at its width (and the caption's type to the window).
    void fitStrip();
    /// While presenting: the layout before the tour's emphasis, then this step's view forward.
    void emphasise();
    void bringForward(QWidget* view);
    void ensureRoom(QWidget* view);
    void makeRoom(QSplitter* split, QWidget* pane);
    void restoreLayout();
    /// The window's size while a step changes the layout (passing states of the layout can
    /// grow the window; the room is reckoned in the size it had): holdSize() before,
    /// releaseSize() with what it returned after.
    QSize holdSize();
    void releaseSize(const QSize& size);
    int targetHeight() const;
    /// The window's minimum height less the strip's (layouts recomputed).
    int minimumWithoutStrip() const;
    /// Sets the strip's type from the caption's `points` and returns its height at its width.
    int stripHeightAt(double points);

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
    QWidget* m_strip = nullptr;
    double m_captionPoints = 12; ///< the caption's type before fitStrip() shrinks it
    int m_fittedWidth = -1;      ///< the strip width fitStrip() last sized for
    bool m_fitting = false;
    /// The presentation layout before this tour's first emphasis (empty when not emphasising).
    std::optional<LayoutSnapshot> m_beforeEmphasis;
    QList<QPointer<QDockWidget>> m_docksShown; ///< the docks shown when the step was taken
    bool m_stepEvaluating = false;             ///< the step's evaluation has not arrived
    QSize m_held;                              ///< the window's size while holdSize() holds
};

} // namespace paralens
