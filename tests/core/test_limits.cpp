// SPDX-License-Identifier: GPL-3.0-or-later
// Resource bounds (docs/limits.md): inputs that would need more memory or time
// than the documented limits are refused with an error naming the limit, quickly; inputs at the
// limit are handled (the pipeline falls back to its closed forms above the simulator's op limit).

#include "core/calibration.h"
#include "core/error.h"
#include "core/evaluate.h"
#include "core/input_file.h"
#include "core/nccl_log.h"
#include "core/presets.h"
#include "core/scenario_io.h"
#include "core/schedule.h"
#include "core/spec_io.h"
#include "core/validate.h"
#include "estimate_invariants.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <functional>

using namespace paralens;

namespace {

/// The message of the InputError `f` throws, or "" when it throws none.
std::string errorOf(const std::function<void()>& f)
{
    try {
        f();
    } catch (const InputError& e) {
        return e.what();
    }
    return {};
}

/// A sparse file of `bytes` (no disk space used) whose first bytes are `head`.
QString bigFile(const QTemporaryDir& dir, const char* name, qint64 bytes, const QByteArray& head)
{
    const QString path = dir.filePath(QLatin1String(name));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(head) != head.size() || !f.resize(bytes))
        return {};
    return path;
}

/// The first validation message, or "" (for test failure messages).
std::string firstError(const Scenario& s)
{
    const auto errors = validate(s);
    return errors.empty() ? std::string() : errors.front().message;
}

bool contains(const std::string& s, const std::string& part)
{
    return s.find(part) != std::string::npos;
}

} // namespace

