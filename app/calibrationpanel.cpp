// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/calibrationpanel.h"

#include "core/error.h"
#include "core/input_file.h"
#include "core/measure_exit_codes.h"
#include "widgets/calibrationview.h"
#include "widgets/palette.h"
#include "widgets/units.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSaveFile>
#include <QStandardPaths>
#include <QVBoxLayout>

namespace paralens {
namespace {

constexpr int kProbeTimeoutMs = 20000;
constexpr int kPollMs = 20; // how often a running tool's job looks at its stop flags

/// How a job runs the tool: how long it may take (0: no limit), how long it has between
/// terminate() and kill() once asked to stop, and whether its stdout is thrown away.
struct ToolLimits
{
    int timeoutMs = 0;
    int graceMs = 0;
    bool discardStdout = false;
};

/// Runs `tool args` on the job's thread until it exits. Asked to stop, the tool gets
/// terminate() and, `graceMs` later, kill(); abandoned or past its time, kill() at once. Each
/// complete stderr line goes to `onLine` when given; the rest of stderr comes back in `rest`.
CalibrationPanel::ToolRun runTool(const QString& tool, const QStringList& args,
                                  const ToolLimits& limits, const JobTicket& ticket,
                                  const std::function<void(const QByteArray&)>& onLine)
{
    CalibrationPanel::ToolRun run;
    QProcess p;
    if (limits.discardStdout)
        p.setStandardOutputFile(QProcess::nullDevice());
    p.start(tool, args);
    run.started = p.waitForStarted();
    if (!run.started) {
        run.error = p.errorString();
        return run;
    }
    QElapsedTimer clock;
    clock.start();
    qint64 terminatedAt = -1;
    bool killed = false;
    auto drain = [&] {
        run.rest += p.readAllStandardError();
        for (qsizetype nl; onLine && (nl = run.rest.indexOf('\n')) >= 0;) {
            onLine(run.rest.left(nl));
            run.rest.remove(0, nl + 1);
        }
    };
    while (p.state() != QProcess::NotRunning) {
        p.waitForFinished(kPollMs);
        drain();
        if (killed)
            continue;
        const bool late = limits.timeoutMs > 0 && clock.elapsed() > limits.timeoutMs;
        const bool graceOver =
            terminatedAt >= 0 && clock.elapsed() - terminatedAt >= limits.graceMs;
        if (ticket.isAbandoned() || late || graceOver) {
            p.kill();
            killed = true;
        } else if (terminatedAt < 0 && ticket.stopRequested()) {
            p.terminate();
            terminatedAt = clock.elapsed();
        }
    }
    drain();
    run.exitCode = p.exitCode();
    run.status = p.exitStatus();
    run.error = p.errorString();
    run.out = p.readAllStandardOutput();
    return run;
}

QString describe(const std::exception& e)
{
    QString msg = QString::fromUtf8(e.what());
    if (const auto* in = dynamic_cast<const InputError*>(&e)) {
        const QString field = QString::fromStdString(in->field());
        if (!field.isEmpty() && !msg.contains(field))
            msg = field + QStringLiteral(": ") + msg;
    }
    return msg;
}

/// "1 GPU", "8 GPUs" (no translator is installed for the plural forms of %n).
QString count(int n, const QString& one, const QString& many)
{
    return QStringLiteral("%1 %2").arg(n).arg(n == 1 ? one : many);
}

/// "PATH: message", unless the message already starts with the path (core's "file:line: ...").
QString withPath(const QString& path, const QString& message)
{
    return message.startsWith(path) ? message : path + QStringLiteral(": ") + message;
}

QString lastDir()
{
    return QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
}

} // namespace

CalibrationPanel::CalibrationPanel(QWidget* parent)
    : QWidget(parent), m_probeJob(this, [this](ToolRun run) { probeFinished(run); }),
      m_runJob(this, [this](ToolRun run) { runFinished(run); })
{
    setObjectName(QStringLiteral("calibrationPanel"));
    m_view = new CalibrationView(this);

    auto button = [this](const QString& text, const char* name) {
        auto* b = new QPushButton(text, this);
        b->setObjectName(QLatin1String(name));
        return b;
    };
    m_importButton = button(tr("&Import nccl-tests log…"), "calibrationImport");
    m_importButton->setToolTip(tr("Add nccl-tests logs (or profiles) to this profile; each "
                                  "table is fitted with a latency and a bus bandwidth"));
    m_loadButton = button(tr("&Load profile…"), "calibrationLoad");
    m_saveButton = button(tr("&Save profile…"), "calibrationSave");
    m_measureButton = button(tr("&Run measurement…"), "calibrationMeasure");
    m_cancelButton = button(tr("Cancel"), "calibrationCancel");
    m_cancelButton->setVisible(false);
    m_progress = new QProgressBar(this);
    m_progress->setObjectName(QStringLiteral("calibrationProgress"));
    m_progress->setAccessibleName(tr("Measurement progress"));
    m_progress->setVisible(false);
    m_progressLabel = new QLabel(this);
    m_progressLabel->setObjectName(QStringLiteral("calibrationProgressLabel"));
    m_measureLabel = new QLabel(this);
    m_measureLabel->setObjectName(QStringLiteral("calibrationMeasureLabel"));
    m_measureLabel->setWordWrap(true);
    m_summaryLabel = new QLabel(this);
    m_summaryLabel->setObjectName(QStringLiteral("calibrationSummary"));
    m_summaryLabel->setWordWrap(true);
    m_summaryLabel->setTextFormat(Qt::RichText);
    m_summaryLabel->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::LinksAccessibleByMouse |
                                            Qt::LinksAccessibleByKeyboard);
    connect(m_summaryLabel, &QLabel::linkActivated, this, [this] {
        m_showWarnings = !m_showWarnings;
        updateSummary();
    });
    m_errorLabel = new QLabel(this);
    m_errorLabel->setObjectName(QStringLiteral("calibrationError"));
    m_errorLabel->setWordWrap(true);
    m_errorLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_errorLabel->setStyleSheet(
        QStringLiteral("color: %1;").arg(palette::warning(palette()).name()));
    m_errorLabel->setVisible(false);

