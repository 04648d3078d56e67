// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/plan_map.h"
#include "widgets/backgroundjob.h"
#include "widgets/chartview.h"

class QCPColorMap;
class QCPColorScale;
class QCPItemRect;
class QCPItemText;
class QCPTextElement;
class QComboBox;
class QLabel;
class QMouseEvent;

namespace paralens {

/// The plan map (docs/plan-map.md): a heat map of TP (columns) × PP (rows) for the current
/// model, cluster, GPU count and batch, each cell coloured by its best plan's tokens/s (core
/// planMap(), the search with TP and PP pinned) or grey with "no fit" / "cannot run" and the
/// reason on hover. The current plan's cell is outlined and the fastest cell starred; a click
/// on a cell with a plan emits planChosen().
///
/// A "Fixed:" pair of combo boxes above the map picks its third axis (micro-batch, ZeRO stage,
/// recompute, virtual stages or CP) and the value it is held at: each cell then shows the best
/// plan with that value (PlanMapOptions::fixed); "best of all" leaves every setting free.
///
/// The map is computed off the GUI thread (a BackgroundJob): setScenario() starts a new one
/// only when the problem changed (samePlanMapProblem), superseding and cancelling a running
/// one, so a slider drag over the GPU count costs at most two maps; a plan edit only moves the
/// outline.
class PlanMapView : public ChartView
{
    Q_OBJECT
public:
    explicit PlanMapView(QWidget* parent = nullptr);
    ~PlanMapView() override;

    QString chartId() const override { return QStringLiteral("planmap"); }
    QString chartTitle() const override;
    /// Wide enough for every column's number (cellLabelWidth() each, the map's columns or,
    /// before the first map, the columns core lists for the scenario) beside the PP axis and
    /// the colour scale: the dock opens at this width (app/plandocks.cpp).
    QSize sizeHint() const override;
    /// The width a cell needs for its text in the cell font: the widest drawn text, or before
    /// the first map a sample of the widest figure units::count() writes.
    int cellLabelWidth() const;
    /// Whether every cell's text is drawn (a narrow map leaves some to the hover).
    bool drawsAllCellTexts() const;

    /// The scenario the map is for; recomputes when its problem changed and `active` (a hidden
    /// dock passes false and catches up when shown).
    void setScenario(const Scenario& s, bool active = true);
    /// Holds the third axis at a value and recomputes (when active). A value the axis does not
    /// list for this problem is replaced by the scenario's own, or the first listed.
    void setFixed(const PlanMapFixed& fixed);
    /// The third axis and value the next map is computed with.
    PlanMapFixed fixed() const { return m_fixed; }
    QComboBox* axisBox() const { return m_axisBox; }
    QComboBox* valueBox() const { return m_valueBox; }
    /// Search threads per cell (0 = all cores).
    void setThreads(unsigned n) { m_threads = n; }

    bool isComputing() const { return m_job.isBusy(); }
    /// The last finished map (empty before the first).
    const PlanMap& map() const { return m_map; }
    /// The scenario the shown map was computed for.
    const Scenario& mapScenario() const { return m_mapScenario; }
    /// The outlined cell (the current plan's TP and PP), or (0, 0) when it is not on the map.
    QPoint outlined() const;
    /// The text drawn in the cell (tests).
    QString cellText(int tp, int pp) const;
    /// The hover text of a cell: its best plan or why there is none.
    QString cellToolTip(int tp, int pp) const;
    /// Where the centre of a cell is drawn, in plot() coordinates (tests click there).
    QPoint cellCentre(int tp, int pp) const;

signals:
    /// A cell with a plan was clicked: that plan on the map's problem.
    void planChosen(const paralens::Scenario& scenario);
    /// A map was computed and drawn (or failed: errorText()).
    void mapReady();

protected:
    void clearData() override;
    void applyColors() override;
    void adaptLayoutTo(const QSize& size) override;

private:
    struct Outcome
    {
        PlanMap map;
        Scenario scenario;
        QString error;
    };
    void start();
    void fillValues();
    void onAxisChosen();
    void onValueChosen();
    void onFinished(const Outcome& out);
    void draw();
    QFont cellFont(int columns) const;
    void fitCellTexts(int rectWidth); ///< shows the cells' texts that fit cells of this rect
    void drawOutline();
    void updateStatus();
    const PlanMapCell* cellAtPixel(const QPoint& pos) const;
    void onMouseMove(QMouseEvent* event);
    void onMousePress(QMouseEvent* event);

    Scenario m_scenario;    ///< the document's scenario (for the outline)
    Scenario m_mapScenario; ///< the problem the shown map answers
    Scenario m_pendingFor;  ///< the problem of the running or waiting job
    PlanMapFixed m_fixed;   ///< the third axis chosen
    PlanMapFixed m_pendingFixed;
    bool m_havePending = false;
    bool m_stale = true; ///< the problem changed while inactive
    PlanMap m_map;
    QString m_error;
    unsigned m_threads = 0;

    QLabel* m_status = nullptr;
    QComboBox* m_axisBox = nullptr;
    QComboBox* m_valueBox = nullptr;
    QCPTextElement* m_title = nullptr;
    QCPColorMap* m_colorMap = nullptr;
    QCPColorScale* m_scale = nullptr;
    QCPItemRect* m_outline = nullptr;
    QList<QCPItemText*> m_labels;
    BackgroundJob<Outcome> m_job; // last: destroyed (cancelled and waited for) first
};

} // namespace paralens
