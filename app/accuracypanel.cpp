// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/accuracypanel.h"
#include "app/runs_loader.h"
#include "core/accuracy_plot.h"
#include "core/error.h"
#include "core/gpu_family.h"
#include "core/kernel_time.h"
#include "widgets/accuracyview.h"
#include "widgets/qt_text.h"
#include "widgets/units.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QStandardPaths>
#include <QVBoxLayout>

#include <memory>

namespace paralens {
namespace {

const char kOtherFile[] = "other file…";

} // namespace

AccuracyPanel::AccuracyPanel(const PresetLibrary& presets, QWidget* parent)
    : QWidget(parent), m_presets(presets),
      m_job(this, [this](AccuracyReport report) { predicted(std::move(report)); }),
      m_publishedJob(this, [this](AccuracyReport r) { publishedPredicted(std::move(r)); })
{
    setObjectName(QStringLiteral("accuracyPanel"));
    m_view = new AccuracyView(this);
    m_load = new QPushButton(tr("&Load runs…"), this);
    m_load->setObjectName(QStringLiteral("accuracyLoad"));
    m_load->setToolTip(tr("Add measured runs: *.paralens-runs.json files, or measured-iteration "
                          "CSVs (their rows ran on the hardware picked here)"));
    m_clear = new QPushButton(tr("Clear"), this);
    m_clear->setObjectName(QStringLiteral("accuracyClear"));
    m_hardware = new QComboBox(this);
    m_hardware->setObjectName(QStringLiteral("accuracyHardware"));
    m_hardware->setAccessibleName(tr("Hardware of CSV rows"));
    m_hardware->setToolTip(tr("The cluster the rows of a measured-iteration CSV ran on"));
    m_hardware->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    for (const std::string& id : presets.hardwareIds())
        m_hardware->addItem(QString::fromStdString(id), QString::fromStdString(id));
    m_hardware->addItem(tr(kOtherFile));
    setHardware(QStringLiteral("a100-80gb"));
    m_status = new QLabel(tr("Load measured runs to see how close the model is."), this);
    m_status->setObjectName(QStringLiteral("accuracyStatus"));
    m_status->setWordWrap(true);

    auto* bar = new QHBoxLayout;
    bar->addWidget(m_load);
    bar->addWidget(m_clear);
    bar->addSpacing(12);
    bar->addWidget(new QLabel(tr("CSV hardware:"), this));
    bar->addWidget(m_hardware);
    bar->addStretch();
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(m_status);
    layout->addWidget(m_view, 1);

    connect(m_load, &QPushButton::clicked, this, &AccuracyPanel::loadDialog);
    connect(m_clear, &QPushButton::clicked, this, &AccuracyPanel::clear);
    connect(m_hardware, &QComboBox::activated, this, [this](int i) {
        if (m_hardware->itemText(i) != tr(kOtherFile))
            return;
        const QString f = QFileDialog::getOpenFileName(this, tr("Hardware preset file"), {},
                                                       tr("Hardware preset (*.json)"));
        setHardware(f.isEmpty() ? QStringLiteral("a100-80gb") : f);
    });
    connect(m_view, &AccuracyView::runChosen, this, &AccuracyPanel::runChosen);

    // The built-in published runs (some 300, a fraction of a second) give the headline its
    // note until the user loads runs of their own.
    try {
        m_publishedRuns = builtinReferenceRuns(presets).runs;
    } catch (const InputError&) {
        m_publishedRuns.clear(); // a user preset shadowing a built-in one: no note, no harm
    }
    if (!m_publishedRuns.empty())
        m_publishedJob.start([runs = m_publishedRuns](const JobTicket&) {
            return validateRuns(runs, ModelConstants{});
        });
}

void AccuracyPanel::publishedPredicted(AccuracyReport report)
{
    m_published = std::move(report);
    updateNote();
}

QString AccuracyPanel::publishedNote(QString& tip) const
{
    if (!m_published)
        return {};
    const SimilarAccuracy a = stackAccuracy(*m_published, m_publishedRuns, m_scenario);
    if (a.runs == 0)
        return {};
    const QString fw = qText(toString(m_scenario.training.framework));
    const QString family = qText(gpuFamily(m_scenario.cluster.gpu.name));
    const QString bias = units::percent(std::abs(a.mean_fast));
    tip = tr("The model against the %1 built-in published runs of the %2 framework on %3 GPUs "
             "(paralens reference; docs/validation.md): on average it predicts them %4 %5, "
             "mean absolute error %6. Load runs of your own on the Accuracy page to compare "
             "with them instead.")
              .arg(a.runs)
              .arg(fw, family)
              .arg(bias, a.mean_fast >= 0 ? tr("faster than measured") : tr("slower than measured"))
              .arg(units::percent(a.mape));
    return tr("vs published: ±%1 on %2 runs (%3 %4)")
        .arg(units::percent(a.mape))
        .arg(a.runs)
        .arg(bias, a.mean_fast >= 0 ? tr("fast") : tr("slow"));
}

void AccuracyPanel::setHardware(const QString& idOrFile)
{
    int i = m_hardware->findData(idOrFile);
    if (i < 0) {
        // A file shows by its name; the item keeps the path.
        const bool preset = m_presets.hardware(idOrFile.toStdString()) != nullptr;
        m_hardware->insertItem(m_hardware->count() - 1,
                               preset ? idOrFile : QFileInfo(idOrFile).fileName(), idOrFile);
        i = m_hardware->count() - 2;
        m_hardware->setItemData(i, idOrFile, Qt::ToolTipRole);
    }
    m_hardware->setCurrentIndex(i);
}

QString AccuracyPanel::hardware() const
{
    return m_hardware->currentData().toString();
}

bool AccuracyPanel::loadFiles(const QStringList& files)
{
    try {
        const std::vector<RunSet> sets = loadRunFiles(files, hardware(), m_presets);
        for (const RunSet& s : sets) {
            m_runs.insert(m_runs.end(), s.runs.begin(), s.runs.end());
            m_assumptions.insert(m_assumptions.end(), s.assumptions.begin(), s.assumptions.end());
        }
    } catch (const InputError& e) {
        m_error = QString::fromStdString(e.what());
        showStatus();
        return false;
    }
    m_error.clear();
    m_files << files;
    predict();
    return true;
}

void AccuracyPanel::clear()
{
    m_job.discard();
    m_files.clear();
    m_runs.clear();
    m_assumptions.clear();
    m_error.clear();
    m_view->clear();
    updateNote();
    showStatus();
}

void AccuracyPanel::setProfile(const std::optional<CalibrationProfile>& profile)
{
    std::optional<FittedConstants> c;
    if (profile && profile->model_constants)
        c = profile->model_constants;
    const bool relevant = c || m_constants; // a profile without fitted constants changes nothing
    m_constants = c;
    if (relevant && !m_runs.empty())
        predict();
}

void AccuracyPanel::setScenario(const Scenario& s)
{
    m_scenario = s;
    updateNote();
}

void AccuracyPanel::predict()
{
    std::shared_ptr<const MeasuredPerformance> fitted;
    if (m_constants) {
        // Only the fitted constants: measured tables belong to one cluster, the runs may not.
        CalibrationProfile p;
        p.model_constants = m_constants;
        fitted = std::make_shared<CalibratedPerformance>(p, 0, 0);
    }
    m_status->setText(tr("Predicting %1 runs…").arg(m_runs.size()));
    // A newer start() supersedes this one: only the report of the newest runs is drawn.
    m_job.start([runs = m_runs, fitted](const JobTicket&) {
        return validateRuns(runs, ModelConstants{}, fitted.get());
    });
}

void AccuracyPanel::predicted(AccuracyReport report)
{
    report.assumptions = m_assumptions;
    m_view->setReport(report, m_runs);
    updateNote();
    showStatus();
    emit reportReady();
}

void AccuracyPanel::showStatus()
{
    QString text;
    if (m_runs.empty())
        text = tr("Load measured runs to see how close the model is.");
    else {
        QStringList names;
        for (const QString& f : m_files)
            names << QFileInfo(f).fileName();
        text = tr("%1 runs from %2 · predicted with %3")
                   .arg(m_runs.size())
                   .arg(names.join(QStringLiteral(", ")))
                   .arg(m_constants ? tr("the calibration profile's fitted constants")
                                    : tr("the model's own constants"));
    }
    if (!m_error.isEmpty())
        text += (text.isEmpty() ? QString() : QStringLiteral("\n")) + tr("Error: %1").arg(m_error);
    m_status->setText(text);
    QStringList tips;
    for (const std::string& a : m_assumptions)
        tips << QString::fromStdString(a);
    m_status->setToolTip(tips.isEmpty() ? QString() : tr("Assumptions:\n%1").arg(tips.join('\n')));
}

void AccuracyPanel::updateNote()
{
    QString text, tip;
    if (m_runs.empty())
        text = publishedNote(tip);
    else if (!isBusy()) {
        const SimilarAccuracy a = similarAccuracy(m_view->report(), m_runs, m_scenario);
        const QString gpu = QString::fromStdString(m_scenario.cluster.gpu.name);
        if (a.runs > 0) {
            text =
                tr("vs measured: ±%1 on %2 similar runs").arg(units::percent(a.mape)).arg(a.runs);
            tip = tr("Mean absolute error of the predicted step time on the %1 loaded runs of "
                     "this model on %2 (of %3 loaded)")
                      .arg(a.runs)
                      .arg(gpu)
                      .arg(m_runs.size());
        } else {
            text = tr("vs measured: no similar run");
            tip = tr("None of the %1 loaded runs trains this model on %2")
                      .arg(m_runs.size())
                      .arg(gpu);
        }
    }
    if (text == m_note && tip == m_noteTip)
        return;
    m_note = text;
    m_noteTip = tip;
    emit noteChanged(m_note, m_noteTip);
}

void AccuracyPanel::loadDialog()
{
    const QStringList files = QFileDialog::getOpenFileNames(
        this, tr("Load measured runs"),
        QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation),
        tr("Measured runs (*.paralens-runs.json *.csv);;All files (*)"));
    if (!files.isEmpty())
        loadFiles(files);
}

} // namespace paralens