    // Two short rows (files; measuring and fitting), so the dock fits a narrow screen.
    auto* files = new QHBoxLayout;
    files->addWidget(m_importButton);
    files->addWidget(m_loadButton);
    files->addWidget(m_saveButton);
    files->addStretch();
    auto* actions = new QHBoxLayout;
    actions->addWidget(m_measureButton);
    actions->addWidget(m_progress, 1);
    actions->addWidget(m_cancelButton);
    actions->addStretch();
    m_progress->setFormat(tr("%p %"));
    m_progress->setTextVisible(true);
    m_progressLabel->setWordWrap(true);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(files);
    layout->addLayout(actions);
    layout->addWidget(m_measureLabel);
    layout->addWidget(m_progressLabel);
    layout->addWidget(m_summaryLabel);
    layout->addWidget(m_errorLabel);
    setUpFit(actions, layout);
    layout->addWidget(m_view, 1);

    connect(m_importButton, &QPushButton::clicked, this, &CalibrationPanel::importDialog);
    connect(m_loadButton, &QPushButton::clicked, this, &CalibrationPanel::loadDialog);
    connect(m_saveButton, &QPushButton::clicked, this, &CalibrationPanel::saveDialog);
    connect(m_measureButton, &QPushButton::clicked, this, &CalibrationPanel::measureDialog);
    connect(m_cancelButton, &QPushButton::clicked, this, &CalibrationPanel::cancelMeasurement);

    updateSummary();
    m_progressLabel->setVisible(false);
    m_tool = locateMeasureTool();
    probe();
}

// The jobs go first: they kill a running measurement or probe and wait for it, so none is
// left running behind a closed window.
CalibrationPanel::~CalibrationPanel() = default;

QString CalibrationPanel::errorText() const
{
    return m_errorLabel->isHidden() ? QString() : m_errorLabel->text();
}