class TestLimits : public QObject
{
    Q_OBJECT
private slots:
    // A 100 MB file of each kind is refused by its size, before parsing, in well under a second.
    void hugeFilesAreRefusedBySize()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const qint64 hundredMB = 100'000'000;
        const QString scenario = bigFile(dir, "huge.paralens.json", hundredMB, "{\"gpus\": 8,");
        const QString log = bigFile(dir, "huge.log", hundredMB, "# nccl-tests\n");
        const QString profile = bigFile(dir, "huge-profile.json", hundredMB, "{\"schema\": 1");
        QVERIFY(!scenario.isEmpty() && !log.isEmpty() && !profile.isEmpty());
        QElapsedTimer timer;
        timer.start();
        const std::string e1 = errorOf([&] { loadScenarioFile(scenario.toStdString()); });
        const std::string e2 = errorOf([&] { readNcclLog(log.toStdString()); });
        const std::string e3 = errorOf([&] { loadProfileFile(profile.toStdString()); });
        QVERIFY2(timer.elapsed() < 1000, "refusing by size must not read the files");
        for (const auto& [e, path, limit] :
             {std::tuple{e1, scenario, "1 MiB"}, std::tuple{e2, log, "64 MiB"},
              std::tuple{e3, profile, "64 MiB"}}) {
            QVERIFY2(contains(e, path.toStdString()), e.c_str());
            QVERIFY2(contains(e, "100000000 bytes"), e.c_str());
            QVERIFY2(contains(e, std::string("above the limit of ") + limit), e.c_str());
        }
    }

    // Exactly at the limit is allowed (then the parser decides); one byte more is not.
    void scenarioLimitIsInclusive()
    {
        QTemporaryDir dir;
        QByteArray text = "{\"gpus\": 8}";
        text += QByteArray(qsizetype(kMaxScenarioFileBytes) - text.size(), ' ');
        QFile f(dir.filePath("at-limit.paralens.json"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        QCOMPARE(f.write(text), qint64(kMaxScenarioFileBytes));
        f.close();
        const std::string path = f.fileName().toStdString();
        QVERIFY2(errorOf([&] { loadScenarioFile(path); }).empty(),
                 errorOf([&] { loadScenarioFile(path); }).c_str());
        QVERIFY(f.open(QIODevice::Append));
        f.write(" ");
        f.close();
        QVERIFY(contains(errorOf([&] { loadScenarioFile(path); }), "above the limit"));
    }

    // A preset folder with an oversized file names that file.
    void hugePresetIsRefused()
    {
        QTemporaryDir dir;
        const QString path =
            bigFile(dir, "big-model.json", qint64(kMaxPresetFileBytes) + 1, "{\"id\": \"big\"");
        QVERIFY(!path.isEmpty());
        PresetLibrary lib;
        const std::string e = errorOf([&] { lib.addFolder(dir.path().toStdString()); });
        QVERIFY2(contains(e, path.toStdString()) && contains(e, "above the limit of 1 MiB"),
                 e.c_str());
    }

    // Not a regular file: a device that never ends is read only up to the limit; a folder is
    // named as one.
    void specialFiles()
    {
        if (QFile::exists(QStringLiteral("/dev/zero"))) {
            const std::string e = errorOf([] { loadScenarioFile("/dev/zero"); });
            QVERIFY2(contains(e, "/dev/zero") && contains(e, "above the limit"), e.c_str());
        }
        QTemporaryDir dir;
        const std::string e = errorOf([&] { loadScenarioFile(dir.path().toStdString()); });
        QVERIFY2(contains(e, "it is a folder"), e.c_str());
        QVERIFY(contains(errorOf([] { loadScenarioFile("/nonexistent/x.paralens.json"); }),
                         "cannot open"));
    }

    // 10^9 micro-batches: within the batch bound, so the scenario is valid; the simulator would
    // need 3·10^9 ops, far above kMaxPipelineOps, so evaluate() uses the closed forms (no
    // timeline) and finishes at once, and building the schedule is refused naming the limit.
    void billionMicrobatches()
    {
        Scenario s = defaultScenario();
        s.parallel.tp = 8;
        s.parallel.pp = 4;
        s.parallel.dp = 1;
        s.parallel.cp = 1;
        s.parallel.schedule = Schedule::OneF1B;
        s.parallel.virtual_stages = 1;
        s.gpus = 32;
        s.training.micro_batch = 1;
        s.training.global_batch = 1'000'000'000;
        QVERIFY2(validate(s).empty(), firstError(s).c_str());
        QElapsedTimer timer;
        timer.start();
        Estimate e;
        PipelineTimeline timeline;
        evaluate(s, e, nullptr, ModelConstants{}, &timeline);
        QVERIFY2(timer.elapsed() < 2000, std::to_string(timer.elapsed()).c_str());
        QVERIFY(!timeline.simulated);
        QCOMPARE(e.microbatches, 1'000'000'000);
        QCOMPARE(invariants::check(s, e), std::string());
        // More micro-batches never raise the bubble overhead, also across the switch from the
        // simulator to the closed forms.
        Scenario small = s;
        small.training.global_batch = 64;
        Estimate e64;
        PipelineTimeline t64;
        evaluate(small, e64, nullptr, ModelConstants{}, &t64);
        QVERIFY(t64.simulated);
        QVERIFY2(e.time.bubble_overhead <= e64.time.bubble_overhead,
                 (std::to_string(e.time.bubble_overhead) + " vs " +
                  std::to_string(e64.time.bubble_overhead))
                     .c_str());

        const ScheduleParams params = scheduleParamsFor(s.parallel, 1'000'000'000);
        QVERIFY(scheduleOpCount(params) > kMaxPipelineOps);
        const std::string err = errorOf([&] { (void)buildSchedule(params); });
        QVERIFY2(contains(err, "above the simulator's limit of " + std::to_string(kMaxPipelineOps)),
                 err.c_str());

        // One more than the batch bound is refused when the file is read.
        const std::string big = errorOf(
            [] { parseScenario(R"({"training": {"global_batch": 1000000001}})", "b.json"); });
        QVERIFY2(contains(big, "training.global_batch") &&
                     contains(big, std::to_string(bounds::kMaxBatch)),
                 big.c_str());
    }

    // 10^6 GPUs (the bound) evaluate at once: nothing in the core is per GPU. 10^6 + 1 is
    // refused naming the bound.
    void millionGpus()
    {
        Scenario s = defaultScenario();
        s.parallel.tp = 8;
        s.parallel.pp = 4;
        s.parallel.cp = 1;
        s.parallel.dp = 31250;
        s.gpus = 1'000'000;
        QCOMPARE(s.parallel.gpus(), 1'000'000);
        s.training.micro_batch = 1;
        s.training.global_batch = 31250 * 16;
        QVERIFY2(validate(s).empty(), firstError(s).c_str());
        QElapsedTimer timer;
        timer.start();
        const Estimate e = evaluate(s);
        QVERIFY(timer.elapsed() < 2000);
        QCOMPARE(e.gpus, 1'000'000);
        QCOMPARE(invariants::check(s, e), std::string());

        const std::string err = errorOf([] { parseScenario(R"({"gpus": 1000001})", "g.json"); });
        QVERIFY2(contains(err, "gpus") && contains(err, std::to_string(bounds::kMaxGpus)),
                 err.c_str());
        const std::string err2 = errorOf([] {
            parseScenario(R"({"parallel": {"tp": 1000, "pp": 1000, "dp": 2, "cp": 1}})", "g.json");
        });
        QVERIFY2(contains(err2, std::to_string(bounds::kMaxGpus)), err2.c_str());
    }
};

QTEST_GUILESS_MAIN(TestLimits)
#include "test_limits.moc"
