// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/tourcontroller.h"

#include "app/compare.h"
#include "app/document.h"
#include "app/evaluator.h"
#include "app/mainwindow.h"
#include "app/workshop.h"
#include "core/error.h"
#include "widgets/breakdownview.h"
#include "widgets/ganttview.h"
#include "widgets/headline.h"
#include "widgets/memoryview.h"
#include "widgets/planmapview.h"
#include "widgets/topologyview.h"

#include <QAction>
#include <QCoreApplication>
#include <QDockWidget>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLayout>
#include <QMessageBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTextStream>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>
#include <qcustomplot.h>

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

void setPoints(QLabel* l, double points)
{
    QFont f = l->font();
    if (f.pointSizeF() == points)
        return;
    f.setPointSizeF(points);
    l->setFont(f);
}

/// The share of its splitter's length `pane` has (1 before the splitter has a size).
double shareOf(QSplitter* split, QWidget* pane)
{
    const QList<int> sizes = split->sizes();
    int total = 0;
    for (int v : sizes)
        total += v;
    const int at = split->indexOf(pane);
    return total > 0 && at >= 0 ? double(sizes[at]) / total : 1.0;
}

/// Gives `pane` the larger share (55 %) of its splitter; the other shown panes keep their
/// proportions in the rest. A pane alone in its splitter gets it all anyway.
void enlarge(QSplitter* split, QWidget* pane)
{
    const int at = split->indexOf(pane);
    QList<int> sizes = split->sizes();
    int total = 0, others = 0, shown = 0;
    for (int i = 0; i < split->count(); ++i) {
        if (split->widget(i)->isHidden())
            sizes[i] = 0;
        total += sizes[i];
        if (i != at && !split->widget(i)->isHidden()) {
            others += sizes[i];
            ++shown;
        }
    }
    if (at < 0 || shown == 0 || total <= 0)
        return;
    const int mine = total * 55 / 100;
    for (int i = 0; i < split->count(); ++i)
        if (i != at && !split->widget(i)->isHidden())
            sizes[i] = others > 0 ? (total - mine) * sizes[i] / others : (total - mine) / shown;
    sizes[at] = mine;
    split->setSizes(sizes);
}

/// `--name VALUE` or `--name=VALUE` at args[i]: removes it and sets `value` (empty when the
/// value is missing); false when args[i] is another argument.
bool takeOption(QStringList& args, int i, const QString& name, QString* value, bool* missing)
{
    const QString& a = args.at(i);
    if (a == name) {
        *missing = i + 1 >= args.size();
        *value = *missing ? QString() : args.at(i + 1);
        args.remove(i, *missing ? 1 : 2);
        return true;
    }
    if (a.startsWith(name + QLatin1Char('='))) {
        *value = a.mid(name.size() + 1);
        *missing = value->isEmpty();
        args.remove(i);
        return true;
    }
    return false;
}

} // namespace

