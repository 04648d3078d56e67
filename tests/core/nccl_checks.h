// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Checks of the nccl-tests reader, the calibration profile and the calibrated model that hold
// for any well-formed log. Shared by the core suites (the project's fixtures) and the extended
// label (the real logs), so both sides assert the same things.
#include "core/calibration.h"
#include "core/evaluate.h"
#include "core/nccl_log.h"
#include "core/scenario_io.h"

#include <QStringList>
#include <QTest>

#include <cmath>
#include <string>

namespace paralens::testnccl {

inline bool hasWarning(const NcclLogResult& r, const std::string& needle)
{
    for (const auto& w : r.warnings)
        if (w.message.find(needle) != std::string::npos)
            return true;
    return false;
}

inline Scenario defaultNoLatency()
{
    Scenario s = defaultScenario(); // Llama-3 70B, TP 8 inside an H100 node, SP on
    s.cluster.latencies.scale_up_us = 0;
    s.cluster.latencies.scale_out_us = 0;
    return s;
}

/// The log at `path` holds one complete H100 table per entry of `ops`, in that order, each
/// with `rows` sizes on `ranks` GPUs over `nodes` nodes.
inline void checkTables(const std::string& path, const QStringList& ops, int rows, int ranks,
                        int nodes)
{
    const auto r = readNcclLog(path);
    QCOMPARE(int(r.tables.size()), int(ops.size()));
    for (int i = 0; i < ops.size(); ++i) {
        const auto& t = r.tables[i];
        QCOMPARE(QString::fromStdString(t.op), ops[i]);
        QVERIFY(t.collective.has_value());
        QCOMPARE(int(t.rows.size()), rows);
        QCOMPARE(t.ranks, ranks);
        QCOMPARE(t.nodes, nodes);
        QVERIFY(t.complete);
        QVERIFY(t.avg_busbw_gbps.has_value());
        QCOMPARE(QString::fromStdString(t.device_name), QString("NVIDIA H100 80GB HBM3"));
        QVERIFY(t.span() == (nodes > 1 ? Span::ScaleOut : Span::ScaleUp));
    }
}

/// Oracle values read off the log's own rows (µs as printed).
struct ProfileRows
{
    std::string nccl_version;
    double all_reduce_1gib_us; ///< the 1 GiB all-reduce row
    double all_gather_bytes;   ///< the size of the all-gather row below
    double all_gather_us;
};

/// A profile made from the one-node, eight-GPU, five-collective log at `path` looks up the
/// log's own row times, before and after a round trip through the file format.
inline void checkProfileFromOneNodeLog(const std::string& path, const ProfileRows& want)
{
    CalibrationProfile p;
    addNcclLog(p, readNcclLog(path), path);
    QCOMPARE(p.collectives.size(), size_t(5));
    QCOMPARE(p.system.gpu_count, 8);
    QCOMPARE(p.system.nodes, 1);
    QCOMPARE(p.system.nccl_version, want.nccl_version);
    const CalibratedPerformance perf(p, 989, 1979);
    QVERIFY(
        std::abs(*perf.collectiveSeconds(Collective::AllReduce, 8, Span::ScaleUp, 1073741824.0) -
                 want.all_reduce_1gib_us * 1e-6) < 1e-9);
    QVERIFY(std::abs(*perf.collectiveSeconds(Collective::AllGather, 8, Span::ScaleUp,
                                             want.all_gather_bytes) -
                     want.all_gather_us * 1e-6) < 1e-9);
    QVERIFY(!perf.collectiveSeconds(Collective::AllReduce, 8, Span::ScaleOut, 1e9).has_value());
    // Round trip through the file format keeps the lookup.
    const CalibratedPerformance again(parseProfile(profileToText(p), "rt"), 989, 1979);
    QVERIFY(
        std::abs(*again.collectiveSeconds(Collective::AllReduce, 8, Span::ScaleUp, 1073741824.0) -
                 want.all_reduce_1gib_us * 1e-6) < 1e-9);
}

/// Bounds on the calibrated / datasheet TP time of the default plan, as datasheet busbw over
/// measured busbw (docs/formulas.md §5).
struct TpRatioBounds
{
    double low;      ///< exclusive
    double high;     ///< exclusive
    double expected; ///< within 0.08
};

/// Calibrates with the one-node, eight-GPU log at `path` and checks that the default plan's
/// TP collectives take the log's own 128 MiB row times and that TP time moves within `b`.
inline void checkLogMovesTpTime(const std::string& path, const TpRatioBounds& b)
{
    NcclLogResult parsed = readNcclLog(path);
    CalibrationProfile prof;
    addNcclLog(prof, parsed, path);
    const CalibratedPerformance measured(prof, 989, 1979);

    // Oracle: the log's own rows. Each TP all-gather / reduce-scatter of the default plan
    // moves b·s·h·2 bytes = 1·8192·8192·2 = 128 MiB; the log's 134217728-byte rows give
    // the measured time directly.
    const double bytes = 8192.0 * 8192.0 * 2.0;
    for (Collective c : {Collective::AllGather, Collective::ReduceScatter}) {
        const CollectiveCurve* curve = measured.curveFor(c, 8, Span::ScaleUp);
        QVERIFY(curve);
        const SizePoint* row = nullptr;
        for (const SizePoint& p : curve->points)
            if (p.size_bytes == bytes)
                row = &p;
        QVERIFY2(row, "the log has a 128 MiB row");
        const auto t = measured.collectiveSeconds(c, 8, Span::ScaleUp, bytes);
        QVERIFY(t.has_value());
        QVERIFY(std::abs(*t / row->time_median_seconds - 1) < 1e-9);
    }

    const Scenario s = defaultNoLatency();
    const Estimate datasheet = evaluate(s);
    Estimate cal;
    evaluate(s, cal, &measured);
    const double tp0 = datasheet.time.exposed.tp + datasheet.time.overlapped.tp;
    const double tp1 = cal.time.exposed.tp + cal.time.overlapped.tp;
    const double ratio = tp1 / tp0;
    QVERIFY2(ratio > b.low && ratio < b.high, qPrintable(QString::number(ratio)));
    QVERIFY2(std::abs(ratio - b.expected) < 0.08, qPrintable(QString::number(ratio)));
}

} // namespace paralens::testnccl
