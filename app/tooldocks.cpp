// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/tooldocks.h"
#include "app/accuracypanel.h"
#include "app/calibrationpanel.h"
#include "app/document.h"
#include "core/search.h"
#include "widgets/accuracyview.h"
#include "widgets/calibrationview.h"
#include "widgets/searchview.h"

#include <QAction>
#include <QDockWidget>
#include <QFileInfo>
#include <QMainWindow>
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
    // In a scroll area: a tool's controls never make the window wider than the screen; on a
    // narrow one the dock scrolls instead.
    auto* scroll = new QScrollArea(dock);
    scroll->setWidget(content);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setMinimumWidth(240);
    dock->setWidget(scroll);
    window->addDockWidget(Qt::RightDockWidgetArea, dock);
    dock->hide(); // tools open on demand; the explorer views keep the room
    // The scroll area asks for little room; a tool opened on a wide screen gets what its
    // content asks for, up to 40 % of the window, so its table and plot are not cut.
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

ToolDocks::ToolDocks(QMainWindow* window, Document* doc, QMenu* toolsMenu)
    : QObject(window), m_doc(doc), m_search(new SearchView(window)),
      m_calibration(new CalibrationPanel(window)),
      m_accuracy(new AccuracyPanel(doc->presets(), window))
{
    m_search->setAccessibleName(tr("Configuration search"));
    m_calibration->setAccessibleName(tr("Calibration"));
    m_accuracy->setAccessibleName(tr("Accuracy against measured runs"));
    QDockWidget* search =
        addDock(window, m_search, tr("Search plans"), QStringLiteral("SearchDock"), toolsMenu,
                QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_F));
    QDockWidget* calibration =
        addDock(window, m_calibration, tr("Calibration"), QStringLiteral("CalibrationDock"),
                toolsMenu, QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_K));
    window->tabifyDockWidget(search, calibration);
    m_accuracyDock = addDock(window, m_accuracy, tr("Accuracy"), QStringLiteral("AccuracyDock"),
                             toolsMenu, QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_M));
    window->tabifyDockWidget(calibration, m_accuracyDock);

    // A chosen plan replaces the document's plan and batch split as one undoable edit.
    // The search panel may have searched another GPU count or batch: the chosen plan brings it.
    connect(m_search, &SearchView::planChosen, this, [this](const Scenario& chosen) {
        Scenario s = m_doc->scenario();
        s.gpus = chosen.gpus;
        s.parallel = chosen.parallel;
        s.training = chosen.training;
        m_doc->edit(s, QStringLiteral("search plan"));
    });
    // A saved or loaded profile becomes the scenario's calibration (undoable); an unsaved
    // import has no path to point at yet.
    connect(m_calibration, &CalibrationPanel::profileChanged, this, [this](const QString& path) {
        if (path.isEmpty())
            return;
        Scenario s = m_doc->scenario();
        s.calibration = QFileInfo(path).absoluteFilePath().toStdString();
        if (s.calibration != m_doc->scenario().calibration)
            m_doc->edit(s, QStringLiteral("calibration"));
    });
    // A measured run opened from the chart becomes the scenario (undoable); it keeps the
    // document's calibration when the run names none.
    connect(m_accuracy, &AccuracyPanel::runChosen, this, [this](const Scenario& run) {
        Scenario s = run;
        if (s.calibration.empty())
            s.calibration = m_doc->scenario().calibration;
        m_doc->edit(s, QStringLiteral("measured run"));
    });
    connect(m_calibration, &CalibrationPanel::profileChanged, this, [this] {
        m_accuracy->setProfile(m_calibration->hasProfile()
                                   ? std::optional<CalibrationProfile>(m_calibration->profile())
                                   : std::nullopt);
    });
    connect(m_doc, &Document::scenarioChanged, this, &ToolDocks::followDocument);
    followDocument();
}

void ToolDocks::openAccuracy(const QStringList& files, const QString& hardware,
                             const QRect& floating)
{
    m_accuracyDock->show();
    m_accuracyDock->raise();
    if (!floating.isEmpty()) {
        m_accuracyDock->setFloating(true);
        m_accuracyDock->setGeometry(floating);
    }
    if (!hardware.isEmpty())
        m_accuracy->setHardware(hardware);
    if (!files.isEmpty())
        m_accuracy->loadFiles(files);
}

QList<ChartView*> ToolDocks::charts() const
{
    return {m_search, m_calibration->view(), m_accuracy->view()};
}

void ToolDocks::followDocument()
{
    const Scenario& s = m_doc->scenario();
    m_calibration->setCluster(s.cluster);
    m_accuracy->setScenario(s);
    // A running search keeps the problem it started with; its results are marked stale when
    // the document has moved on meanwhile.
    SearchSpace space;
    space.base = s;
    m_search->setSpace(space);
}

} // namespace paralens
