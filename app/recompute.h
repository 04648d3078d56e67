// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/estimate.h"
#include "core/scenario.h"
#include "core/validate.h"

#include <QObject>
#include <QString>

#include <vector>

namespace paralens {

/// The result of evaluating one scenario: either validation errors or an Estimate.
struct Evaluation
{
    quint64 generation = 0;
    Scenario scenario;
    std::vector<ValidationError> errors;
    Estimate estimate;
    QString failure; ///< an exception from the core (a bug), shown like a validation error

    bool ok() const { return errors.empty() && failure.isEmpty(); }
    /// One line naming why there is no estimate ("" when ok()).
    QString reason() const;
};

/// Evaluates scenarios off the GUI thread. Each request gets a new generation; a result that
/// arrives after a newer request was made is dropped, so a slider drag never shows a stale
/// plan's numbers.
class Evaluator : public QObject
{
    Q_OBJECT
public:
    explicit Evaluator(QObject* parent = nullptr);

    /// Starts evaluating `s` on the thread pool; finished() follows unless a newer request
    /// overtakes it.
    void request(const Scenario& s);
    /// Evaluates on the calling thread and emits finished() before returning.
    void computeNow(const Scenario& s);
    /// Validation and evaluation in one call; thread-safe (the core has no global state).
    static Evaluation evaluateScenario(const Scenario& s, quint64 generation = 0);

    quint64 generation() const { return m_generation; }
    /// Starts a new generation without a request, so pending results are dropped; returns it.
    quint64 supersede() { return ++m_generation; }
    bool isBusy() const { return m_pending > 0; }

signals:
    void finished(const paralens::Evaluation& evaluation);

private:
    quint64 m_generation = 0;
    int m_pending = 0;
};

} // namespace paralens
