// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/workshop.h"
#include "app/document.h"
#include "core/plan_options.h"
#include "widgets/ganttplot.h"
#include "widgets/ganttview.h"

#include <QAction>
#include <QApplication>
#include <QMainWindow>
#include <QSplitter>
#include <QStyle>
#include <QToolBar>
#include <QVariantAnimation>

namespace paralens {

Workshop::Workshop(QMainWindow* window, Document* doc, GanttView* gantt)
    : QObject(window), m_window(window), m_doc(doc), m_gantt(gantt)
{
    m_presentation = new QAction(tr("&Presentation"), this);
    m_presentation->setCheckable(true);
    m_presentation->setShortcut(QKeySequence(Qt::Key_F5));
    m_presentation->setToolTip(tr("Large fonts, high contrast and the schedule animation"));
    connect(m_presentation, &QAction::toggled, this, &Workshop::setPresentation);

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
    const std::pair<QString, Schedule> schedules[] = {
        {tr("GPipe"), Schedule::GPipe},
        {tr("1F1B"), Schedule::OneF1B},
        {tr("Interleaved"), Schedule::Interleaved1F1B},
        {tr("Zero bubble (ZB-H1)"), Schedule::ZBH1}};
    for (const auto& [name, kind] : schedules) {
        const Schedule k = kind;
        m_bar->addAction(name, this, [this, k] { switchSchedule(k); })
            ->setToolTip(tr("Switch to %1, keeping the time axis").arg(name));
    }
    m_bar->setVisible(false);
    window->addToolBar(Qt::TopToolBarArea, m_bar);
    connect(m_anim, &QVariantAnimation::stateChanged, this,
            [this] { m_play->setText(isPlaying() ? tr("⏸ Pause") : tr("▶ Play")); });
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
    m_bar->setVisible(on);
    if (on) {
        m_savedFont = m_window->font();
        m_savedPalette = m_window->palette();
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
        m_wasVisible.clear();
        for (QWidget* w : m_hide) {
            m_wasVisible << w->isVisible();
            w->hide();
        }
        // The Gantt takes two thirds of its column.
        if (auto* split = qobject_cast<QSplitter*>(m_gantt->parentWidget())) {
            m_savedSizes = split->sizes();
            QList<int> sizes = m_savedSizes;
            int total = 0;
            for (int v : sizes)
                total += v;
            const int at = split->indexOf(m_gantt);
            for (int i = 0; i < sizes.size(); ++i)
                sizes[i] = i == at ? total * 2 / 3 : total / 3 / std::max(1, int(sizes.size()) - 1);
            split->setSizes(sizes);
        }
        m_gantt->setPresentation(true);
        m_gantt->setCursorSeconds(0);
    } else {
        pause();
        m_window->setFont(m_savedFont);
        m_window->setPalette(m_savedPalette);
        for (int i = 0; i < m_hide.size() && i < m_wasVisible.size(); ++i)
            m_hide[i]->setVisible(m_wasVisible[i]);
        if (auto* split = qobject_cast<QSplitter*>(m_gantt->parentWidget());
            split && !m_savedSizes.isEmpty())
            split->setSizes(m_savedSizes);
        m_gantt->setPresentation(false);
        m_gantt->setCursorSeconds(-1);
    }
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