TourLaunch TourLaunch::take(QStringList& args)
{
    TourLaunch out;
    QString step;
    bool haveStep = false;
    for (int i = 1; i < args.size();) {
        QString value;
        bool missing = false;
        if (takeOption(args, i, QStringLiteral("--tour"), &value, &missing)) {
            out.tour = value;
            if (missing)
                out.error = TourController::tr("--tour needs a tour file or a bundled tour id "
                                               "(paralens tour --list)");
        } else if (takeOption(args, i, QStringLiteral("--tour-step"), &value, &missing)) {
            step = value;
            haveStep = true;
        } else {
            ++i;
        }
    }
    if (haveStep && out.error.isEmpty()) {
        bool ok = false;
        out.step = step.toInt(&ok);
        if (!ok || out.step < 1)
            out.error = TourController::tr("--tour-step %1: expected a step number, 1 or more")
                            .arg(step.isEmpty() ? QStringLiteral("(no value)") : step);
        else if (out.tour.isEmpty())
            out.error = TourController::tr("--tour-step %1: no tour to step into (give "
                                           "--tour TOUR too)")
                            .arg(step);
    }
    return out;
}

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
    // No title bar: the counter names the tour, and a projector's 768 lines are precious.
    m_dock->setFeatures(QDockWidget::NoDockWidgetFeatures);
    m_dock->setTitleBarWidget(new QWidget(m_dock));
    auto* strip = new QWidget(m_dock);
    auto* column = new QVBoxLayout(strip);
    auto* row = new QHBoxLayout;
    m_strip = strip;
    // Wrapped too: a long tour title must not make the window wider than a projector.
    m_counter = label(strip, 1.0, true);
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
    strip->installEventFilter(this);  // its width decides its height (fitStrip)
    window->installEventFilter(this); // its height, the type while presenting

    // Presenter remotes send arrows and space; they only step the tour while presenting, so
    // that in the explorer the arrow keys keep moving sliders and spin boxes.
    // After app/plandocks.cpp's handler (built before this controller), which may open a dock.
    connect(window, &MainWindow::viewsUpdated, this, &TourController::onViewsUpdated);
    // Connected after the workshop's own handler: entering, its layout is in place; leaving,
    // it has put the window back.
    connect(window->workshop()->presentationAction(), &QAction::toggled, this,
            &TourController::onPresentation);
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

bool TourController::openTour(const QString& path, int step, QString* error)
{
    try {
        const PresetLibrary& presets = m_window->document()->presets();
        std::optional<Tour> bundled; // a bundled tour's id, when no such file exists
        if (!QFileInfo::exists(path))
            for (const BundledTour& b : bundledTours())
                if (path == QString::fromStdString(b.id))
                    bundled = parseTour(b.text, b.id + ".paralens-tour.json", presets);
        const Tour tour = bundled ? *bundled : loadTourFile(path.toStdString(), presets);
        const int n = static_cast<int>(tour.steps.size());
        if (step < 1 || step > n)
            throw InputError("tour-step", tr("%1: --tour-step %2: the tour has %3 steps (1 to %3)")
                                              .arg(QString::fromStdString(tour.source))
                                              .arg(step)
                                              .arg(n)
                                              .toStdString());
        setTour(tour, step - 1);
    } catch (const InputError& e) {
        const QString message = QString::fromStdString(e.what());
        if (error)
            *error = message;
        else
            QMessageBox::warning(m_window, tr("Tour not opened"), message);
        return false;
    }
    return true;
}

bool TourController::launch(const TourLaunch& options)
{
    QString error = options.error;
    if (error.isEmpty() && options.tour.isEmpty())
        return true;
    if (error.isEmpty() && openTour(options.tour, options.step, &error))
        return true;
    QTextStream(stderr) << "error: " << error << "\n";
    // Window-modal and non-blocking: the window comes up behind it.
    auto* box = new QMessageBox(QMessageBox::Warning, tr("Tour not opened"), error, QMessageBox::Ok,
                                m_window);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setObjectName(QStringLiteral("TourErrorBox"));
    box->open();
    return false;
}

void TourController::setTour(const Tour& tour, int step)
{
    std::vector<TourStepResult> results = runTour(tour); // throws before anything changes
    m_tour = tour;
    m_results = std::move(results);
    m_index = -1;
    m_dock->show();
    goTo(std::clamp(step, 0, stepCount() - 1));
    updateKeys();
}

void TourController::closeTour()
{
    const QSize size = holdSize();
    restoreLayout(); // while presenting: the presentation as it was before the tour's steps
    m_tour = Tour{};
    m_results.clear();
    m_window->comparison()->unpin();
    m_dock->hide();
    updateKeys();
    releaseSize(size);
}

