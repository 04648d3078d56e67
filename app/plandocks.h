// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include <QList>
#include <QObject>

class QDockWidget;
class QMenu;

namespace paralens {

class ChartView;
class Document;
class FitAdviceView;
class MainWindow;
class PlanMapView;

/// The Fit advice and Plan map docks (docs/fit-advice.md, docs/plan-map.md), on the right of
/// the main window, toggled from the Tools menu. Both follow the document while shown (a
/// hidden one catches up when shown); the fit advice opens by itself when an evaluated plan
/// goes over capacity. A suggestion applied or a map cell clicked replaces the document's
/// plan and batch split as one undoable edit, as a search result does.
class PlanDocks : public QObject
{
    Q_OBJECT
public:
    PlanDocks(MainWindow* window, Document* doc, QMenu* toolsMenu);

    FitAdviceView* fitAdvice() const { return m_fit; }
    PlanMapView* planMap() const { return m_map; }
    QDockWidget* fitAdviceDock() const { return m_fitDock; }
    QDockWidget* planMapDock() const { return m_mapDock; }
    /// The plan map, exported like the explorer's views.
    QList<ChartView*> charts() const;

private:
    void follow();
    void applyPlan(const class Scenario& chosen, const QString& what);
    void onEvaluated();

    MainWindow* m_window;
    Document* m_doc;
    FitAdviceView* m_fit;
    PlanMapView* m_map;
    QDockWidget* m_fitDock = nullptr;
    QDockWidget* m_mapDock = nullptr;
    bool m_lastFit = true; ///< the previous evaluated plan fitted (or could not run)
};

} // namespace paralens
