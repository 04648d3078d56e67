// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/fit.h"
#include "widgets/backgroundjob.h"

#include <QObject>
#include <QStringList>

#include <vector>

namespace paralens {

/// What a background fit gives back: the result, or the named error that stopped it.
struct FitOutcome
{
    FitResult result;
    QString error;
    QStringList sources; ///< the runs files, for the profile's provenance
};

/// Runs fitConstants() off the GUI thread (a BackgroundJob); finished() follows on the GUI
/// thread. A destroyed job waits for its fit.
class FitJob : public QObject
{
    Q_OBJECT
public:
    explicit FitJob(QObject* parent = nullptr);

    /// Starts fitting `runs`; false (and nothing started) while a fit runs.
    bool start(std::vector<MeasuredRun> runs, const FitOptions& options,
               const QStringList& sources);
    bool isRunning() const { return m_job.isBusy(); }
    /// The last finished fit.
    const FitOutcome& outcome() const { return m_outcome; }
    /// The fitted constants of outcome(), with the runs files as their sources.
    FittedConstants constants() const;

signals:
    void finished();

private:
    FitOutcome m_outcome;
    BackgroundJob<FitOutcome> m_job; // last: waits for a running fit before the rest goes
};

} // namespace paralens