bool CalibrationPanel::isMeasuring() const
{
    return m_measuring;
}

QString CalibrationPanel::locateMeasureTool()
{
    const QString env = qEnvironmentVariable("PARALENS_MEASURE");
    if (!env.isEmpty())
        return QFileInfo(env).isExecutable() ? QFileInfo(env).absoluteFilePath() : QString();
    const QString name = QStringLiteral("paralens-measure");
    const QString dir = QCoreApplication::applicationDirPath();
    for (const QString& candidate :
         {dir + QLatin1Char('/') + name, dir + QStringLiteral("/../measure/") + name}) {
        const QFileInfo fi(candidate);
        if (fi.isFile() && fi.isExecutable())
            return fi.canonicalFilePath();
    }
    return QStandardPaths::findExecutable(name);
}

void CalibrationPanel::setMeasureTool(const QString& path)
{
    m_tool = path;
    probe();
}

void CalibrationPanel::setCluster(const ClusterSpec& cluster)
{
    m_view->setCluster(cluster);
}

// ---- profile actions ----

bool CalibrationPanel::importFiles(const QStringList& paths)
{
    if (paths.isEmpty())
        return false;
    CalibrationProfile next = m_profile;
    if (!m_hasProfile) {
        next = CalibrationProfile{};
        next.tool = QStringLiteral("paralens %1").arg(PARALENS_VERSION).toStdString();
        next.created = QDateTime::currentDateTimeUtc().toString(Qt::ISODate).toStdString();
    }
    for (const QString& path : paths) {
        const std::string source = path.toStdString();
        try {
            // Refused by size before reading (docs/limits.md): logs and profiles share 64 MiB.
            const std::string text = readInputFile(source, kMaxNcclLogFileBytes, "file", source);
            const QByteArray bytes = QByteArray::fromRawData(text.data(), qsizetype(text.size()));
            if (!looksLikeNcclLog(text) && bytes.trimmed().startsWith('{')) {
                mergeProfile(next, parseProfile(text, source));
            } else {
                NcclLogConfig config;
                config.source = source;
                addNcclLog(next, parseNcclLog(text, config), source);
            }
        } catch (const std::exception& e) {
            showError(tr("Could not import %1").arg(withPath(path, describe(e))));
            return false;
        }
    }
    setProfile(next, QString());
    return true;
}

bool CalibrationPanel::loadProfile(const QString& path)
{
    try {
        CalibrationProfile p = loadProfileFile(path.toStdString());
        setProfile(p, QFileInfo(path).absoluteFilePath());
        return true;
    } catch (const std::exception& e) {
        showError(tr("Could not load %1").arg(withPath(path, describe(e))));
        return false;
    }
}

bool CalibrationPanel::saveProfile(const QString& path)
{
    if (!m_hasProfile) {
        showError(tr("Nothing to save: import a log, load a profile or run a measurement first."));
        return false;
    }
    QSaveFile f(path);
    const std::string text = profileToText(m_profile);
    if (!f.open(QIODevice::WriteOnly) || f.write(text.data(), qint64(text.size())) < 0 ||
        !f.commit()) {
        showError(tr("Could not save %1: %2").arg(path, f.errorString()));
        return false;
    }
    m_path = QFileInfo(path).absoluteFilePath();
    clearError();
    updateSummary();
    emit profileChanged(m_path);
    return true;
}

void CalibrationPanel::setProfile(const CalibrationProfile& profile, const QString& path)
{
    m_profile = profile;
    m_hasProfile = true;
    m_path = path;
    m_view->setProfile(m_profile);
    clearError();
    updateSummary();
    emit profileChanged(m_path);
}

void CalibrationPanel::importDialog()
{
    const QStringList paths = QFileDialog::getOpenFileNames(
        this, tr("Import nccl-tests log"), lastDir(),
        tr("nccl-tests logs and profiles (*.txt *.log *.out *.json);;All files (*)"));
    if (!paths.isEmpty())
        importFiles(paths);
}

