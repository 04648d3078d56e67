// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/fitjob.h"
#include "core/error.h"

#include <QFileInfo>

namespace paralens {

FitJob::FitJob(QObject* parent)
    : QObject(parent), m_job(this, [this](FitOutcome out) {
          m_outcome = std::move(out);
          emit finished();
      })
{
}

bool FitJob::start(std::vector<MeasuredRun> runs, const FitOptions& options,
                   const QStringList& sources)
{
    if (isRunning())
        return false;
    m_job.start([runs = std::move(runs), options, sources](const JobTicket&) {
        FitOutcome out;
        out.sources = sources;
        try {
            out.result = fitConstants(runs, options);
        } catch (const InputError& e) {
            out.error = QString::fromStdString(e.what());
        }
        return out;
    });
    return true;
}

FittedConstants FitJob::constants() const
{
    FittedConstants fc = m_outcome.result.constants();
    for (const QString& s : m_outcome.sources)
        fc.fit.sources.push_back(QFileInfo(s).fileName().toStdString());
    return fc;
}

} // namespace paralens
