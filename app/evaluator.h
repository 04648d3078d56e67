// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/collective.h"
#include "core/estimate.h"
#include "core/pipeline_cost.h"
#include "core/scenario.h"
#include "core/validate.h"
#include "widgets/backgroundjob.h"

#include <QObject>
#include <QString>

#include <memory>
#include <vector>

namespace paralens {

/// The result of evaluating one scenario: either validation errors or an Estimate.
struct Evaluation
{
    quint64 generation = 0;
    Scenario scenario;
    std::vector<ValidationError> errors;
    Estimate estimate;
    /// The simulated schedule behind estimate.time (shared: evaluations are copied around).
    std::shared_ptr<const PipelineTimeline> timeline;
    QString failure;     ///< an exception from the core (a bug), shown like a validation error
    QString calibration; ///< why the scenario's calibration profile was not used ("" if it was)

    bool ok() const { return errors.empty() && failure.isEmpty(); }
    /// One line naming why there is no estimate ("" when ok()).
    QString reason() const;
};

/// Evaluates scenarios off the GUI thread (a BackgroundJob). Each request gets a new
/// generation; a result that arrives after a newer request was made is dropped, so a slider
/// drag never shows a stale plan's numbers. At most one evaluation runs at a time and only the
/// newest request waits behind it, so a burst of edits (a held key, a long undo) costs two
/// evaluations, not one per edit. The scenario's calibration profile is read once and reused
/// while its path and the GPU's peaks stay the same.
///
/// Each evaluation validates its scenario exactly once, and its Evaluation carries the errors
/// to every consumer (the panel's marks, the status line, the views): nothing else on the way
/// from an edit to the views validates it again.
class Evaluator : public QObject
{
    Q_OBJECT
public:
    explicit Evaluator(QObject* parent = nullptr);

    /// Folder against which a relative calibration path is resolved (the scenario file's).
    void setBaseDir(const QString& dir) { m_baseDir = dir; }

    /// Starts evaluating `s` off the GUI thread; finished() follows unless a newer request
    /// overtakes it.
    void request(const Scenario& s);
    /// Evaluates on the calling thread (superseding pending requests) and returns the result.
    Evaluation evaluateNow(const Scenario& s);
    /// Validation and evaluation in one call; thread-safe (the core has no global state).
    static Evaluation evaluateScenario(const Scenario& s, quint64 generation = 0,
                                       const MeasuredPerformance* measured = nullptr);
    /// Scenarios validated by evaluateScenario() in this process so far, on every thread
    /// (tests count one per change).
    static quint64 validationCount();

    quint64 generation() const { return m_job.generation(); }
    bool isBusy() const { return m_job.isBusy(); }
    /// Evaluations started off the GUI thread so far (tests, benchmarks).
    quint64 startedCount() const { return m_job.startedCount(); }

signals:
    void finished(const paralens::Evaluation& evaluation);

private:
    /// The profile for `s` (cached), or nullptr with `note` saying why when it cannot be used.
    std::shared_ptr<const MeasuredPerformance> calibrationFor(const Scenario& s, QString* note);

    QString m_baseDir;
    QString m_calibKey;
    QString m_calibNote;
    std::shared_ptr<const MeasuredPerformance> m_calib;
    BackgroundJob<Evaluation> m_job; // last: it waits for a running job before the rest goes
};

} // namespace paralens
