// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include <QFutureWatcher>
#include <QObject>
#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

namespace paralens {

/// What a running job sees: its generation (to tag the progress it posts back) and two flags it
/// may poll. `stop` asks it to end early with what it has (Cancel); `abandoned` says nobody
/// will read the result (superseded, or its owner is closing), so it may end at once.
struct JobTicket
{
    quint64 generation = 0;
    const std::atomic<bool>* stop = nullptr;
    const std::atomic<bool>* abandoned = nullptr;

    bool stopRequested() const { return stop->load(std::memory_order_relaxed); }
    bool isAbandoned() const { return abandoned->load(std::memory_order_relaxed); }
};

/// The one pattern for long work behind a view (the evaluator, the search, the calibration
/// tool): one job at a time on a thread of its own, results delivered on the owner's thread.
///
/// Every start() makes a new generation. A job started while another runs waits behind it,
/// replacing any job already waiting, and the running one is abandoned: its result is dropped.
/// So a burst of requests costs two jobs, never a stale result. cancel() asks the newest job
/// to end early and still delivers its (partial) result; discard() delivers nothing.
///
/// The watcher is a member, not QFuture::then(owner, ...): a destroyed member watcher simply
/// never delivers, whereas then() with a destroyed context trips Qt's ASSERT "context" in
/// Debug builds. The destructor abandons the job and waits for it, so a job may use the owner
/// (post()) until it returns: closing a window mid-job is safe.
template <typename T> class BackgroundJob
{
public:
    using Work = std::function<T(const JobTicket&)>;
    using Done = std::function<void(T result)>;

    /// `done` receives each result that no newer start() or discard() overtook, on the thread
    /// of `owner`, which must outlive this object (make it a member of the owner).
    BackgroundJob(QObject* owner, Done done) : m_owner(owner), m_done(std::move(done))
    {
        m_pool.setMaxThreadCount(1); // its own thread: a long job never starves another kind
        QObject::connect(&m_watcher, &QFutureWatcherBase::finished, owner, [this] { finish(); });
    }
    ~BackgroundJob()
    {
        discard();
        m_watcher.disconnect();
        m_pool.waitForDone();
    }
    BackgroundJob(const BackgroundJob&) = delete;
    BackgroundJob& operator=(const BackgroundJob&) = delete;

    /// Runs `work` now, or after the running job (which is abandoned). Returns its generation.
    quint64 start(Work work)
    {
        Job job;
        job.work = std::move(work);
        job.generation = ++m_generation;
        if (m_running) {
            m_running->abandon();
            m_waiting = std::move(job);
        } else {
            launch(std::move(job));
        }
        return m_generation;
    }

    /// Asks the newest job to end early; its result, partial, is still delivered.
    void cancel()
    {
        if (m_waiting)
            m_waiting->flags->stop = true;
        else if (m_running && m_running->generation == m_generation)
            m_running->flags->stop = true;
    }

    /// Abandons the running and the waiting job: nothing more is delivered for either.
    void discard()
    {
        ++m_generation;
        m_waiting.reset();
        if (m_running)
            m_running->abandon();
    }

    /// Runs `f` on the owner's thread, unless job `generation` was superseded by then. Safe to
    /// call from the job's thread (it reads nothing that changes).
    void post(quint64 generation, std::function<void()> f) const
    {
        QMetaObject::invokeMethod(
            m_owner,
            [this, generation, f = std::move(f)] {
                if (isCurrent(generation) && isRunning())
                    f();
            },
            Qt::QueuedConnection);
    }

    /// A job is on its thread (it may have been abandoned).
    bool isRunning() const { return m_running.has_value(); }
    /// A job runs or waits.
    bool isBusy() const { return m_running || m_waiting; }
    /// The generation of the newest start() or discard().
    quint64 generation() const { return m_generation; }
    bool isCurrent(quint64 generation) const { return generation == m_generation; }
    /// Jobs launched so far (tests, benchmarks).
    quint64 startedCount() const { return m_started; }

private:
    struct Flags
    {
        std::atomic<bool> stop{false};
        std::atomic<bool> abandoned{false};
    };
    struct Job
    {
        Work work;
        quint64 generation = 0;
        std::shared_ptr<Flags> flags = std::make_shared<Flags>();

        void abandon()
        {
            flags->abandoned = true;
            flags->stop = true;
        }
    };

    void launch(Job job)
    {
        ++m_started;
        JobTicket ticket{job.generation, &job.flags->stop, &job.flags->abandoned};
        // The flags travel with the job, so they outlive this object if the job does.
        m_watcher.setFuture(
            QtConcurrent::run(&m_pool, [work = std::move(job.work), flags = job.flags, ticket] {
                return work(ticket);
            }));
        job.work = nullptr;
        m_running = std::move(job);
    }

    void finish()
    {
        const bool current = m_running && m_running->generation == m_generation;
        T result = m_watcher.future().takeResult();
        m_running.reset();
        if (m_waiting) {
            Job next = std::move(*m_waiting);
            m_waiting.reset();
            launch(std::move(next));
        } else if (current) {
            m_done(std::move(result));
        }
    }

    QObject* const m_owner;
    Done m_done;
    QThreadPool m_pool;
    QFutureWatcher<T> m_watcher;
    std::optional<Job> m_running;
    std::optional<Job> m_waiting;
    quint64 m_generation = 0;
    quint64 m_started = 0;
};

} // namespace paralens
