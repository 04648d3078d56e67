// SPDX-License-Identifier: GPL-3.0-or-later
// BackgroundJob, the one pattern for long work behind a view: results arrive on the owner's
// thread, a burst of requests costs two jobs and delivers only the newest, Cancel still
// delivers the partial result, discard() delivers nothing, stale progress is dropped, and
// destroying the owner mid-job stops the job and waits for it.
#include "widgets/backgroundjob.h"

#include <QTest>
#include <QThread>

#include <atomic>
#include <chrono>
#include <thread>

using namespace paralens;

namespace {

struct Result
{
    int value = 0;
    bool stopped = false;
    bool abandoned = false;
    QThread* thread = nullptr;
};

/// Spins until `flag` or the ticket's stop flag is set (at most 10 s, so a bug fails, not hangs).
void waitFor(const std::atomic<bool>& flag, const JobTicket& t)
{
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!flag && !t.stopRequested() && std::chrono::steady_clock::now() < end)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

Result finish(int value, const JobTicket& t)
{
    return {value, t.stopRequested(), t.isAbandoned(), QThread::currentThread()};
}

} // namespace

class TestBackgroundJob : public QObject
{
    Q_OBJECT
private slots:
    void deliversOnTheOwnersThread()
    {
        QObject owner;
        QList<Result> got;
        BackgroundJob<Result> job(&owner, [&](Result r) { got << r; });
        const quint64 g = job.start([](const JobTicket& t) { return finish(7, t); });
        QCOMPARE(g, job.generation());
        QVERIFY(job.isBusy());
        QTRY_VERIFY(!job.isBusy());
        QCOMPARE(got.size(), 1);
        QCOMPARE(got[0].value, 7);
        QVERIFY(got[0].thread != QThread::currentThread()); // it ran off this thread
        QVERIFY(!got[0].stopped);
        QCOMPARE(job.startedCount(), quint64(1));
    }

    void aBurstRunsTwoJobsAndDeliversTheNewest()
    {
        QObject owner;
        QList<Result> got;
        BackgroundJob<Result> job(&owner, [&](Result r) { got << r; });
        std::atomic<bool> release{false};
        std::atomic<bool> firstAbandoned{false};
        job.start([&](const JobTicket& t) {
            waitFor(release, t);
            firstAbandoned = t.isAbandoned();
            return finish(0, t);
        });
        for (int i = 1; i <= 100; ++i)
            job.start([i](const JobTicket& t) { return finish(i, t); });
        release = true;
        QTRY_VERIFY(!job.isBusy());
        QCOMPARE(job.startedCount(), quint64(2)); // the first and the newest, none between
        QVERIFY(firstAbandoned);                  // superseded: told nobody reads its result
        QCOMPARE(got.size(), 1);
        QCOMPARE(got[0].value, 100);
        QVERIFY(!got[0].stopped);
    }

    void cancelStillDeliversThePartialResult()
    {
        QObject owner;
        QList<Result> got;
        BackgroundJob<Result> job(&owner, [&](Result r) { got << r; });
        const std::atomic<bool> never{false};
        job.start([&](const JobTicket& t) {
            waitFor(never, t);
            return finish(1, t);
        });
        job.cancel();
        QTRY_VERIFY(!job.isBusy());
        QCOMPARE(got.size(), 1);
        QVERIFY(got[0].stopped);
        QVERIFY(!got[0].abandoned);
    }

    void discardDeliversNothing()
    {
        QObject owner;
        QList<Result> got;
        BackgroundJob<Result> job(&owner, [&](Result r) { got << r; });
        const std::atomic<bool> never{false};
        const quint64 g = job.start([&](const JobTicket& t) {
            waitFor(never, t);
            return finish(1, t);
        });
        job.discard();
        QVERIFY(!job.isCurrent(g));
        QTRY_VERIFY(!job.isBusy());
        QTest::qWait(20);
        QVERIFY(got.isEmpty());
    }

    void progressOfASupersededJobIsDropped()
    {
        QObject owner;
        QStringList progress;
        BackgroundJob<Result> job(&owner, [](Result) {});
        const std::atomic<bool> never{false};
        job.start([&](const JobTicket& t) {
            job.post(t.generation, [&] { progress << QStringLiteral("early"); });
            waitFor(never, t); // until discarded
            job.post(t.generation, [&] { progress << QStringLiteral("late"); });
            return finish(1, t);
        });
        QTRY_COMPARE(progress, QStringList{QStringLiteral("early")});
        job.discard();
        QTRY_VERIFY(!job.isBusy());
        QTest::qWait(20);
        QCOMPARE(progress, QStringList{QStringLiteral("early")});
    }

    void destroyingTheOwnerStopsTheJobAndWaits()
    {
        QObject owner;
        std::atomic<bool> returned{false};
        bool delivered = false;
        auto* job = new BackgroundJob<Result>(&owner, [&](Result) { delivered = true; });
        const std::atomic<bool> never{false};
        job->start([&](const JobTicket& t) {
            waitFor(never, t);
            std::this_thread::sleep_for(std::chrono::milliseconds(50)); // still busy a while
            returned = true;
            return finish(1, t);
        });
        QTest::qWait(10);
        const auto t0 = std::chrono::steady_clock::now();
        delete job;
        QVERIFY(returned); // it waited for the job
        QVERIFY(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
        QTest::qWait(20);
        QVERIFY(!delivered);
    }
};

QTEST_GUILESS_MAIN(TestBackgroundJob)
#include "test_backgroundjob.moc"
