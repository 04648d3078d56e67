// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/workshop.h"
#include "app/document.h"
#include "core/plan_options.h"
#include "widgets/ganttplot.h"
#include "widgets/ganttview.h"

#include <QAction>
#include <QApplication>
#include <QLayout>
#include <QMainWindow>
#include <QSplitter>
#include <QStyle>
#include <QToolBar>
#include <QVariantAnimation>

namespace paralens {

LayoutSnapshot LayoutSnapshot::take(QMainWindow* window, const QList<QWidget*>& widgets)
{
    LayoutSnapshot shot;
    shot.m_state = window->saveState();
    for (QSplitter* split : window->findChildren<QSplitter*>()) {
        Splitter s{split, split->sizes(), {}};
        for (int i = 0; i < split->count(); ++i)
            s.hidden << split->widget(i)->isHidden();
        shot.m_splitters << s;
    }
    QList<QWidget*> all = widgets;
    if (QWidget* central = window->centralWidget(); central && !all.contains(central))
        all << central;
    for (QWidget* w : all)
        shot.m_widgets << qMakePair(QPointer<QWidget>(w), w->isHidden());
    return shot;
}

void LayoutSnapshot::restore(QMainWindow* window) const
{
    if (isEmpty())
        return;
    // The widgets first: docks restored beside a hidden central widget would fill the window.
    for (const auto& [w, hidden] : m_widgets)
        if (w)
            w->setHidden(hidden);
    window->restoreState(m_state);
    // Panes first, then sizes: a pane shown again takes the size it had.
    for (const Splitter& s : m_splitters) {
        if (!s.splitter || s.splitter->count() != s.hidden.size())
            continue;
        for (int i = 0; i < s.splitter->count(); ++i)
            s.splitter->widget(i)->setHidden(s.hidden[i]);
        s.splitter->setSizes(s.sizes);
    }
}

void keepWindowSize(QMainWindow* window, const QSize& size)
{
    QLayout* layout = window->layout();
    if (!layout)
        return;
    layout->invalidate();
    layout->activate(); // the minimum of the layout as it is now, not as it passed
    if (window->size() != size && !window->isMaximized() && !window->isFullScreen())
        window->resize(size.expandedTo(window->minimumSize()));
}

Workshop::Workshop(QMainWindow* window, Document* doc, GanttView* gantt)
    : QObject(window), m_window(window), m_doc(doc), m_gantt(gantt)
{
    m_presentation = new QAction(tr("&Presentation"), this);
    m_presentation->setCheckable(true);
    m_presentation->setShortcut(QKeySequence(Qt::Key_F5));
    m_presentation->setToolTip(tr("Large fonts, high contrast and the schedule animation"));
    connect(m_presentation, &QAction::toggled, this, &Workshop::setPresentation);
    m_leave = new QAction(tr("Leave Presentation"), this);
    m_leave->setShortcut(QKeySequence(Qt::Key_Escape));
    m_leave->setEnabled(false);
    connect(m_leave, &QAction::triggered, this, [this] { setPresentation(false); });

    m_anim = new QVariantAnimation(this);
    m_anim->setEasingCurve(QEasingCurve::Linear);
    connect(m_anim, &QVariantAnimation::valueChanged, this,
            [this](const QVariant& v) { m_gantt->setCursorSeconds(v.toDouble()); });

    m_bar = new QToolBar(tr("Workshop"), window);
    m_bar->setObjectName(QStringLiteral("WorkshopBar"));
    QStyle* st = window->style();
    m_play = m_bar->addAction(st->standardIcon(QStyle::SP_MediaPlay), tr("Play"), this,
                              [this] { isPlaying() ? pause() : play(); });
    m_play->setToolTip(tr("Animate a time cursor through the schedule (Space)"));
    m_play->setShortcut(QKeySequence(Qt::Key_Space));
    m_bar
        ->addAction(st->standardIcon(QStyle::SP_MediaSkipForward), tr("Step"), this,
                    &Workshop::step)
        ->setToolTip(tr("Move the cursor to the next op start"));
    m_bar->addAction(st->standardIcon(QStyle::SP_MediaSkipBackward), tr("Rewind"), this,
                     &Workshop::rewind);
    m_bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_bar->addSeparator();
    // Short names: the bar must fit a 1024-pixel projector in the large presentation font.
    const std::pair<QString, Schedule> schedules[] = {
        {tr("GPipe"), Schedule::GPipe},
        {tr("1F1B"), Schedule::OneF1B},
        {tr("Interleaved"), Schedule::Interleaved1F1B},
        {tr("ZB-H1"), Schedule::ZBH1},
        {tr("ZB-V"), Schedule::ZBV},
        {tr("DualPipeV"), Schedule::DualPipeV}};
    for (const auto& [name, kind] : schedules) {
        const Schedule k = kind;
        m_bar->addAction(name, this, [this, k] { switchSchedule(k); })
            ->setToolTip(tr("Switch to %1, keeping the time axis").arg(name));
    }
    m_bar->setVisible(false);
    window->addToolBar(Qt::TopToolBarArea, m_bar);
    // The style's media icons, not ⏸/▶ characters that a projector's fonts may lack.
    connect(m_anim, &QVariantAnimation::stateChanged, this, [this] {
        QStyle* style = m_window->style();
        m_play->setIcon(
            style->standardIcon(isPlaying() ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
        m_play->setText(isPlaying() ? tr("Pause") : tr("Play"));
    });
}

bool Workshop::isPresenting() const
{
    return m_presentation->isChecked();
}

void Workshop::setPresentation(bool on)
{
    if (m_presentation->isChecked() != on) {
        m_presentation->setChecked(on); // re-enters through toggled
        return;
    }
    if (on == m_active)
        return; // leaving when not presenting: nothing was saved to restore
    m_active = on;
    const QSize size = m_window->size();
    if (on) // before anything moves: what leaving puts back
        m_saved = LayoutSnapshot::take(m_window, m_hide);
    m_bar->setVisible(on);
    m_leave->setEnabled(on);
    if (on) {
        m_savedFont = m_window->font();
        m_savedPalette = m_window->palette();
        m_hadOwnFont = m_window->testAttribute(Qt::WA_SetFont);
        m_hadOwnPalette = m_window->testAttribute(Qt::WA_SetPalette);
        QFont big = m_savedFont;
        big.setPointSizeF(big.pointSizeF() * 1.5);
        m_window->setFont(big);
        // High contrast: black on white, saturated highlight.
        QPalette pal = m_savedPalette;
        for (auto group : {QPalette::Active, QPalette::Inactive}) {
            pal.setColor(group, QPalette::Window, Qt::white);
            pal.setColor(group, QPalette::Base, Qt::white);
            pal.setColor(group, QPalette::WindowText, Qt::black);
            pal.setColor(group, QPalette::Text, Qt::black);
            pal.setColor(group, QPalette::ButtonText, Qt::black);
        }
        m_window->setPalette(pal);
        for (QWidget* w : m_hide)
            w->hide();
        // The Gantt takes 55 % of its column and the memory stacks the rest: the hidden rows
        // (the breakdown) get nothing, so the memory chart stays a chart, not a strip.
        if (auto* split = qobject_cast<QSplitter*>(m_gantt->parentWidget())) {
            int total = 0;
            for (int v : split->sizes())
                total += v;
            const int at = split->indexOf(m_gantt);
            QList<int> shown;
            for (int i = 0; i < split->count(); ++i)
                if (i != at && !split->widget(i)->isHidden())
                    shown << i;
            QList<int> sizes(split->count(), 0);
            sizes[at] = shown.isEmpty() ? total : total * 55 / 100;
            for (int i : shown)
                sizes[i] = (total - sizes[at]) / int(shown.size());
            split->setSizes(sizes);
        }
        m_gantt->setPresentation(true);
        m_gantt->setCursorSeconds(0);
    } else {
        pause();
        // Back to what the window had: an inherited font and palette stay inherited, so a
        // theme chosen later still reaches the window.
        m_window->setFont(m_hadOwnFont ? m_savedFont : QFont());
        m_window->setAttribute(Qt::WA_SetFont, m_hadOwnFont);
        m_window->setPalette(m_hadOwnPalette ? m_savedPalette : QPalette());
        m_window->setAttribute(Qt::WA_SetPalette, m_hadOwnPalette);
        // Docks, toolbars, splitters and the hidden widgets as they were, whatever a tour
        // brought forward meanwhile.
        m_saved.restore(m_window);
        m_saved = LayoutSnapshot();
        m_gantt->setPresentation(false);
        m_gantt->setCursorSeconds(-1);
    }
    // The bar shown before the rows were hidden (entering), the rows shown before the bar
    // went (leaving): the window keeps its size.
    keepWindowSize(m_window, size);
}

double Workshop::pipelineSeconds() const
{
    const PipelineTimeline* t = m_gantt->gantt()->timeline();
    return t && t->simulated ? t->result.pipeline_seconds : 0.0;
}

void Workshop::play()
{
    const double end = pipelineSeconds();
    if (end <= 0)
        return;
    double from = std::max(0.0, m_gantt->cursorSeconds());
    if (from >= end * 0.999)
        from = 0;
    m_anim->stop();
    m_anim->setStartValue(from);
    m_anim->setEndValue(end);
    m_anim->setDuration(std::max(1, int(m_durationSeconds * 1000 * (end - from) / end)));
    m_anim->start();
}

void Workshop::pause()
{
    m_anim->stop();
}

bool Workshop::isPlaying() const
{
    return m_anim->state() == QAbstractAnimation::Running;
}

void Workshop::step()
{
    pause();
    m_gantt->setCursorSeconds(m_gantt->nextEventAfter(std::max(0.0, m_gantt->cursorSeconds())));
}

void Workshop::rewind()
{
    pause();
    m_gantt->setCursorSeconds(0);
}

void Workshop::switchSchedule(Schedule s)
{
    Scenario next = m_doc->scenario();
    if (next.parallel.schedule == s)
        return;
    // The same switch as the control panel's: interleaved keeps a v >= 2 the plan has.
    next.parallel = withSchedule(next.parallel, s);
    m_gantt->setAutoFit(false); // keep the time axis: the bubble shrinks in place
    m_doc->edit(next, QStringLiteral("parallel.schedule"));
}

} // namespace paralens
