// SPDX-License-Identifier: GPL-3.0-or-later
// The Calibration panel's "Fit to measured runs…": the model's constants fitted to measured
// runs in the background, the error before and after shown, the constants put in the profile.
#include "app/calibrationpanel.h"
#include "app/fitjob.h"
#include "app/runs_loader.h"
#include "core/error.h"
#include "core/presets.h"
#include "widgets/units.h"

#include <QBoxLayout>
#include <QFileDialog>
#include <QInputDialog>
#include <QLabel>
#include <QPushButton>
#include <QStandardPaths>

namespace paralens {

void CalibrationPanel::setUpFit(QBoxLayout* actions, QBoxLayout* column)
{
    m_fit = new FitJob(this);
    m_fitButton = new QPushButton(tr("&Fit to measured runs…"), this);
    m_fitButton->setObjectName(QStringLiteral("calibrationFit"));
    m_fitButton->setToolTip(tr("Fit the model's GEMM efficiency, network efficiencies and fixed "
                               "costs to measured runs; the profile keeps the fitted values"));
    actions->insertWidget(actions->count() - 1, m_fitButton);
    m_fitLabel = new QLabel(this);
    m_fitLabel->setObjectName(QStringLiteral("calibrationFitResult"));
    m_fitLabel->setWordWrap(true);
    m_fitLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_fitLabel->setVisible(false);
    column->addWidget(m_fitLabel);
    connect(m_fitButton, &QPushButton::clicked, this, &CalibrationPanel::fitDialog);
    connect(m_fit, &FitJob::finished, this, &CalibrationPanel::fitDone);
}

QString CalibrationPanel::fitText() const
{
    return m_fitLabel->text();
}

bool CalibrationPanel::fitToRuns(const QStringList& files, const QString& hardware)
{
    if (m_fit->isRunning()) {
        showError(tr("A fit is running already."));
        return false;
    }
    std::vector<MeasuredRun> runs;
    try {
        runs = allRuns(loadRunFiles(files, hardware, PresetLibrary::builtin()));
    } catch (const InputError& e) {
        showError(tr("Could not read the runs: %1").arg(QString::fromStdString(e.what())));
        return false;
    }
    clearError();
    FitOptions options;
    options.holdout = 0;
    m_fit->start(std::move(runs), options, files);
    m_fitButton->setEnabled(false);
    m_fitLabel->setText(tr("Fitting the model to the runs of %1…").arg(files.join(", ")));
    m_fitLabel->setVisible(true);
    return true;
}

void CalibrationPanel::fitDone()
{
    m_fitButton->setEnabled(true);
    const FitOutcome& out = m_fit->outcome();
    if (!out.error.isEmpty()) {
        m_fitLabel->setVisible(false);
        showError(tr("Could not fit: %1").arg(out.error));
        emit fitFinished(false);
        return;
    }
    const FitResult& r = out.result;
    QStringList fitted;
    for (const FitParameter& p : r.parameters)
        if (p.identified)
            fitted << QStringLiteral("%1 %2 → %3")
                          .arg(QString::fromStdString(p.name))
                          .arg(p.start, 0, 'g', 3)
                          .arg(p.value, 0, 'g', 3);
    m_fitLabel->setText(
        tr("Fitted to %1 measured runs: mean error %2 before, %3 after (median %4, worst %5). "
           "Save the profile to use the fitted constants.")
            .arg(r.fit_runs)
            .arg(units::percent(r.fit_before.mape), units::percent(r.fit_after.mape),
                 units::percent(r.fit_after.median_ape),
                 units::percent(std::abs(r.fit_after.worst_error))));
    m_fitLabel->setToolTip(fitted.join(QLatin1Char('\n')));
    CalibrationProfile next = m_hasProfile ? m_profile : CalibrationProfile{};
    if (!m_hasProfile)
        next.tool = QStringLiteral("paralens %1").arg(PARALENS_VERSION).toStdString();
    next.model_constants = m_fit->constants();
    setProfile(next, QString()); // changed in memory: saved by Save profile…
    emit fitFinished(true);
}

void CalibrationPanel::fitDialog()
{
    const QStringList files = QFileDialog::getOpenFileNames(
        this, tr("Fit to measured runs"),
        QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation),
        tr("Measured runs (*.paralens-runs.json *.csv);;All files (*)"));
    if (files.isEmpty())
        return;
    QString hardware;
    if (std::any_of(files.begin(), files.end(), isIterationCsv)) {
        QStringList ids;
        for (const std::string& id : PresetLibrary::builtin().hardwareIds())
            ids << QString::fromStdString(id);
        bool ok = false;
        hardware = QInputDialog::getItem(
            this, tr("Hardware of the CSV rows"), tr("The cluster the measured iterations ran on:"),
            ids, std::max<qsizetype>(0, ids.indexOf("a100-80gb")), false, &ok);
        if (!ok)
            return;
    }
    fitToRuns(files, hardware);
}

} // namespace paralens
