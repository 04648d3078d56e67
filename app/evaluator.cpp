// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/evaluator.h"
#include "core/calibration.h"
#include "core/error.h"
#include "core/evaluate.h"
#include "widgets/field_labels.h"

#include <atomic>

namespace paralens {
namespace {

std::atomic<quint64> g_validations{0};

} // namespace

QString Evaluation::reason() const
{
    if (!failure.isEmpty())
        return failure;
    QStringList lines;
    for (const ValidationError& e : errors)
        lines << withFieldLabels(e.message); // on screen: the controls' labels, not JSON keys
    return lines.join(QLatin1Char('\n'));
}

Evaluator::Evaluator(QObject* parent)
    : QObject(parent), m_job(this, [this](Evaluation e) { emit finished(e); })
{
}

quint64 Evaluator::validationCount()
{
    return g_validations.load(std::memory_order_relaxed);
}

Evaluation Evaluator::evaluateScenario(const Scenario& s, quint64 generation,
                                       const MeasuredPerformance* measured)
{
    Evaluation e;
    e.generation = generation;
    e.scenario = s;
    try {
        e.errors = validate(s);
        g_validations.fetch_add(1, std::memory_order_relaxed);
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
    QString note;
    std::shared_ptr<const MeasuredPerformance> calib = calibrationFor(s, &note);
    m_job.start([s, calib, note](const JobTicket& ticket) {
        Evaluation e = evaluateScenario(s, ticket.generation, calib.get());
        e.calibration = note;
        return e;
    });
}

Evaluation Evaluator::evaluateNow(const Scenario& s)
{
    m_job.discard(); // superseded: a running evaluation's result will be dropped
    QString note;
    const auto calib = calibrationFor(s, &note);
    Evaluation e = evaluateScenario(s, m_job.generation(), calib.get());
    e.calibration = note;
    return e;
}

} // namespace paralens
