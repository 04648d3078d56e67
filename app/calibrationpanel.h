// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/calibration.h"
#include "core/cluster_spec.h"
#include "widgets/backgroundjob.h"

#include <QProcess>
#include <QStringList>
#include <QWidget>

class QBoxLayout;
class QLabel;
class QProgressBar;
class QPushButton;

namespace paralens {

class CalibrationView;
class FitJob;

/// The Calibration page: the CalibrationView plus its actions. Imports nccl-tests logs (and
/// profiles) through core, loads and saves profiles, and runs paralens-measure as a
/// BackgroundJob with a progress bar and Cancel (the probe for GPUs is one too). Errors stay in
/// the panel; the profile shown before a failed action is kept.
class CalibrationPanel : public QWidget
{
    Q_OBJECT
public:
    /// Where paralens-measure stands on this machine (probed once with `paralens-measure devices`).
    enum class MeasureState
    {
        Checking,  ///< the probe is still running
        Available, ///< the tool runs and sees at least one GPU
        NotBuilt,  ///< no paralens-measure next to paralens, in the build tree or on PATH
        NoGpu,     ///< the tool exits 3: no CUDA device visible
        Failed     ///< the probe failed otherwise (message in measureStatusText())
    };

    /// How one run of the tool ended, as the job that ran it saw it.
    struct ToolRun
    {
        bool started = false;
        QString error; ///< QProcess's error text (why it did not start, or crashed)
        int exitCode = -1;
        QProcess::ExitStatus status = QProcess::CrashExit;
        QByteArray out;  ///< stdout (the probe's device list)
        QByteArray rest; ///< stderr not handed out as lines (the probe's, or a last partial line)
    };

    explicit CalibrationPanel(QWidget* parent = nullptr);
    ~CalibrationPanel() override;

    CalibrationView* view() const { return m_view; }
    bool hasProfile() const { return m_hasProfile; }
    const CalibrationProfile& profile() const { return m_profile; }
    /// The file the profile was loaded from or last saved to; empty for unsaved imports.
    QString profilePath() const { return m_path; }
    /// The last error shown in the panel (empty when the last action succeeded).
    QString errorText() const;

    MeasureState measureState() const { return m_measureState; }
    /// Why "Run measurement…" is enabled or not (also its tooltip).
    QString measureStatusText() const { return m_measureStatus; }
    bool isMeasuring() const;
    /// paralens-measure's path: next to this executable, in the build tree (../measure), or on
    /// PATH; $PARALENS_MEASURE overrides. Empty when not found.
    static QString locateMeasureTool();
    /// Uses `path` as the tool (empty: not built) and probes it again. For tests and settings.
    void setMeasureTool(const QString& path);
    /// Milliseconds between terminate() and kill() on Cancel (default 3000).
    void setCancelGracePeriod(int ms) { m_graceMs = ms; }

    QPushButton* importButton() const { return m_importButton; }
    QPushButton* loadButton() const { return m_loadButton; }
    QPushButton* saveButton() const { return m_saveButton; }
    QPushButton* measureButton() const { return m_measureButton; }
    QPushButton* cancelButton() const { return m_cancelButton; }
    QPushButton* fitButton() const { return m_fitButton; }
    /// The running or last fit to measured runs (calibrationpanel_fit.cpp).
    FitJob* fitJob() const { return m_fit; }
    /// The fit's error before and after, as shown ("" before the first fit).
    QString fitText() const;
    QProgressBar* progressBar() const { return m_progress; }

public slots:
    /// The scenario's cluster, for the view's datasheet curve.
    void setCluster(const paralens::ClusterSpec& cluster);
    /// Adds nccl-tests logs (or profile JSON files) to the current profile, fitted by core.
    /// All or nothing: on any error the previous profile stays and the error is shown.
    bool importFiles(const QStringList& paths);
    /// Replaces the profile with a profile file; emits profileChanged(path).
    bool loadProfile(const QString& path);
    /// Writes the profile atomically (QSaveFile); emits profileChanged(path).
    bool saveProfile(const QString& path);
    /// Shows a profile made elsewhere (path may be empty: unsaved); emits profileChanged(path).
    void setProfile(const paralens::CalibrationProfile& profile, const QString& path = {});
    /// Runs `paralens-measure ARGS... --out OUT`; loads OUT when it finishes. Returns false when
    /// the tool is unavailable or already running.
    bool startMeasurement(const QString& outPath, const QStringList& args = {"all"});
    /// terminate(), then kill() after the grace period.
    void cancelMeasurement();
    /// Fits the model's constants to the runs in `files` (CSV rows on `hardware`) in the
    /// background; when it succeeds the profile gets the fitted constants (unsaved) and the
    /// error before and after is shown. False (error shown) when the files cannot be read or a
    /// fit is running.
    bool fitToRuns(const QStringList& files, const QString& hardware = {});

    void importDialog();
    void loadDialog();
    void saveDialog();
    void measureDialog();
    void fitDialog();

signals:
    /// The panel's profile changed. `path` is its file, empty when it exists only in memory
    /// (imported logs not yet saved): point the scenario's calibration at a non-empty path.
    void profileChanged(const QString& path);
    /// paralens-measure finished (ok: exit 0 and a profile was loaded).
    void measurementFinished(bool ok);
    /// A fit to measured runs finished (ok: the profile holds its constants).
    void fitFinished(bool ok);

private:
    void showError(const QString& message);
    void clearError();
    void updateSummary();
    void updateMeasureButton();
    void probe();
    void probeFinished(const ToolRun& run);
    void progressLine(const QByteArray& line);
    void runFinished(const ToolRun& run);
    void setMeasuring(bool on);
    void setUpFit(QBoxLayout* actions, QBoxLayout* column);
    void fitDone();

    CalibrationView* m_view = nullptr;
    CalibrationProfile m_profile;
    bool m_hasProfile = false;
    bool m_showWarnings = false; ///< the summary lists the profile's warnings
    QString m_path;

    QPushButton* m_importButton = nullptr;
    QPushButton* m_loadButton = nullptr;
    QPushButton* m_saveButton = nullptr;
    QPushButton* m_measureButton = nullptr;
    QPushButton* m_cancelButton = nullptr;
    QPushButton* m_fitButton = nullptr;
    QLabel* m_fitLabel = nullptr;
    FitJob* m_fit = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_progressLabel = nullptr;
    QLabel* m_measureLabel = nullptr;
    QLabel* m_summaryLabel = nullptr;
    QLabel* m_errorLabel = nullptr;

    QString m_tool;
    MeasureState m_measureState = MeasureState::Checking;
    QString m_measureStatus;
    QString m_runOut;
    QStringList m_runErrors;
    bool m_cancelled = false;
    bool m_measuring = false;
    int m_graceMs = 3000;
    // Last: destroyed first, killing a running tool and waiting for it.
    BackgroundJob<ToolRun> m_probeJob;
    BackgroundJob<ToolRun> m_runJob;
};

} // namespace paralens