void TourController::goTo(int index)
{
    if (!hasTour() || index < 0 || index >= stepCount() || index == m_index)
        return;
    const QSize size = holdSize();
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
    emphasise();
    releaseSize(size); // panes shown before others were hidden grew it
    // A lesson's plan that does not fit says so in its caption: the Fit advice does not pop
    // up over the charts when the step's evaluation arrives (Tools ▸ Fit advice still opens it).
    m_docksShown.clear();
    for (QDockWidget* d : m_window->findChildren<QDockWidget*>())
        if (d->isVisible())
            m_docksShown << d;
    m_stepEvaluating = true;
}

void TourController::onViewsUpdated()
{
    if (!hasTour())
        return;
    const QSize size = holdSize();
    if (m_stepEvaluating) {
        m_stepEvaluating = false;
        for (QDockWidget* d : m_window->findChildren<QDockWidget*>())
            if (d->isVisible() && !m_docksShown.contains(d))
                d->hide();
    }
    // The evaluation can raise a chart's minimum (a ghosted baseline doubles the Gantt's):
    // the room is made again before the window lays itself out.
    if (m_window->workshop()->isPresenting()) {
        ensureRoom(viewWidget(m_tour.steps[static_cast<std::size_t>(m_index)].view));
        m_fittedWidth = -1;
        fitStrip();
    }
    releaseSize(size);
}

QWidget* TourController::viewWidget(TourView view) const
{
    switch (view) {
    case TourView::Memory:
        return m_window->memoryView();
    case TourView::Gantt:
        return m_window->ganttView();
    case TourView::Breakdown:
        return m_window->breakdownView();
    case TourView::Topology:
        return m_window->topologyView();
    case TourView::PlanMap:
        return m_window->findChild<PlanMapView*>(); // app/plandocks.cpp's
    }
    return nullptr;
}

void TourController::onPresentation(bool on)
{
    const QSize size = holdSize();
    if (!on) {
        // The workshop has put back the layout from before the presentation, this strip's
        // visibility included: the tour may have opened or closed since.
        m_beforeEmphasis.reset();
        m_dock->setVisible(hasTour());
    }
    updateKeys(); // the keys, and the type for the room
    if (on)
        emphasise();
    releaseSize(size);
}

void TourController::restoreLayout()
{
    if (!m_beforeEmphasis)
        return;
    m_beforeEmphasis->restore(m_window);
    m_beforeEmphasis.reset();
}

void TourController::emphasise()
{
    if (!hasTour() || !m_window->workshop()->isPresenting())
        return;
    // Each step starts from the presentation's own layout: the previous step's view goes
    // back where it was.
    if (m_beforeEmphasis)
        m_beforeEmphasis->restore(m_window);
    else
        m_beforeEmphasis = LayoutSnapshot::take(m_window);
    bringForward(viewWidget(m_tour.steps[static_cast<std::size_t>(m_index)].view));
    m_fittedWidth = -1;
    fitStrip(); // with the room this step's layout leaves
}

void TourController::bringForward(QWidget* view)
{
    if (!view)
        return;
    // From the chart up to the window: every pane, tab and dock on the way comes forward.
    QWidget* child = view;
    for (QWidget* parent = view->parentWidget(); child && child != m_window;
         child = parent, parent = parent ? parent->parentWidget() : nullptr) {
        if (auto* stack = qobject_cast<QStackedWidget*>(parent)) {
            if (auto* tabs = qobject_cast<QTabWidget*>(stack->parentWidget()))
                tabs->setCurrentWidget(child);
            else
                stack->setCurrentWidget(child);
        } else if (auto* split = qobject_cast<QSplitter*>(parent)) {
            child->show();
            enlarge(split, child);
        } else if (child->isHidden()) {
            child->show();
        }
        if (auto* dock = qobject_cast<QDockWidget*>(child)) {
            dock->show();
            dock->raise(); // the current tab when tabified
            // Room for a chart on the projector: the charts' column gives way (the docks fill
            // the window without it), and the caption says what the figures are; beside a
            // narrowed column its headline and charts would be squeezed past reading.
            if (!dock->isFloating() && dock->parentWidget() == m_window)
                if (QWidget* central = m_window->centralWidget())
                    central->hide();
        }
    }
    if (QWidget* central = m_window->centralWidget(); central && !central->isHidden())
        ensureRoom(view);
    // The chart itself takes the focus (its plot; keys still step the tour: window shortcuts).
    if (auto* chart = qobject_cast<ChartView*>(view))
        chart->plot()->setFocus(Qt::OtherFocusReason);
    else
        view->setFocus(Qt::OtherFocusReason);
}

