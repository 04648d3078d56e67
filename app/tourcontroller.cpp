// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/tourcontroller.h"

#include "app/compare.h"
#include "app/document.h"
#include "app/evaluator.h"
#include "app/mainwindow.h"
#include "app/workshop.h"
#include "core/error.h"

#include <QAction>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QScreen>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <optional>

namespace paralens {
namespace {

QLabel* label(QWidget* parent, double scale, bool bold)
{
    auto* l = new QLabel(parent);
    QFont f = l->font();
    f.setPointSizeF(f.pointSizeF() * scale);
    f.setBold(bold);
    l->setFont(f);
    l->setWordWrap(true);
    l->setTextFormat(Qt::PlainText);
    return l;
}

QToolButton* button(QWidget* parent, QAction* action)
{
    auto* b = new QToolButton(parent);
    b->setDefaultAction(action);
    b->setToolButtonStyle(Qt::ToolButtonTextOnly);
    return b;
}

} // namespace

TourController::TourController(MainWindow* window) : QObject(window), m_window(window)
{
    m_open = new QAction(tr("Open &Tour…"), this);
    m_open->setToolTip(tr("A guided lesson: steps that change the plan, captions from the model"));
    connect(m_open, &QAction::triggered, this, &TourController::openDialog);
    m_next = new QAction(tr("Next Step ▶"), this);
    m_previous = new QAction(tr("◀ Previous Step"), this);
    m_close = new QAction(tr("Close Tour"), this);
    connect(m_next, &QAction::triggered, this, &TourController::next);
    connect(m_previous, &QAction::triggered, this, &TourController::previous);
    connect(m_close, &QAction::triggered, this, &TourController::closeTour);
    for (QAction* a : {m_next, m_previous}) {
        a->setShortcutContext(Qt::WindowShortcut);
        window->addAction(a);
    }

    m_dock = new QDockWidget(tr("Tour"), window);
    m_dock->setObjectName(QStringLiteral("tourDock"));
    m_dock->setFeatures(QDockWidget::DockWidgetMovable);
    auto* strip = new QWidget(m_dock);
    auto* column = new QVBoxLayout(strip);
    auto* row = new QHBoxLayout;
    m_counter = label(strip, 1.0, true);
    m_counter->setWordWrap(false);
    // Buttons first: on a projector narrower than the window they stay on screen.
    row->addWidget(button(strip, m_previous));
    row->addWidget(button(strip, m_next));
    row->addWidget(button(strip, m_close));
    row->addWidget(m_counter, 1);
    column->addLayout(row);
    m_title = label(strip, 1.5, true);
    m_caption = label(strip, 1.25, false);
    column->addWidget(m_title);
    column->addWidget(m_caption);
    m_dock->setWidget(strip);
    window->addDockWidget(Qt::TopDockWidgetArea, m_dock);
    m_dock->hide();

    // Presenter remotes send arrows and space; they only step the tour while presenting, so
    // that in the explorer the arrow keys keep moving sliders and spin boxes.
    connect(window->workshop()->presentationAction(), &QAction::toggled, this,
            &TourController::updateKeys);
    updateKeys();
}

void TourController::openDialog()
{
    const QString path =
        QFileDialog::getOpenFileName(m_window, tr("Open Tour"), QString(),
                                     tr("ParaLens tours (*.paralens-tour.json);;JSON (*.json)"));
    if (!path.isEmpty())
        openTour(path);
}

bool TourController::openTour(const QString& path)
{
    try {
        const PresetLibrary& presets = m_window->document()->presets();
        std::optional<Tour> bundled; // a bundled tour's id, when no such file exists
        if (!QFileInfo::exists(path))
            for (const BundledTour& b : bundledTours())
                if (path == QString::fromStdString(b.id))
                    bundled = parseTour(b.text, b.id + ".paralens-tour.json", presets);
        setTour(bundled ? *bundled : loadTourFile(path.toStdString(), presets));
    } catch (const InputError& e) {
        QMessageBox::warning(m_window, tr("Tour not opened"), QString::fromStdString(e.what()));
        return false;
    }
    return true;
}

void TourController::setTour(const Tour& tour)
{
    std::vector<TourStepResult> results = runTour(tour); // throws before anything changes
    m_tour = tour;
    m_results = std::move(results);
    m_index = -1;
    m_dock->show();
    goTo(0);
    updateKeys();
}

void TourController::closeTour()
{
    m_tour = Tour{};
    m_results.clear();
    m_window->comparison()->unpin();
    m_dock->hide();
    updateKeys();
}

void TourController::goTo(int index)
{
    if (!hasTour() || index < 0 || index >= stepCount() || index == m_index)
        return;
    m_index = index;
    const TourStep& step = m_tour.steps[static_cast<std::size_t>(index)];
    // The previous step, ghosted: what this step changed is what the class should see.
    if (index > 0)
        m_window->comparison()->pin(Evaluator::evaluateScenario(
            m_tour.steps[static_cast<std::size_t>(index - 1)].scenario));
    else
        m_window->comparison()->unpin();
    // One undoable edit per step: Undo returns to the previous step's plan.
    m_window->document()->edit(step.scenario, tr("Tour step %1").arg(index + 1));
    updateStrip();
}

QString TourController::counterText() const
{
    if (!hasTour())
        return {};
    return tr("%1 · step %2 of %3")
        .arg(QString::fromStdString(m_tour.title))
        .arg(m_index + 1)
        .arg(stepCount());
}

QString TourController::captionText() const
{
    return hasTour() ? QString::fromStdString(m_results[static_cast<std::size_t>(m_index)].caption)
                     : QString();
}

void TourController::updateStrip()
{
    m_counter->setText(counterText());
    m_title->setText(
        hasTour() ? QString::fromStdString(m_tour.steps[static_cast<std::size_t>(m_index)].title)
                  : QString());
    m_caption->setText(captionText());
    m_previous->setEnabled(hasTour() && m_index > 0);
    m_next->setEnabled(hasTour() && m_index + 1 < stepCount());
}

void TourController::updateKeys()
{
    const bool presenting = m_window->workshop()->isPresenting();
    QList<QKeySequence> next{QKeySequence(Qt::Key_PageDown)};
    QList<QKeySequence> previous{QKeySequence(Qt::Key_PageUp)};
    const QKeySequence space(Qt::Key_Space);
    if (presenting && hasTour()) {
        next << QKeySequence(Qt::Key_Right) << space;
        previous << QKeySequence(Qt::Key_Left);
        // Space is the workshop's Play key; a tour borrows it (two actions on one key would
        // both stay silent) and gives it back when the tour or the presentation ends.
        for (QAction* a : m_window->workshop()->toolBar()->actions())
            if (a->shortcut() == space) {
                m_borrowedSpace = a;
                a->setShortcut(QKeySequence());
            }
    } else if (m_borrowedSpace) {
        m_borrowedSpace->setShortcut(space);
        m_borrowedSpace = nullptr;
    }
    m_next->setShortcuts(next);
    m_previous->setShortcuts(previous);
    // The caption in large type for the back of the room.
    auto size = [](QLabel* l, double points) {
        QFont f = l->font();
        f.setPointSizeF(points);
        l->setFont(f);
    };
    // Large type for the back of the room, scaled to the screen so that a caption of three
    // lines leaves most of a 768-pixel projector to the charts.
    const QScreen* screen = m_window->screen();
    const double height = screen ? screen->availableGeometry().height() : 1080;
    const double caption = presenting ? std::clamp(height / 50, 12.0, 24.0) : 12;
    size(m_counter, caption * 0.7);
    size(m_title, caption * 1.3);
    size(m_caption, caption);
    updateStrip();
}

} // namespace paralens
