// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/searchview.h"
#include "core/error.h"
#include "core/plan_options.h"
#include "core/scenario_io.h"
#include "core/units.h"
#include "widgets/field_labels.h"
#include "widgets/palette.h"
#include "widgets/qt_text.h"

#include <QCheckBox>
#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>

#include <nlohmann/json.hpp>
#include <qcustomplot.h>

#include <map>
#include <set>
#include <tuple>

namespace paralens {
namespace {

/// What a search answers for: the scenario without the settings the search chooses (the plan,
/// the micro-batch, recompute). Results of another key belong to another problem.
std::string problemKey(const Scenario& s)
{
    nlohmann::json j = scenarioToJson(s);
    j.erase("parallel");
    if (auto t = j.find("training"); t != j.end() && t->is_object()) {
        t->erase("micro_batch");
        t->erase("recompute");
    }
    return j.dump();
}

QString problemText(const Scenario& s)
{
    return SearchView::tr("%1 on %2 %3 GPUs, batch %4")
        .arg(QString::fromStdString(s.model.name), QLocale().toString(s.gpus),
             QString::fromStdString(s.cluster.gpu.name),
             QLocale().toString(s.training.global_batch));
}

constexpr int kSortRole = Qt::UserRole;
constexpr int kPlanRole = Qt::UserRole + 1;

// Marked for lupdate here, translated where the header is filled in.
struct Column
{
    const char* title;
    const char* tip;
};
const Column kColumns[] = {
    {QT_TRANSLATE_NOOP("paralens::SearchView", "#"),
     QT_TRANSLATE_NOOP("paralens::SearchView", "rank by tokens/s")},
    {QT_TRANSLATE_NOOP("paralens::SearchView", "tokens/s"),
     QT_TRANSLATE_NOOP("paralens::SearchView", "training throughput")},
    {QT_TRANSLATE_NOOP("paralens::SearchView", "MFU"),
     QT_TRANSLATE_NOOP("paralens::SearchView", "model FLOPs utilisation of the dense peak")},
    {QT_TRANSLATE_NOOP("paralens::SearchView", "peak GiB"),
     QT_TRANSLATE_NOOP("paralens::SearchView", "peak memory per GPU over the pipeline stages")},
    {QT_TRANSLATE_NOOP("paralens::SearchView", "step s"),
     QT_TRANSLATE_NOOP("paralens::SearchView", "seconds per optimizer step")},
    {QT_TRANSLATE_NOOP("paralens::SearchView", "TP"),
     QT_TRANSLATE_NOOP("paralens::SearchView", "tensor parallel")},
    {QT_TRANSLATE_NOOP("paralens::SearchView", "PP"),
     QT_TRANSLATE_NOOP("paralens::SearchView", "pipeline parallel")},
    {QT_TRANSLATE_NOOP("paralens::SearchView", "DP"),
     QT_TRANSLATE_NOOP("paralens::SearchView", "data parallel")},
    {QT_TRANSLATE_NOOP("paralens::SearchView", "CP"),
     QT_TRANSLATE_NOOP("paralens::SearchView", "context parallel")},
    {QT_TRANSLATE_NOOP("paralens::SearchView", "EP"),
     QT_TRANSLATE_NOOP("paralens::SearchView", "expert parallel")},
    {QT_TRANSLATE_NOOP("paralens::SearchView", "schedule"),
     QT_TRANSLATE_NOOP("paralens::SearchView", "pipeline schedule")},
    {QT_TRANSLATE_NOOP("paralens::SearchView", "v"),
     QT_TRANSLATE_NOOP("paralens::SearchView", "virtual stages (model chunks per GPU)")},
    {QT_TRANSLATE_NOOP("paralens::SearchView", "mb"),
     QT_TRANSLATE_NOOP("paralens::SearchView", "micro-batch size (sequences)")},
    {QT_TRANSLATE_NOOP("paralens::SearchView", "ZeRO"),
     QT_TRANSLATE_NOOP("paralens::SearchView", "ZeRO stage (1 = distributed optimizer, 3 = FSDP)")},
    {QT_TRANSLATE_NOOP("paralens::SearchView", "shard"),
     QT_TRANSLATE_NOOP("paralens::SearchView", "ZeRO shard group (all = the whole DP group)")},
    {QT_TRANSLATE_NOOP("paralens::SearchView", "recompute"),
     QT_TRANSLATE_NOOP("paralens::SearchView", "activation recomputation")},
    {QT_TRANSLATE_NOOP("paralens::SearchView", "SP"),
     QT_TRANSLATE_NOOP("paralens::SearchView", "sequence parallel")},
    {QT_TRANSLATE_NOOP("paralens::SearchView", "offload"),
     QT_TRANSLATE_NOOP("paralens::SearchView", "optimizer offload to the host")},
};

QStandardItem* cell(const QString& text, double sortValue)
{
    auto* item = new QStandardItem(text);
    item->setData(sortValue, kSortRole);
    item->setEditable(false);
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}

QStandardItem* textCell(const QString& text)
{
    auto* item = new QStandardItem(text);
    item->setData(text, kSortRole);
    item->setEditable(false);
    return item;
}

/// The colour dimension's value of a plan: a sort key and a legend label.
std::pair<double, QString> dimension(const SearchPlan& p, SearchView::ColourBy c)
{
    const ParallelPlan& pl = p.parallel;
    switch (c) {
    case SearchView::ColourBy::TP:
        return {pl.tp, SearchView::tr("TP %1").arg(pl.tp)};
    case SearchView::ColourBy::PP:
        return {pl.pp, SearchView::tr("PP %1").arg(pl.pp)};
    case SearchView::ColourBy::DP:
        return {pl.dp, SearchView::tr("DP %1").arg(pl.dp)};
    case SearchView::ColourBy::CP:
        return {pl.cp, SearchView::tr("CP %1").arg(pl.cp)};
    case SearchView::ColourBy::EP:
        return {pl.ep, SearchView::tr("EP %1").arg(pl.ep)};
    case SearchView::ColourBy::Schedule:
        return {double(pl.schedule), qText(toString(pl.schedule))};
    case SearchView::ColourBy::Zero:
        return {pl.zero, SearchView::tr("ZeRO %1").arg(pl.zero)};
    case SearchView::ColourBy::Recompute:
        return {double(p.training.recompute), qText(toString(p.training.recompute))};
    case SearchView::ColourBy::MicroBatch:
        return {p.training.micro_batch, SearchView::tr("mb %1").arg(p.training.micro_batch)};
    }
    return {0, QString()};
}

} // namespace

SearchView::SearchView(QWidget* parent)
    : ChartView(parent), m_job(this, [this](Outcome out) { onFinished(out); })
{
    m_start = new QPushButton(tr("Search"), this);
    m_start->setAccessibleName(tr("Start the configuration search"));
    m_stop = new QPushButton(tr("Cancel"), this);
    m_stop->setAccessibleName(tr("Cancel the configuration search"));
    m_stop->setEnabled(false);
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 1000);
    m_progress->setFormat(tr("%p %"));
    m_progress->setTextVisible(true);
    m_progress->setAccessibleName(tr("Search progress"));
    m_status = new QLabel(tr("Search every valid plan for this model, cluster and batch."), this);
    m_status->setWordWrap(true);
    m_status->setTextFormat(Qt::PlainText);
    m_status->setAccessibleName(tr("Search status"));
    m_colour = new QComboBox(this);
    m_colour->setAccessibleName(tr("Colour plans by"));
    for (const char* c : {QT_TR_NOOP("TP"), QT_TR_NOOP("PP"), QT_TR_NOOP("DP"), QT_TR_NOOP("CP"),
                          QT_TR_NOOP("EP"), QT_TR_NOOP("schedule"), QT_TR_NOOP("ZeRO stage"),
                          QT_TR_NOOP("recompute"), QT_TR_NOOP("micro-batch")})
        m_colour->addItem(tr("Colour by %1").arg(tr(c)));

