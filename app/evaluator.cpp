// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/evaluator.h"
#include "core/calibration.h"
#include "core/error.h"
#include "core/evaluate.h"

#include <QFuture>
#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

namespace paralens {

QString Evaluation::reason() const
{
    if (!failure.isEmpty())
        return failure;
    QStringList lines;
    for (const ValidationError& e : errors)
        lines << QString::fromStdString(e.message);
    return lines.join(QLatin1Char('\n'));
}

Evaluator::Evaluator(QObject* parent) : QObject(parent) {}

Evaluation Evaluator::evaluateScenario(const Scenario& s, quint64 generation,
                                       const MeasuredPerformance* measured)
{
    Evaluation e;
    e.generation = generation;
    e.scenario = s;
    try {
        e.errors = validate(s);
        if (e.errors.empty()) {
            auto timeline = std::make_shared<PipelineTimeline>();
            evaluate(s, e.estimate, measured, ModelConstants{}, timeline.get());
            e.timeline = std::move(timeline);
        }
    } catch (const std::exception& ex) {
        e.failure =
            QObject::tr("The model failed on this plan: %1").arg(QString::fromUtf8(ex.what()));
    }
    return e;
}

std::shared_ptr<const MeasuredPerformance> Evaluator::calibrationFor(const Scenario& s,
                                                                     QString* note)
{
    if (s.calibration.empty()) {
        note->clear();
        return nullptr;
    }
    const QString key = QStringLiteral("%1|%2|%3|%4")
                            .arg(QString::fromStdString(s.calibration), m_baseDir)
                            .arg(s.cluster.gpu.bf16_tflops)
                            .arg(s.cluster.gpu.fp8_tflops);
    if (key != m_calibKey) {
        m_calibKey = key;
        m_calib.reset();
        m_calibNote.clear();
        try {
            m_calib = loadCalibration(s, m_baseDir.toStdString());
        } catch (const InputError& ex) {
            // The plan still evaluates on datasheet figures; the note tells the user why.
            m_calibNote = tr("calibration not used: %1").arg(QString::fromStdString(ex.what()));
        }
    }
    *note = m_calibNote;
    return m_calib;
}

void Evaluator::request(const Scenario& s)
{
    ++m_generation;
    if (m_running) { // replaces any older waiting request: only the newest is worth computing
        m_next = s;
        m_waiting = true;
        return;
    }
    start(s);
}

void Evaluator::start(const Scenario& s)
{
    const quint64 generation = m_generation;
    m_running = true;
    ++m_started;
    QString note;
    std::shared_ptr<const MeasuredPerformance> calib = calibrationFor(s, &note);
    // A watcher owned by this object, not QFuture::then(this, ...): with then(), an Evaluator
    // destroyed while a job runs (a window closed mid-evaluation) trips Qt's ASSERT "context"
    // in qfuture_impl.h (Debug builds, e.g. make test-asan); a destroyed
    // watcher simply never delivers.
    auto* watcher = new QFutureWatcher<Evaluation>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
        const Evaluation e = watcher->result();
        watcher->deleteLater();
        m_running = false;
        if (m_waiting) {
            m_waiting = false;
            start(m_next);
        } else if (e.generation == m_generation) { // drop results a newer request overtook
            emit finished(e);
        }
    });
    watcher->setFuture(QtConcurrent::run([s, generation, calib, note] {
        Evaluation e = evaluateScenario(s, generation, calib.get());
        e.calibration = note;
        return e;
    }));
}

Evaluation Evaluator::evaluateNow(const Scenario& s)
{
    m_waiting = false; // superseded, like the running one whose result will be dropped
    QString note;
    const auto calib = calibrationFor(s, &note);
    Evaluation e = evaluateScenario(s, ++m_generation, calib.get());
    e.calibration = note;
    return e;
}

} // namespace paralens
