// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "app/evaluator.h"

#include <QMainWindow>

class QAction;
class QLabel;
class QMenu;
class QDockWidget;

namespace paralens {

struct AutosaveRecord;
class BreakdownView;
class ChartView;
class Comparison;
class GanttView;
class Workshop;
class ControlPanel;
class Document;
class Headline;
class MemoryView;
class PresetLibrary;
class TopologyView;

/// The explorer window: the scenario controls in a dock, the headline strip and the views.
/// Every edit goes through the Document (undo), is evaluated off the GUI thread by Evaluator,
/// and the newest result updates all views together, the control panel's error marks and the
/// status line included.
class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    /// `presets` (built-in plus the user's) must outlive the window; nullptr: built-in only.
    explicit MainWindow(const PresetLibrary* presets = nullptr, QWidget* parent = nullptr);
    ~MainWindow() override;

    /// Opens a scenario file; shows the error and keeps the current document on failure.
    bool openFile(const QString& path);
    /// Saves to `path` atomically; shows the error on failure.
    bool saveFile(const QString& path);
    /// Restores the window geometry and, when `restoreScenario`, the last scenario from
    /// QSettings. A geometry saved on a larger screen is fitted to this one.
    void restoreSession(bool restoreScenario);
    /// Shrinks and moves the window into its screen's available area (no-op when it fits).
    void fitToScreen();
    /// The size a first start (no saved geometry) opens at: 1600 × 1000 or four fifths of the
    /// available screen, whichever is smaller in each direction.
    static QSize firstStartSize(const QSize& available);
    /// Below this window width the tool docks are tabbed with the Scenario dock instead of
    /// taking a column of their own, so that the window never grows past a small screen.
    static constexpr int kTabifyBelowWidth = 1280;
    /// Tabs every docked tool dock with the Scenario dock when the window is narrower than
    /// kTabifyBelowWidth (no-op otherwise).
    void arrangeToolDocks();
    /// The factor the window's font is scaled by for its size: 1 at 1600 × 1000, smaller on
    /// a small window (down to 0.85), larger on a big one (up to 1.5), in steps of 0.05.
    static double fontScaleFor(const QSize& size);
    double fontScale() const { return m_fontScale; }
    /// Compare mode with the scenario file `path` as the baseline (PARALENS_BASELINE=FILE at
    /// start): evaluated and pinned as Compare ▸ Pin as Baseline does. Shows the error and
    /// returns false when the file does not load or its plan cannot run.
    bool openBaseline(const QString& path);
    /// Start-up settings from the environment: PARALENS_BASELINE=FILE (openBaseline);
    /// PARALENS_PLAN_MAP_FIXED=AXIS:VALUE (the plan map's third axis, PlanMapView::setFixed).
    void applyEnvironment();
    /// Docks and toolbars back where they were when the window was built; tool docks closed.
    void resetLayout();
    /// View ▸ lists every dock and toolbar of the window (refilled each time it opens, so a
    /// dock added later is listed without further code).
    QMenu* viewMenu() const { return m_viewMenu; }
    void refreshViewMenu();
    class HelpMenu* helpMenu() const { return m_help; }
    /// Opens recovered work in a second window (the document holds another file); the new
    /// window deletes itself on close.
    MainWindow* openRecoveredBeside(const AutosaveRecord& record);

    /// Evaluates the current scenario on this thread and repaints every view before
    /// returning (benchmarks, tests).
    void updateNow();

    Document* document() const { return m_doc; }
    ControlPanel* controlPanel() const { return m_panel; }
    MemoryView* memoryView() const { return m_memory; }
    BreakdownView* breakdownView() const { return m_breakdown; }
    TopologyView* topologyView() const { return m_topology; }
    GanttView* ganttView() const { return m_gantt; }
    Comparison* comparison() const { return m_compare; }
    Workshop* workshop() const { return m_workshop; }
    Headline* headline() const { return m_headline; }
    Evaluator* evaluator() const { return m_evaluator; }
    class ToolDocks* toolDocks() const { return m_tools; }
    class Autosave* autosave() const { return m_autosave; }
    class LaunchDock* launchDock() const { return m_launch; }
    class ModelImportAction* modelImport() const { return m_importModel; }
    QList<ChartView*> charts() const;
    /// The evaluation the views show now.
    const Evaluation& shown() const { return m_shown; }

signals:
    /// All views show a new evaluation.
    void viewsUpdated();
    /// An error was shown to the user (also as a window-modal message box).
    void errorShown(const QString& message);

protected:
    void closeEvent(QCloseEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void showEvent(QShowEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void createActions();
    void createViewMenu();
    void createThemeMenu(QMenu* parent);
    void showEvaluation(const Evaluation& e, bool immediate);
    void updateTitle();
    void showError(const QString& title, const QString& message);
    bool maybeSave();
    void newDocument();
    void openDialog();
    bool save();
    bool saveAs();
    void addRecentFile(const QString& path);
    void updateRecentMenu();
    void exportChartDialog(ChartView* view);
    void exportReportDialog();
    void exportTraceDialog();
    void saveSession();

    const PresetLibrary& m_presets;
    Document* m_doc = nullptr;
    Evaluator* m_evaluator = nullptr;
    ControlPanel* m_panel = nullptr;
    Headline* m_headline = nullptr;
    MemoryView* m_memory = nullptr;
    BreakdownView* m_breakdown = nullptr;
    TopologyView* m_topology = nullptr;
    GanttView* m_gantt = nullptr;
    Comparison* m_compare = nullptr;
    Workshop* m_workshop = nullptr;
    QDockWidget* m_scenarioDock = nullptr;
    QLabel* m_status = nullptr;
    QMenu* m_recentMenu = nullptr;
    QMenu* m_viewMenu = nullptr;
    QList<QAction*> m_viewDockActions; // the View menu's current dock and toolbar entries
    QAction* m_viewDockEnd = nullptr;  // separator after them
    QByteArray m_defaultState;         // saveState() of the freshly built window
    class HelpMenu* m_help = nullptr;
    class ToolDocks* m_tools = nullptr;
    class Autosave* m_autosave = nullptr; // unsaved work on disk (crash recovery)
    class LaunchDock* m_launch = nullptr;
    class ModelImportAction* m_importModel = nullptr; // File ▸ Import Model…, dropped configs
    Evaluation m_shown;
    double m_fontScale = 1;
    bool m_arrangePending = false;
    void scheduleArrange();
    void keepOnScreen();
    static void skipLatinShaping();
    void applyFontScale();
};

} // namespace paralens