    QCustomPlot* p = plot();
    p->setMinimumHeight(260);
    p->xAxis->setLabel(tr("peak memory per GPU (GiB)"));
    p->yAxis->setLabel(tr("tokens/s"));
    setUpTitleAndLegend(); // the legend right of the axes, so that it never hides plans
    p->setAccessibleDescription(tr("Plans: tokens per second against peak memory per GPU"));
    p->legend->setMaximumSize(QSize(200, QWIDGETSIZE_MAX));

    m_model = new QStandardItemModel(this);
    QStringList headers;
    for (const Column& c : kColumns)
        headers << tr(c.title);
    m_model->setHorizontalHeaderLabels(headers);
    for (int i = 0; i < int(std::size(kColumns)); ++i)
        m_model->horizontalHeaderItem(i)->setToolTip(tr(kColumns[i].tip));
    m_proxy = new QSortFilterProxyModel(this);
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(kSortRole);
    m_table = new QTableView(this);
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(0, Qt::AscendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->setVisible(false);
    m_table->setAccessibleName(tr("Top plans; click one to load it"));

    m_table->setMinimumSize(200, 120);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    buildControls();
    // The chart frame's plot shares a splitter with the table.
    QVBoxLayout* layout = layoutBox();
    layout->setContentsMargins(6, 6, 6, 6);
    layout->removeWidget(p);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(p);
    split->addWidget(m_table);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setChildrenCollapsible(false);
    layout->addWidget(split, 1);

    connect(m_start, &QPushButton::clicked, this, &SearchView::start);
    connect(m_stop, &QPushButton::clicked, this, &SearchView::cancel);
    connect(m_colour, &QComboBox::currentIndexChanged, this, &SearchView::drawPlans);
    connect(m_table, &QTableView::clicked, this, &SearchView::rowClicked);
}

SearchView::~SearchView() = default;

void SearchView::buildControls()
{
    m_gpus = new QSpinBox(this);
    m_gpus->setRange(1, 1 << 24);
    m_gpus->setGroupSeparatorShown(true);
    m_gpus->setKeyboardTracking(false);
    m_gpus->setToolTip(tr("GPUs to search plans for (the scenario's count until changed here)"));
    m_gpus->setAccessibleName(tr("GPUs to search for"));
    m_batch = new QSpinBox(this);
    m_batch->setRange(1, 1 << 24);
    m_batch->setGroupSeparatorShown(true);
    m_batch->setKeyboardTracking(false);
    m_batch->setToolTip(tr("Global batch in sequences (the scenario's until changed here)"));
    m_batch->setAccessibleName(tr("Global batch to search for"));
    m_group = new QCheckBox(tr("One per &layout"), this);
    m_group->setChecked(true);
    m_group->setToolTip(tr("List only the fastest plan of each TP · PP · DP · CP · EP layout; "
                           "the plans behind it differ in schedule, ZeRO, recompute or "
                           "micro-batch"));
    m_scheduleFilter = new QComboBox(this);
    m_scheduleFilter->addItem(tr("All schedules"));
    for (Schedule sc : kAllSchedules)
        m_scheduleFilter->addItem(qText(toString(sc)), int(sc));
    m_scheduleFilter->setToolTip(tr("List only plans with this pipeline schedule"));
    m_scheduleFilter->setAccessibleName(tr("Schedule filter"));
    m_export = new QPushButton(tr("E&xport…"), this);
    m_export->setToolTip(tr("Save the scatter as PNG, SVG or PDF"));
    m_colour->setToolTip(tr("Which setting the scatter's colours show"));
    m_start->setToolTip(tr("Search every valid plan for the problem below"));
    m_stop->setToolTip(tr("Stop the search; the plans found so far stay"));

    // Short rows of two controls rather than one long one, so the dock fits a narrow screen.
    m_gpus->setMaximumWidth(120);
    m_batch->setMaximumWidth(120);
    auto* grid = new QGridLayout;
    auto* gpusLabel = new QLabel(tr("&GPUs"), this);
    gpusLabel->setBuddy(m_gpus);
    auto* batchLabel = new QLabel(tr("&Batch"), this);
    batchLabel->setBuddy(m_batch);
    auto* problem = new QHBoxLayout;
    problem->addWidget(gpusLabel);
    problem->addWidget(m_gpus, 1);
    problem->addWidget(batchLabel);
    problem->addWidget(m_batch, 1);
    grid->addWidget(m_start, 0, 0);
    grid->addWidget(m_stop, 0, 1);
    grid->addWidget(m_progress, 0, 2);
    grid->addLayout(problem, 1, 0, 1, 3);
    grid->addWidget(m_group, 2, 0, 1, 2);
    grid->addWidget(m_scheduleFilter, 2, 2);
    grid->addWidget(m_colour, 3, 0, 1, 2);
    grid->addWidget(m_export, 3, 2);
    grid->setColumnStretch(2, 1);
    layoutBox()->addLayout(grid);
    layoutBox()->addWidget(m_status);

    connect(m_gpus, &QSpinBox::valueChanged, this, [this](int v) {
        m_space.base.gpus = v;
        updateStale();
    });
    connect(m_batch, &QSpinBox::valueChanged, this, [this](int v) {
        m_space.base.training.global_batch = v;
        updateStale();
    });
    connect(m_group, &QCheckBox::toggled, this, &SearchView::fillTable);
    connect(m_scheduleFilter, &QComboBox::currentIndexChanged, this, &SearchView::fillTable);
    connect(m_export, &QPushButton::clicked, this, [this] { emit exportRequested(this); });
}

QString SearchView::chartTitle() const
{
    return tr("Searched plans");
}

void SearchView::setSpace(const SearchSpace& space)
{
    m_space = space;
    {
        const QSignalBlocker b1(m_gpus), b2(m_batch);
        if (space.base.gpus != m_spaceGpus)
            m_gpus->setValue(space.base.gpus);
        if (space.base.training.global_batch != m_spaceBatch)
            m_batch->setValue(space.base.training.global_batch);
    }
    m_spaceGpus = space.base.gpus;
    m_spaceBatch = space.base.training.global_batch;
    m_space.base.gpus = m_gpus->value();
    m_space.base.training.global_batch = m_batch->value();
    updateStale();
}

void SearchView::updateStale()
{
    m_stale = m_haveResults && problemKey(m_searched.base) != problemKey(m_space.base);
    m_table->setEnabled(!m_stale);
    m_start->setText(m_stale ? tr("Search again") : tr("Search"));
    if (m_searching)
        return; // the progress owns the status line
    // Stale in the warning colour; otherwise the inherited palette, so a theme change reaches it.
    QPalette pal;
    if (m_stale)
        pal.setColor(QPalette::WindowText, palette::warning(palette()));
    m_status->setPalette(pal);
    if (m_stale)
        m_status->setText(tr("Stale: these plans are for %1; the problem is now %2. Search again "
                             "to apply a plan.")
                              .arg(problemText(m_searched.base), problemText(m_space.base)));
    else if (!m_doneText.isEmpty())
        m_status->setText(m_doneText);
}

QString SearchView::statusText() const
{
    return m_status->text();
}

void SearchView::setColourBy(ColourBy c)
{
    m_colour->setCurrentIndex(int(c));
}

bool SearchView::isRunning() const
{
    return m_job.isBusy();
}

void SearchView::start()
{
    if (isRunning())
        return;
    m_error.clear();
    m_searched = m_space;
    m_haveResults = false;
    updateStale();
    m_searching = true;
    m_start->setEnabled(false);
    m_stop->setEnabled(true);
    m_progress->setValue(0);
    m_status->setText(tr("Searching…"));

    SearchOptions options;
    options.top_k = m_topK;
    options.sample = m_sample;
    options.threads = m_threads;
    const SearchSpace space = m_searched;
    m_job.start([this, space, options](const JobTicket& ticket) {
        SearchOptions run = options;
        run.cancel = ticket.stop;
        // Called on the searching thread: hand the figures to the GUI thread, never touch
        // widgets.
        run.progress = [this, gen = ticket.generation](double fraction, std::uint64_t evaluated) {
            m_job.post(gen, [this, fraction, evaluated] { onProgress(fraction, evaluated); });
            return true;
        };
        Outcome out;
        try {
            out.result = search(space, run);
        } catch (const InputError& e) {
            out.error = QString::fromStdString(e.what());
        }
        return out;
    });
}

void SearchView::cancel()
{
    m_job.cancel();
}

void SearchView::onProgress(double fraction, quint64 evaluated)
{
    m_progress->setValue(int(fraction * 1000));
    m_status->setText(tr("Searching… %1 plans evaluated (%2 %)")
                          .arg(QLocale().toString(evaluated))
                          .arg(fraction * 100, 0, 'f', 0));
}

void SearchView::onFinished(const Outcome& out)
{
    m_searching = false;
    m_result = out.result;
    m_error = withFieldLabels(out.error);
    m_start->setEnabled(true);
    m_stop->setEnabled(false);
    if (!m_error.isEmpty()) {
        m_progress->setValue(0);
        m_doneText = tr("Cannot search: %1").arg(m_error);
    } else {
        const SearchResult& r = m_result;
        m_progress->setValue(r.cancelled ? m_progress->value() : 1000);
        QString text = tr("%1 plans evaluated, %2 fit, in %3 s")
                           .arg(QLocale().toString(quint64(r.evaluated)))
                           .arg(QLocale().toString(quint64(r.feasible)))
                           .arg(r.seconds, 0, 'f', 2);
        if (r.cancelled)
            text = tr("Cancelled: ") + text;
        else if (r.results.empty())
            text += r.evaluated == 0 ? tr(" — no valid plan for these pins")
                                     : tr(" — no plan fits in GPU memory");
        m_doneText = text;
    }
    m_haveResults = m_error.isEmpty();
    updateStale();
    fillTable();
    if (m_error.isEmpty()) {
        markValid();
        drawPlans();
    } else {
        setInvalid(m_error);
    }
    emit finished();
}

void SearchView::setGroupByLayout(bool on)
{
    m_group->setChecked(on);
}

void SearchView::setScheduleFilter(std::optional<Schedule> schedule)
{
    m_scheduleFilter->setCurrentIndex(schedule ? m_scheduleFilter->findData(int(*schedule)) : 0);
}

std::vector<int> SearchView::listedPlans() const
{
    const QVariant only = m_scheduleFilter->currentData();
    std::set<std::tuple<int, int, int, int, int>> layouts;
    std::vector<int> listed;
    const auto& plans = m_result.results;
    for (int i = 0; i < int(plans.size()); ++i) {
        const ParallelPlan& pl = plans[std::size_t(i)].parallel;
        if (only.isValid() && int(pl.schedule) != only.toInt())
            continue;
        // Results are best first, so the first plan of a layout is its fastest.
        if (m_group->isChecked() && !layouts.insert({pl.tp, pl.pp, pl.dp, pl.cp, pl.ep}).second)
            continue;
        listed.push_back(i);
    }
    return listed;
}

void SearchView::fillTable()
{
    m_model->removeRows(0, m_model->rowCount());
    const auto& plans = m_result.results;
    for (int i : listedPlans()) {
        const SearchPlan& p = plans[std::size_t(i)];
        const ParallelPlan& pl = p.parallel;
        QList<QStandardItem*> row;
        QStandardItem* rank = cell(QString::number(i + 1), i + 1);
        rank->setData(i, kPlanRole);
        row << rank << cell(QLocale().toString(p.tokens_per_second, 'f', 0), p.tokens_per_second)
            << cell(QString::number(100 * p.mfu, 'f', 1) + " %", p.mfu)
            << cell(QString::number(p.peak_bytes / units::kGiB, 'f', 1), p.peak_bytes)
            << cell(QString::number(p.step_seconds, 'f', 3), p.step_seconds)
            << cell(QString::number(pl.tp), pl.tp) << cell(QString::number(pl.pp), pl.pp)
            << cell(QString::number(pl.dp), pl.dp) << cell(QString::number(pl.cp), pl.cp)
            << cell(QString::number(pl.ep), pl.ep) << textCell(qText(toString(pl.schedule)))
            << cell(QString::number(pl.virtual_stages), pl.virtual_stages)
            << cell(QString::number(p.training.micro_batch), p.training.micro_batch)
            << cell(QString::number(pl.zero), pl.zero)
            << (pl.zero > 0 && pl.shard_group > 0
                    ? cell(QString::number(pl.shard_group), pl.shard_group)
                    : cell(tr("all"), pl.dp))
            << textCell(qText(toString(p.training.recompute)))
            << textCell(pl.sequence_parallel ? tr("on") : tr("off"))
            << textCell(pl.offload_optimizer ? tr("on") : tr("off"));
        m_model->appendRow(row);
    }
    m_table->resizeColumnsToContents();
}

void SearchView::clearData()
{
    plot()->clearGraphs();
    if (m_capacityLine) {
        plot()->removeItem(m_capacityLine);
        m_capacityLine = nullptr;
    }
}

void SearchView::applyColors()
{
    if (!isInvalid())
        drawPlans(); // the front and the capacity line take the palette's text colours
}

void SearchView::drawPlans()
{
    if (!m_colour)
        return; // a palette change while the base class is being built
    clearData();
    QCustomPlot* p = plot();
    const auto by = ColourBy(std::max(0, m_colour->currentIndex()));
    struct Series
    {
        QString label;
        QVector<double> x, y;
    };
    std::map<double, Series> groups;
    auto add = [&](const SearchPlan& plan) {
        const auto [key, label] = dimension(plan, by);
        Series& s = groups[key];
        s.label = label;
        s.x << plan.peak_bytes / units::kGiB;
        s.y << plan.tokens_per_second;
    };
    for (const SearchPlan& plan : m_result.sample)
        add(plan);
    for (const SearchPlan& plan : m_result.results)
        add(plan);
    int i = 0;
    const int count = static_cast<int>(groups.size());
    for (auto& [key, s] : groups) {
        QCPGraph* g = p->addGraph();
        g->setName(s.label);
        g->setLineStyle(QCPGraph::lsNone);
        const QColor c = palette::group(i++, count);
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, c, c, 4));
        g->setData(s.x, s.y);
    }
    if (!m_result.pareto.empty()) {
        QVector<double> x, y;
        for (const SearchPlan& plan : m_result.pareto) {
            x << plan.peak_bytes / units::kGiB;
            y << plan.tokens_per_second;
        }
        QCPGraph* front = p->addGraph();
        front->setName(tr("Pareto front"));
        front->setPen(QPen(palette().color(QPalette::WindowText), 1.5));
        front->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 6));
        front->setData(x, y, true);
    }
    const double capacity = m_space.base.cluster.gpu.memory_gib;
    if (capacity > 0 && p->graphCount() > 0) {
        m_capacityLine = new QCPItemStraightLine(p);
        m_capacityLine->point1->setCoords(capacity, 0);
        m_capacityLine->point2->setCoords(capacity, 1);
        m_capacityLine->setPen(QPen(palette().color(QPalette::Mid), 1, Qt::DashLine));
    }
    p->rescaleAxes();
    if (capacity > 0)
        p->xAxis->setRange(0, capacity * 1.05);
    p->yAxis->setRange(0, p->yAxis->range().upper * 1.05);
    p->replot();
}

void SearchView::rowClicked(const QModelIndex& index)
{
    if (!index.isValid())
        return;
    const QModelIndex source = m_proxy->mapToSource(index);
    const QVariant plan = m_model->item(source.row(), 0)->data(kPlanRole);
    const int i = plan.toInt();
    if (!plan.isValid() || i < 0 || i >= int(m_result.results.size()))
        return;
    if (m_stale)
        return; // another problem's plan: never applied to this one (the status says so)
    emit planChosen(scenarioFor(m_searched, m_result.results[std::size_t(i)]));
}

} // namespace paralens