void CalibrationPanel::loadDialog()
{
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Load calibration profile"), lastDir(),
                                     tr("Calibration profiles (*.json);;All files (*)"));
    if (!path.isEmpty())
        loadProfile(path);
}

void CalibrationPanel::saveDialog()
{
    const QString start =
        m_path.isEmpty() ? lastDir() + QStringLiteral("/calibration.json") : m_path;
    const QString path = QFileDialog::getSaveFileName(this, tr("Save calibration profile"), start,
                                                      tr("Calibration profiles (*.json)"));
    if (!path.isEmpty())
        saveProfile(path);
}

void CalibrationPanel::measureDialog()
{
    const QString start =
        lastDir() +
        QStringLiteral("/paralens-profile-%1.json")
            .arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmm")));
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Run measurement: write the profile to"), start,
                                     tr("Calibration profiles (*.json)"));
    if (!path.isEmpty())
        startMeasurement(path);
}

// ---- messages ----

void CalibrationPanel::showError(const QString& message)
{
    m_errorLabel->setText(message);
    m_errorLabel->setVisible(true);
}

void CalibrationPanel::clearError()
{
    m_errorLabel->clear();
    m_errorLabel->setVisible(false);
}

void CalibrationPanel::updateSummary()
{
    m_saveButton->setEnabled(m_hasProfile);
    if (!m_hasProfile) {
        m_summaryLabel->setText(
            tr("No calibration profile: the model uses datasheet figures.").toHtmlEscaped());
        m_summaryLabel->setToolTip({});
        return;
    }
    const auto& s = m_profile.system;
    QStringList parts;
    if (!s.gpu_name.empty())
        parts << QString::fromStdString(s.gpu_name);
    if (s.gpu_count > 0)
        parts << tr("%1 on %2")
                     .arg(count(s.gpu_count, tr("GPU"), tr("GPUs")),
                          count(std::max(1, s.nodes), tr("node"), tr("nodes")));
    if (!s.nccl_version.empty())
        parts << tr("NCCL %1").arg(QString::fromStdString(s.nccl_version));
    parts << count(int(m_profile.collectives.size()), tr("curve"), tr("curves"));
    if (!m_profile.gemm.empty())
        parts << count(int(m_profile.gemm.size()), tr("GEMM shape"), tr("GEMM shapes"));
    if (m_profile.hbm_gbps)
        parts << tr("HBM %1 GB/s").arg(*m_profile.hbm_gbps, 0, 'f', 0);
    if (m_profile.model_constants)
        parts << tr("constants fitted to %1")
                     .arg(count(m_profile.model_constants->fit.runs, tr("measured run"),
                                tr("measured runs")));
    parts << (m_path.isEmpty() ? tr("not saved") : QDir::toNativeSeparators(m_path));
    QString text = parts.join(QStringLiteral(" · ")).toHtmlEscaped();
    QStringList warnings;
    for (const auto& w : m_profile.warnings)
        warnings << QString::fromStdString(w);
    // The warnings open under the summary from a link: a tooltip alone is easy to miss and
    // never shows on a window without focus.
    if (!warnings.isEmpty()) {
        text += QStringLiteral(" · <a href=\"#warnings\">%1 (%2)</a>")
                    .arg(count(int(warnings.size()), tr("warning"), tr("warnings")),
                         m_showWarnings ? tr("hide") : tr("show"));
        if (m_showWarnings)
            for (const QString& w : warnings)
                text += QStringLiteral("<br>• ") + w.toHtmlEscaped();
    }
    m_summaryLabel->setText(text);
    m_summaryLabel->setToolTip(warnings.join(QLatin1Char('\n')));
}

// ---- paralens-measure ----

void CalibrationPanel::updateMeasureButton()
{
    const bool ok = m_measureState == MeasureState::Available && !isMeasuring();
    m_measureButton->setEnabled(ok);
    m_measureButton->setToolTip(m_measureStatus);
    m_measureLabel->setText(m_measureStatus);
    m_measureLabel->setVisible(m_measureState != MeasureState::Available);
}

