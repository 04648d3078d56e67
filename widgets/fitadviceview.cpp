// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/fitadviceview.h"
#include "widgets/qt_text.h"
#include "widgets/units.h"

#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include <exception>

namespace paralens {
namespace {

constexpr int kTermsShown = 3; // the largest terms; the rest are in the breakdown chart

QString termName(MemoryTerm t)
{
    switch (t) {
    case MemoryTerm::Parameters:
        return FitAdviceView::tr("parameters");
    case MemoryTerm::Gradients:
        return FitAdviceView::tr("gradients");
    case MemoryTerm::OptimizerStates:
        return FitAdviceView::tr("optimizer states");
    case MemoryTerm::Activations:
        return FitAdviceView::tr("activations");
    case MemoryTerm::CommBuffers:
        return FitAdviceView::tr("communication buffers");
    case MemoryTerm::RuntimeOverhead:
        return FitAdviceView::tr("runtime overhead");
    }
    return {};
}

QTableWidgetItem* numberItem(const QString& text)
{
    auto* item = new QTableWidgetItem(text);
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    item->setFlags(Qt::ItemIsEnabled);
    return item;
}

} // namespace

FitAdviceView::FitAdviceView(QWidget* parent)
    : QWidget(parent), m_job(this, [this](FitAdvice a) { showAdvice(a); })
{
    // Three key-repeat periods: an X server repeats a held key 25 times a second (xset(1),
    // "r rate" default 660 25), and a dragged slider moves at the display's rate; a longer gap
    // means the user stopped.
    constexpr int kPauseMs = 120;
    m_pending = new QTimer(this);
    m_pending->setSingleShot(true);
    m_pending->setInterval(kPauseMs);
    connect(m_pending, &QTimer::timeout, this, &FitAdviceView::start);
    setAccessibleName(tr("Fit advice"));
    m_headline = new QLabel(this);
    m_headline->setWordWrap(true);
    m_headline->setTextFormat(Qt::PlainText);
    QFont bold = font();
    bold.setBold(true);
    m_headline->setFont(bold);
    m_terms = new QLabel(this);
    m_terms->setWordWrap(true);
    m_terms->setTextFormat(Qt::PlainText);
    m_listTitle = new QLabel(tr("Nearest plans that fit (one or two settings changed):"), this);
    m_listTitle->setWordWrap(true);
    m_table = new QTableWidget(0, 4, this);
    m_table->setHorizontalHeaderLabels({tr("tokens/s"), tr("peak"), tr("change"), QString()});
    m_table->horizontalHeaderItem(0)->setToolTip(tr("training throughput of the plan"));
    m_table->horizontalHeaderItem(1)->setToolTip(tr("peak memory per GPU over the stages"));
    m_table->horizontalHeaderItem(2)->setToolTip(
        tr("the settings changed; in parentheses what follows from them"));
    m_table->verticalHeader()->setVisible(false);
    m_table->setSelectionMode(QAbstractItemView::NoSelection);
    m_table->setWordWrap(true);
    m_table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(2, QHeaderView::Stretch);
    m_table->horizontalHeader()->setSectionResizeMode(3, QHeaderView::ResizeToContents);
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->setAccessibleName(tr("Plans that fit; Apply loads one"));
    m_table->setMinimumSize(220, 120);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->addWidget(m_headline);
    layout->addWidget(m_terms);
    layout->addWidget(m_listTitle);
    layout->addWidget(m_table, 1);
    layout->addStretch(0); // with the table hidden (the plan fits) the text stays at the top
    m_headline->setText(tr("Fit advice appears when a plan does not fit in GPU memory."));
    m_terms->hide();
    m_listTitle->hide();
    m_table->hide();
}

FitAdviceView::~FitAdviceView() = default;

QSize FitAdviceView::sizeHint() const
{
    // Room for a one-line change column at the default font; the dock may be made narrower.
    return {fontMetrics().averageCharWidth() * 58, 420};
}

void FitAdviceView::setScenario(const Scenario& s, bool active)
{
    m_scenario = s;
    m_stale = true;
    // A dragged slider sends an edit per step: the search (up to ~10 ms of a core)
    // runs for the position the user stops at, not for every one passed on the way, so it
    // does not take the core the window's own repaint needs.
    if (active)
        m_pending->start();
}

void FitAdviceView::start()
{
    m_stale = false;
    const Scenario s = m_scenario;
    m_job.start([s](const JobTicket&) {
        try {
            return adviseFit(s);
        } catch (const std::exception&) {
            return FitAdvice{}; // a core bug: shown as "cannot run", never a crash
        }
    });
}

void FitAdviceView::showAdvice(const FitAdvice& a)
{
    m_advice = a;
    const bool over = a.runnable && !a.fits;
    m_terms->setVisible(a.runnable);
    m_listTitle->setVisible(over);
    m_table->setVisible(over);
    if (!a.runnable) {
        m_headline->setText(tr("The plan cannot run: fix the settings marked in the panel first."));
    } else if (a.fits) {
        m_headline->setText(tr("The plan fits: peak %1 of %2 per GPU (stage %3).")
                                .arg(units::bytes(a.peak_bytes), units::bytes(a.capacity_bytes))
                                .arg(a.worst_stage));
    } else {
        m_headline->setText(tr("Does not fit: stage %1 needs %2 of %3 per GPU (%4 over).")
                                .arg(a.worst_stage)
                                .arg(units::bytes(a.peak_bytes), units::bytes(a.capacity_bytes),
                                     units::bytes(a.peak_bytes - a.capacity_bytes)));
    }
    QStringList lines;
    for (int i = 0; i < std::min<int>(kTermsShown, int(a.terms.size())); ++i) {
        const MemoryShare& m = a.terms[std::size_t(i)];
        lines << tr("%1. %2: %3 (%4 of the stage)")
                     .arg(i + 1)
                     .arg(termName(m.term), units::bytes(m.bytes), units::percent(m.share));
    }
    m_terms->setText(tr("Largest terms on stage %1:\n").arg(a.worst_stage) +
                     lines.join(QLatin1Char('\n')));
    if (over && a.suggestions.empty())
        m_listTitle->setText(tr("No plan one or two settings away fits: try the plan map or "
                                "the search (more GPUs, a smaller batch, a larger GPU)."));
    else
        m_listTitle->setText(tr("Nearest plans that fit (one or two settings changed), "
                                "fastest first:"));
    fillTable();
    emit adviceReady();
}

void FitAdviceView::fillTable()
{
    m_table->setRowCount(0);
    const auto& list = m_advice.suggestions;
    m_table->setRowCount(int(list.size()));
    for (int row = 0; row < int(list.size()); ++row) {
        const FitSuggestion& f = list[std::size_t(row)];
        m_table->setItem(row, 0, numberItem(QLocale().toString(f.tokens_per_second, 'f', 0)));
        m_table->setItem(row, 1, numberItem(units::bytes(f.peak_bytes)));
        auto* change = new QTableWidgetItem(qText(f.summary));
        change->setFlags(Qt::ItemIsEnabled);
        change->setToolTip(qText(f.summary));
        m_table->setItem(row, 2, change);
        auto* apply = new QPushButton(tr("Apply"), m_table);
        apply->setAccessibleName(tr("Apply: %1").arg(qText(f.summary)));
        apply->setToolTip(tr("Load this plan (undo with Ctrl+Z)"));
        apply->setMaximumWidth(apply->fontMetrics().horizontalAdvance(apply->text()) + 24);
        const Scenario s = f.scenario;
        connect(apply, &QPushButton::clicked, this, [this, s] { emit suggestionChosen(s); });
        m_table->setCellWidget(row, 3, apply);
    }
}

QPushButton* FitAdviceView::applyButton(int row) const
{
    return qobject_cast<QPushButton*>(m_table->cellWidget(row, 3));
}

QString FitAdviceView::headlineText() const
{
    return m_headline->text();
}

QString FitAdviceView::termsText() const
{
    return m_terms->text();
}

} // namespace paralens