void TourController::ensureRoom(QWidget* view)
{
    if (!view)
        return;
    // The column of charts that holds the view, and its row that does.
    for (QWidget* pane = view; pane->parentWidget(); pane = pane->parentWidget())
        if (auto* split = qobject_cast<QSplitter*>(pane->parentWidget());
            split && split->orientation() == Qt::Vertical) {
            makeRoom(split, pane);
            return;
        }
    // A chart outside the views' rows (a dock's): the rows still leave the caption its room.
    for (QWidget* w = m_window->ganttView()->parentWidget(); w; w = w->parentWidget())
        if (auto* rows = qobject_cast<QSplitter*>(w); rows && rows->orientation() == Qt::Vertical) {
            makeRoom(rows, nullptr);
            return;
        }
}

void TourController::makeRoom(QSplitter* split, QWidget* pane)
{
    // Height is what a projector lacks: the other rows give way, the schedule's last (the
    // Gantt and its animation), while the chart would get under 40 % of its column (the
    // others' minimum heights, a ghosted baseline's among them, can hold it down) or the
    // window's minimum height, with the caption strip as tall as it wants, would outgrow it.
    QWidget* gantt = m_window->ganttView();
    auto holdsGantt = [gantt](QWidget* w) { return w == gantt || w->isAncestorOf(gantt); };
    const int height = targetHeight();
    const int strip = std::min(stripHeightAt(m_captionPoints), height * 2 / 5);
    auto crowded = [&] {
        return (pane && shareOf(split, pane) < 0.4) || minimumWithoutStrip() + strip > height;
    };
    auto shownRows = [split] {
        int n = 0;
        for (int i = 0; i < split->count(); ++i)
            n += !split->widget(i)->isHidden();
        return n;
    };
    // A row left a sliver (under a quarter of the column, near its minimum) is no chart either.
    auto sliver = [&]() -> QWidget* {
        QWidget* thinnest = nullptr;
        for (int i = 0; i < split->count(); ++i) {
            QWidget* row = split->widget(i);
            if (row != pane && !row->isHidden() && shareOf(split, row) < 0.25 &&
                (!thinnest || shareOf(split, row) < shareOf(split, thinnest)))
                thinnest = row;
        }
        return thinnest;
    };
    // Without a pane of its own (a dock's chart) the column keeps one row.
    while (pane || shownRows() > 1) {
        QWidget* drop = nullptr;
        if (crowded()) {
            for (int i = 0; i < split->count(); ++i) {
                QWidget* row = split->widget(i);
                if (row != pane && !row->isHidden() &&
                    (!drop || (holdsGantt(drop) && !holdsGantt(row))))
                    drop = row;
            }
        } else if (pane) {
            drop = sliver();
        }
        if (!drop)
            break;
        drop->hide();
        if (pane)
            enlarge(split, pane);
    }
}

QSize TourController::holdSize()
{
    const QSize size = m_window->size();
    if (!m_held.isValid())
        m_held = size;
    return size;
}

void TourController::releaseSize(const QSize& size)
{
    if (m_held != size)
        return; // an inner hold: the outer one gives the size back
    keepWindowSize(m_window, size);
    m_held = QSize();
}

int TourController::targetHeight() const
{
    return m_held.isValid() ? m_held.height() : m_window->height();
}