void CalibrationPanel::probe()
{
    if (m_tool.isEmpty()) {
        m_probeJob.discard();
        m_measureState = MeasureState::NotBuilt;
        m_measureStatus = tr("Measurement unavailable: paralens-measure was not built (it needs "
                             "the CUDA toolkit and NCCL) or is not next to paralens or on PATH.");
        updateMeasureButton();
        return;
    }
    m_measureState = MeasureState::Checking;
    m_measureStatus = tr("Checking for GPUs with %1…").arg(QDir::toNativeSeparators(m_tool));
    updateMeasureButton();
    const QString tool = m_tool;
    m_probeJob.start([tool](const JobTicket& ticket) {
        return runTool(tool, {QStringLiteral("devices")}, ToolLimits{kProbeTimeoutMs, 0, false},
                       ticket, {});
    });
}

void CalibrationPanel::probeFinished(const ToolRun& run)
{
    const QString err = QString::fromUtf8(run.rest).trimmed();
    if (run.started && run.status == QProcess::NormalExit &&
        run.exitCode == measure::ExitNoDevice) {
        m_measureState = MeasureState::NoGpu;
        m_measureStatus = tr("Measurement unavailable: no CUDA device visible on this machine "
                             "(paralens-measure found, but it sees no GPU).");
    } else if (run.started && run.status == QProcess::NormalExit &&
               run.exitCode == measure::ExitOk) {
        const QJsonArray devices =
            QJsonDocument::fromJson(run.out).object().value(QStringLiteral("devices")).toArray();
        QStringList names;
        for (const auto& d : devices)
            names << d.toObject().value(QStringLiteral("name")).toString();
        if (names.isEmpty()) {
            m_measureState = MeasureState::NoGpu;
            m_measureStatus = tr("Measurement unavailable: paralens-measure lists no GPU.");
        } else {
            m_measureState = MeasureState::Available;
            m_measureStatus = tr("Run paralens-measure on %1: %2")
                                  .arg(count(int(names.size()), tr("local GPU"), tr("local GPUs")),
                                       names.join(QStringLiteral(", ")));
        }
    } else {
        m_measureState = MeasureState::Failed;
        const QString why = !err.isEmpty() ? err.section(QLatin1Char('\n'), -1)
                            : !run.started || run.status == QProcess::CrashExit
                                ? run.error
                                : tr("exit code %1").arg(run.exitCode);
        m_measureStatus = tr("Measurement unavailable: %1 devices failed: %2")
                              .arg(QDir::toNativeSeparators(m_tool), why);
    }
    updateMeasureButton();
}

bool CalibrationPanel::startMeasurement(const QString& outPath, const QStringList& args)
{
    if (m_measureState != MeasureState::Available || isMeasuring()) {
        showError(isMeasuring() ? tr("A measurement is already running.") : m_measureStatus);
        return false;
    }
    clearError();
    m_runOut = QFileInfo(outPath).absoluteFilePath();
    m_runErrors.clear();
    m_cancelled = false;
    m_progress->setRange(0, 0);
    m_progressLabel->setText(tr("Starting paralens-measure…"));
    setMeasuring(true);
    const QString tool = m_tool;
    const QStringList command = QStringList(args) << QStringLiteral("--out") << m_runOut;
    // stdout carries the tables, which the profile holds too; stderr the progress lines.
    const ToolLimits limits{0, m_graceMs, true};
    m_runJob.start([this, tool, command, limits](const JobTicket& ticket) {
        return runTool(tool, command, limits, ticket, [this, &ticket](const QByteArray& line) {
            m_runJob.post(ticket.generation, [this, line] { progressLine(line); });
        });
    });
    return true;
}

void CalibrationPanel::setMeasuring(bool on)
{
    m_measuring = on;
    m_progress->setVisible(on);
    m_cancelButton->setVisible(on);
    m_cancelButton->setEnabled(on);
    m_progressLabel->setVisible(on || !m_progressLabel->text().isEmpty());
    m_importButton->setEnabled(!on);
    m_loadButton->setEnabled(!on);
    updateMeasureButton();
}

