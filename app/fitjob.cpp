// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/fitjob.h"
#include "core/error.h"

#include <QFileInfo>
#include <QtConcurrent/QtConcurrentRun>

namespace paralens {

FitJob::FitJob(QObject* parent) : QObject(parent)
{
    connect(&m_watcher, &QFutureWatcherBase::finished, this, [this] {
        m_outcome = m_watcher.result();
        emit finished();
    });
}

FitJob::~FitJob()
{
    m_watcher.waitForFinished();
}

bool FitJob::start(std::vector<MeasuredRun> runs, const FitOptions& options,
                   const QStringList& sources)
{
    if (isRunning())
        return false;
    m_watcher.setFuture(QtConcurrent::run([runs = std::move(runs), options, sources] {
        FitOutcome out;
        out.sources = sources;
        try {
            out.result = fitConstants(runs, options);
        } catch (const InputError& e) {
            out.error = QString::fromStdString(e.what());
        }
        return out;
    }));
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