int TourController::minimumWithoutStrip() const
{
    // Fresh: a row just hidden or shown, a minimum just raised count. Splitters and layouts
    // learn of them from posted layout requests; the window may grow on the way, and
    // releaseSize() gives it its size back.
    for (int round = 0; round < 3; ++round)
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    if (QWidget* central = m_window->centralWidget(); central && central->layout())
        central->layout()->invalidate();
    m_window->layout()->invalidate();
    int all = m_window->minimumSizeHint().height();
    // The headline's minimum is one row of figure cards; at a projector's width in the large
    // type they take two or three rows (and a line more each with a baseline pinned), which
    // the column squeezes when the window is at its minimum: count what it needs.
    if (QWidget* head = m_window->headline(); head && head->isVisibleTo(m_window))
        all += std::max(0, head->sizeHint().height() - head->minimumSizeHint().height());
    if (!m_dock->isVisible())
        return all;
    return all - (m_strip->minimumHeight() > 0 ? m_strip->minimumHeight()
                                               : m_strip->minimumSizeHint().height());
}

int TourController::stripHeightAt(double points)
{
    setPoints(m_counter, std::max(8.0, points * 0.7));
    setPoints(m_title, points * 1.3);
    setPoints(m_caption, points);
    // Added up from the widgets: the layout's own height for a width can lag a font change
    // (its items keep the heights they measured).
    auto* column = qobject_cast<QBoxLayout*>(m_strip->layout());
    const QMargins margins = column->contentsMargins();
    const int inner = std::max(1, m_strip->width() - margins.left() - margins.right());
    const int gap = std::max(0, column->spacing());
    int row = 0, buttons = 0;
    for (auto* b : m_strip->findChildren<QToolButton*>(Qt::FindDirectChildrenOnly)) {
        row = std::max(row, b->sizeHint().height());
        buttons += b->sizeHint().width() + gap;
    }
    row = std::max(row, m_counter->heightForWidth(std::max(1, inner - buttons)));
    return margins.top() + row + gap + m_title->heightForWidth(inner) + gap +
           m_caption->heightForWidth(inner) + margins.bottom();
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
    m_fittedWidth = -1; // new text: fit again
    fitStrip();
}

bool TourController::eventFilter(QObject* watched, QEvent* event)
{
    if (event->type() == QEvent::Resize) {
        if (watched == m_strip && m_strip->width() != m_fittedWidth)
            fitStrip();
        else if (watched == m_window && hasTour() && m_window->workshop()->isPresenting())
            updateKeys(); // the type follows the window's height
    }
    return QObject::eventFilter(watched, event);
}

void TourController::fitStrip()
{
    if (m_fitting || !m_strip->layout())
        return;
    m_fitting = true;
    // A long caption on a small projector: a point smaller at a time, down to the explorer's
    // size, rather than a strip that pushes the charts off the screen: at most 40 % of the
    // window, and never so tall that the window's minimum height (the charts' minimums, the
    // toolbars) would outgrow the window.
    // In the explorer down to 10 points (its charts cannot give way).
    const bool presenting = m_window->workshop()->isPresenting();
    const double smallest = presenting ? 12 : 10;
    double points = m_captionPoints;
    int needed = stripHeightAt(points);
    if (m_dock->isVisible()) {
        const int height = targetHeight();
        const int room = std::min(height * 2 / 5, height - minimumWithoutStrip());
        while (points > smallest && needed > room) {
            points = std::max(smallest, points - 1);
            needed = stripHeightAt(points);
        }
    }
    m_strip->setFixedHeight(needed);
    m_fittedWidth = m_strip->width();
    m_fitting = false;
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
    // Large type for the back of the room, scaled to the window (on a projector, the screen)
    // so that a caption of three lines leaves most of a 768-pixel projector to the charts
    // (fitStrip() applies it).
    m_captionPoints = presenting ? std::clamp(targetHeight() / 50.0, 12.0, 24.0) : 12;
    updateStrip();
}

} // namespace paralens