void CalibrationPanel::cancelMeasurement()
{
    if (!isMeasuring())
        return;
    m_cancelled = true;
    m_cancelButton->setEnabled(false);
    m_progressLabel->setText(tr("Cancelling…"));
    m_runJob.cancel(); // terminate(), then kill() after the grace period
}

void CalibrationPanel::progressLine(const QByteArray& raw)
{
    const QByteArray line = raw.trimmed();
    if (line.isEmpty())
        return;
    QJsonParseError pe;
    const QJsonObject o = QJsonDocument::fromJson(line, &pe).object();
    const QString phase = o.value(QStringLiteral("phase")).toString();
    if (pe.error != QJsonParseError::NoError || phase.isEmpty()) {
        m_runErrors << QString::fromUtf8(line); // "error: ..." and NCCL's own messages
        return;
    }
    const int done = o.value(QStringLiteral("done")).toInt(-1);
    const int total = o.value(QStringLiteral("total")).toInt(0);
    if (total > 0 && done >= 0) {
        m_progress->setRange(0, total);
        m_progress->setValue(done);
    }
    QString what = phase;
    if (phase == QLatin1String("collectives"))
        what += QStringLiteral(": %1 on %2 GPUs, %3")
                    .arg(o.value(QStringLiteral("op")).toString())
                    .arg(o.value(QStringLiteral("ranks")).toInt())
                    .arg(units::sizeBytes(o.value(QStringLiteral("size_bytes")).toDouble()));
    else if (phase == QLatin1String("gemm"))
        what += QStringLiteral(": %1 %2").arg(o.value(QStringLiteral("label")).toString(),
                                              o.value(QStringLiteral("dtype")).toString());
    else if (phase == QLatin1String("start"))
        what = tr("started on %1")
                   .arg(count(o.value(QStringLiteral("gpus")).toInt(), tr("GPU"), tr("GPUs")));
    if (total > 0 && done >= 0)
        what += QStringLiteral(" (%1/%2)").arg(done).arg(total);
    m_progressLabel->setText(what);
}

void CalibrationPanel::runFinished(const ToolRun& run)
{
    if (!run.started) {
        setMeasuring(false);
        showError(tr("Could not start %1: %2").arg(m_tool, run.error));
        return;
    }
    if (!run.rest.trimmed().isEmpty())
        m_runErrors << QString::fromUtf8(run.rest.trimmed());
    const int exitCode = run.exitCode;
    const QProcess::ExitStatus status = run.status;
    const QString errors = m_runErrors.join(QLatin1Char('\n'));
    bool ok = false;
    if (m_cancelled) {
        m_progressLabel->setText(tr("Measurement cancelled."));
    } else if (status == QProcess::CrashExit) {
        m_progressLabel->clear();
        showError(tr("paralens-measure crashed. %1").arg(errors));
    } else if (exitCode == measure::ExitNoDevice) {
        m_progressLabel->clear();
        m_measureState = MeasureState::NoGpu;
        m_measureStatus = tr("Measurement unavailable: no CUDA device visible on this machine.");
        showError(errors.isEmpty() ? m_measureStatus : errors);
    } else if (QFileInfo::exists(m_runOut) &&
               (exitCode == measure::ExitOk || exitCode == measure::ExitFailure ||
                exitCode == measure::ExitTimeout)) {
        // A failure or a hang still writes what was measured before it.
        ok = loadProfile(m_runOut) && exitCode == measure::ExitOk;
        m_progressLabel->setText(ok ? tr("Measurement finished: %1").arg(m_runOut)
                                    : tr("Measurement ended early; partial profile loaded."));
        if (exitCode != measure::ExitOk)
            showError(tr("paralens-measure exited with code %1: %2").arg(exitCode).arg(errors));
    } else {
        m_progressLabel->clear();
        showError(tr("paralens-measure exited with code %1: %2").arg(exitCode).arg(errors));
    }
    setMeasuring(false);
    emit measurementFinished(ok);
}

} // namespace paralens
