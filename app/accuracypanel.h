// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/accuracy.h"
#include "core/calibration.h"
#include "core/presets.h"
#include "widgets/backgroundjob.h"

#include <QStringList>
#include <QWidget>

#include <optional>

class QComboBox;
class QLabel;
class QPushButton;

namespace paralens {

class AccuracyView;

/// The Accuracy page: loads runs files (*.paralens-runs.json, and measured-iteration CSVs with
/// the hardware picked for them), predicts every run in the background (validateRuns(), with
/// the fitted constants of the calibration profile when it has them) and shows the report in
/// an AccuracyView. For the headline it says how close the model is on runs like the current
/// scenario (same model, same GPU type); with no runs loaded, on the built-in published runs
/// of the scenario's framework and GPU family (stackAccuracy()), predicted once in the
/// background when the panel is made.
class AccuracyPanel : public QWidget
{
    Q_OBJECT
public:
    explicit AccuracyPanel(const PresetLibrary& presets, QWidget* parent = nullptr);

    AccuracyView* view() const { return m_view; }
    /// Adds the runs of `files` (CSV rows on hardware()) and predicts them all again. All or
    /// nothing: on an error the loaded runs stay and errorText() says why.
    bool loadFiles(const QStringList& files);
    void clear();
    /// The cluster of CSV rows: a hardware preset id or a hardware preset file.
    void setHardware(const QString& idOrFile);
    QString hardware() const;
    const std::vector<MeasuredRun>& runs() const { return m_runs; }
    QStringList files() const { return m_files; }
    QString errorText() const { return m_error; }
    bool isBusy() const { return m_job.isBusy(); }

    /// The runs are predicted with this profile's fitted constants (none: the model's own).
    void setProfile(const std::optional<CalibrationProfile>& profile);
    /// The current scenario, for the headline's note.
    void setScenario(const Scenario& s);
    /// "vs measured: ±8.3 % on 12 similar runs"; with no runs loaded "vs published: ±8.6 % on
    /// 129 runs (8.4 % fast)" (the built-in runs of this framework on this GPU family: mean
    /// absolute error, and the mean bias), or "" until they are predicted or when none is like
    /// the scenario.
    QString note() const { return m_note; }
    /// Whether the built-in published runs have been predicted (the note can use them).
    bool hasPublishedReport() const { return m_published.has_value(); }

    void loadDialog();

    /// Room for a square scatter beside the explorer's views.
    QSize sizeHint() const override { return {760, 720}; }

signals:
    /// A report was drawn (after loading or a profile change).
    void reportReady();
    /// The headline's note and its tooltip changed.
    void noteChanged(const QString& text, const QString& toolTip);
    /// A run was double-clicked in the chart.
    void runChosen(const paralens::Scenario& scenario, const QString& name);

private:
    void predict();
    void predicted(AccuracyReport report);
    void publishedPredicted(AccuracyReport report);
    QString publishedNote(QString& tip) const;
    void updateNote();
    void showStatus();

    const PresetLibrary& m_presets;
    AccuracyView* m_view = nullptr;
    QPushButton* m_load = nullptr;
    QPushButton* m_clear = nullptr;
    QComboBox* m_hardware = nullptr;
    QLabel* m_status = nullptr;
    QStringList m_files;
    std::vector<MeasuredRun> m_runs;
    std::vector<std::string> m_assumptions;
    std::optional<FittedConstants> m_constants;
    Scenario m_scenario;
    QString m_note, m_noteTip, m_error;
    std::vector<MeasuredRun> m_publishedRuns; // the built-in runs, for the note
    std::optional<AccuracyReport> m_published;
    BackgroundJob<AccuracyReport> m_job; // last: waits for a running prediction first
    BackgroundJob<AccuracyReport> m_publishedJob;
};

} // namespace paralens
