// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/plandocks.h"
#include "app/document.h"
#include "app/mainwindow.h"
#include "widgets/fitadviceview.h"
#include "widgets/planmapview.h"

#include <QAction>
#include <QDockWidget>
#include <QMenu>
#include <QScrollArea>
#include <QStyle>

#include <algorithm>

namespace paralens {
namespace {

QDockWidget* addDock(QMainWindow* window, QWidget* content, const QString& title,
                     const QString& name, QMenu* menu, const QKeySequence& shortcut)
{
    auto* dock = new QDockWidget(title, window);
    dock->setObjectName(name);
    // As the other tool docks (app/tooldocks.cpp): in a scroll area, so that the panel never
    // makes the window wider than the screen, and sized to its content (up to 40 % of the
    // window) the first time it is shown.
    auto* scroll = new QScrollArea(dock);
    scroll->setWidget(content);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setMinimumWidth(240);
    dock->setWidget(scroll);
    window->addDockWidget(Qt::RightDockWidgetArea, dock);
    dock->hide(); // opened on demand; the explorer views keep the room
    QObject::connect(dock, &QDockWidget::visibilityChanged, dock, [window, dock, content](bool on) {
        if (!on || dock->isFloating() || dock->property("sized").toBool())
            return;
        dock->setProperty("sized", true);
        const int wanted = content->sizeHint().width() +
                           dock->style()->pixelMetric(QStyle::PM_ScrollBarExtent) + 8;
        window->resizeDocks({dock}, {std::min(wanted, window->width() * 2 / 5)}, Qt::Horizontal);
    });
    QAction* toggle = dock->toggleViewAction();
    toggle->setShortcut(shortcut);
    menu->addAction(toggle);
    return dock;
}

} // namespace

PlanDocks::PlanDocks(MainWindow* window, Document* doc, QMenu* toolsMenu)
    : QObject(window), m_window(window), m_doc(doc), m_fit(new FitAdviceView(window)),
      m_map(new PlanMapView(window))
{
    toolsMenu->addSeparator();
    m_fitDock = addDock(window, m_fit, tr("Fit advice"), QStringLiteral("FitAdviceDock"), toolsMenu,
                        QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_A));
    m_mapDock = addDock(window, m_map, tr("Plan map"), QStringLiteral("PlanMapDock"), toolsMenu,
                        QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P));

    connect(m_fit, &FitAdviceView::suggestionChosen, this,
            [this](const Scenario& s) { applyPlan(s, QStringLiteral("fit advice")); });
    connect(m_map, &PlanMapView::planChosen, this,
            [this](const Scenario& s) { applyPlan(s, QStringLiteral("plan map")); });
    connect(m_doc, &Document::scenarioChanged, this, &PlanDocks::follow);
    for (QDockWidget* d : {m_fitDock, m_mapDock})
        connect(d, &QDockWidget::visibilityChanged, this, [this](bool visible) {
            if (visible)
                follow(); // catch up with the edits made while hidden
        });
    connect(m_window, &MainWindow::viewsUpdated, this, &PlanDocks::onEvaluated);
    follow();
}

QList<ChartView*> PlanDocks::charts() const
{
    return {m_map};
}

void PlanDocks::follow()
{
    const Scenario& s = m_doc->scenario();
    m_fit->setScenario(s, m_fitDock->isVisible());
    m_map->setScenario(s, m_mapDock->isVisible());
}

void PlanDocks::applyPlan(const Scenario& chosen, const QString& what)
{
    Scenario s = m_doc->scenario();
    s.parallel = chosen.parallel;
    s.training = chosen.training;
    m_doc->edit(s, what);
}

// The advice opens by itself when an edit takes the plan over capacity (not on every
// evaluation of a plan that stays over it, so closing the dock sticks).
void PlanDocks::onEvaluated()
{
    const Evaluation& e = m_window->shown();
    const bool fits = !e.ok() || e.estimate.fits;
    if (m_lastFit && !fits && !m_fitDock->isVisible()) {
        m_fitDock->show();
        m_fitDock->raise();
    }
    m_lastFit = fits;
}

} // namespace paralens
