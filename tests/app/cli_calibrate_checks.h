// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// `paralens calibrate` on a folder of nccl-tests logs, checked the same way for the project's
// fixtures and for the real logs of the extended label.
#include "cli_runner.h"

#include <QLatin1String>
#include <QTest>

namespace paralens::testcli {

/// Calibrates from the logs `names` in `dir` into a temporary profile; the run must succeed,
/// list all five collectives and warn (each set holds a log whose all_reduce is inferred).
/// `r` keeps the run for further checks.
inline void checkCalibratesLogs(const QString& dir, const QStringList& names, Result& r)
{
    QStringList args{"calibrate"};
    for (const auto& n : names)
        args << dir + "/" + n;
    QTemporaryDir tmp;
    args << "--out" << tmp.filePath("p.json");
    r = run(args);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    for (const char* c : {"all_reduce", "all_gather", "reduce_scatter", "alltoall", "sendrecv"})
        QVERIFY(r.out.contains(QLatin1String(c)));
    QVERIFY(r.err.contains("warning: "));
}

} // namespace paralens::testcli
