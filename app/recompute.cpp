// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/recompute.h"
#include "core/evaluate.h"

#include <QFuture>
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

Evaluation Evaluator::evaluateScenario(const Scenario& s, quint64 generation)
{
    Evaluation e;
    e.generation = generation;
    e.scenario = s;
    try {
        e.errors = validate(s);
        if (e.errors.empty())
            evaluate(s, e.estimate);
    } catch (const std::exception& ex) {
        e.failure =
            QObject::tr("The model failed on this plan: %1").arg(QString::fromUtf8(ex.what()));
    }
    return e;
}

void Evaluator::request(const Scenario& s)
{
    const quint64 generation = ++m_generation;
    ++m_pending;
    QtConcurrent::run([s, generation] {
        return evaluateScenario(s, generation);
    }).then(this, [this](const Evaluation& e) {
        --m_pending;
        if (e.generation == m_generation) // drop results a newer request has overtaken
            emit finished(e);
    });
}

void Evaluator::computeNow(const Scenario& s)
{
    emit finished(evaluateScenario(s, ++m_generation));
}

} // namespace paralens
