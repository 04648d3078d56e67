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

/// The dock's column at the content's width (its sizeHint, with the scroll bar's room), up to
/// 40 % of the window.
void fitDockWidth(QMainWindow* window, QDockWidget* dock, QWidget* content)
{
    const int wanted =
        content->sizeHint().width() + dock->style()->pixelMetric(QStyle::PM_ScrollBarExtent) + 8;
    window->resizeDocks({dock}, {std::min(wanted, window->width() * 2 / 5)}, Qt::Horizontal);
}

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
        fitDockWidth(window, dock, content);
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
    // The map's first drawing after the dock opens: where its cells are too narrow for their
    // numbers (the dock opened before the window grew or its font was scaled up, or the map
    // has more columns than the scenario's first guess), the column widens to what they need,
    // once per opening, so that a width the user chose afterwards stays.
    connect(m_map, &PlanMapView::mapReady, this, [this] {
        if (!m_mapDock->isVisible() || m_mapDock->isFloating() ||
            m_mapDock->property("widened").toBool() || m_map->drawsAllCellTexts())
            return;
        m_mapDock->setProperty("widened", true);
        fitDockWidth(m_window, m_mapDock, m_map);
    });
    connect(m_mapDock, &QDockWidget::visibilityChanged, this, [this](bool on) {
        if (!on)
            m_mapDock->setProperty("widened", false);
    });
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
