// SPDX-License-Identifier: GPL-3.0-or-later
// paralens-measure without a GPU: --help works, and a measurement fails with the
// documented line and exit code 3. CUDA_VISIBLE_DEVICES="" hides any GPU, so this holds
// on GPU machines too. Where the driver or a CUDA library cannot be loaded, the same one
// line names it: a library is made unloadable by an empty file of its name first on
// LD_LIBRARY_PATH (the loader stops there with "file too short"), for each soname that
// readelf finds among the measurement module's DT_NEEDED entries.
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <dlfcn.h>

namespace {

struct Run
{
    int code = -1;
    QString out, err;
};

/// Whether this machine has an NVIDIA driver library, asked of the loader directly.
bool driverLoads()
{
    void* h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (h)
        dlclose(h);
    return h != nullptr;
}

bool oneLine(const QString& s)
{
    return s.endsWith('\n') && s.count('\n') == 1;
}

Run measure(const QStringList& args, const QString& libraryPath = {}, bool hideGpus = true)
{
    QProcess p;
    auto env = QProcessEnvironment::systemEnvironment();
    if (hideGpus)
        env.insert("CUDA_VISIBLE_DEVICES", "");
    if (!libraryPath.isEmpty())
        env.insert("LD_LIBRARY_PATH", libraryPath);
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(PARALENS_MEASURE_EXE), args);
    p.waitForFinished(120000);
    return {p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

} // namespace

class TestMeasureCli : public QObject
{
    Q_OBJECT
private slots:
    void help()
    {
        const auto r = measure({"--help"});
        QCOMPARE(r.code, 0);
        for (const char* s : {"collectives", "gemm", "membw", "devices", "--out", "--timeout",
                              "Exit codes", "no CUDA device visible"})
            QVERIFY2(r.out.contains(QLatin1String(s)), s);
    }
    void noDevice_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::newRow("collectives") << QStringList{"collectives", "-b", "1M", "-e", "4M"};
        QTest::newRow("gemm") << QStringList{"gemm"};
        QTest::newRow("membw") << QStringList{"membw"};
        QTest::newRow("devices") << QStringList{"devices"};
        QTest::newRow("gemm of a scenario") << QStringList{
            "gemm", "--scenario",
            PARALENS_SOURCE_DIR "/resources/examples/gpt3-175b-1024xa100.paralens.json"};
        QTest::newRow("all") << QStringList{"all", "--out", "/nonexistent/never-written.json"};
    }
    void noDevice()
    {
        QFETCH(QStringList, args);
        const auto r = measure(args);
        QCOMPARE(r.code, 3);
        QVERIFY2(oneLine(r.err), qPrintable(r.err));
        if (driverLoads())
            QCOMPARE(r.err, QStringLiteral("error: no CUDA device visible\n"));
        else
            QVERIFY2(r.err.startsWith("error: no CUDA device visible: cannot load ") &&
                         r.err.contains("libcuda.so.1 (NVIDIA driver"),
                     qPrintable(r.err));
        QCOMPARE(r.out, QString()); // nothing half-written on stdout (devices: no JSON)
    }
    /// The GUI's probe, in this machine's own environment: without a driver it is one line
    /// naming libcuda.so.1 and exit 3; with one, the JSON list or the no-device line.
    void devicesHere()
    {
        const auto r = measure({"devices"}, {}, false);
        if (!driverLoads()) {
            QCOMPARE(r.code, 3);
            QCOMPARE(r.out, QString());
            QVERIFY2(oneLine(r.err) &&
                         r.err.startsWith("error: no CUDA device visible: cannot load ") &&
                         r.err.contains("libcuda.so.1 (NVIDIA driver"),
                     qPrintable(r.err));
        } else if (r.code == 3) {
            QVERIFY2(oneLine(r.err) && r.err.startsWith("error: no CUDA device visible"),
                     qPrintable(r.err));
        } else {
            QCOMPARE(r.code, 0);
            QVERIFY2(r.out.startsWith("{\"devices\":["), qPrintable(r.out));
        }
    }
    /// Each CUDA library the module links, and the driver, made unloadable in turn.
    void unloadableLibrary()
    {
        QProcess readelf;
        readelf.start("readelf", {"-d", QStringLiteral(PARALENS_MEASURE_IMPL)});
        QVERIFY(readelf.waitForFinished(60000) && readelf.exitCode() == 0);
        const QString dyn = QString::fromUtf8(readelf.readAllStandardOutput());
        QStringList sonames;
        const QRegularExpression needed(
            R"(\(NEEDED\)\s+Shared library: \[((libcudart|libnccl|libcublasLt)\.so\.\d+)\])");
        for (auto it = needed.globalMatch(dyn); it.hasNext();)
            sonames << it.next().captured(1);
        QCOMPARE(sonames.size(), 3); // the CUDA runtime, NCCL and cuBLASLt, each once
        sonames << "libcuda.so.1";
        for (const auto& soname : sonames) {
            const QString package = soname.startsWith("libcudart")     ? "cuda-cudart-"
                                    : soname.startsWith("libnccl")     ? "libnccl2"
                                    : soname.startsWith("libcublasLt") ? "libcublas-"
                                                                       : "cuda-drivers";
            QTemporaryDir dir;
            QFile broken(dir.filePath(soname));
            QVERIFY(broken.open(QIODevice::WriteOnly)); // empty: not a shared object
            broken.close();
            for (const auto& args : {QStringList{"devices"}, QStringList{"gemm"},
                                     QStringList{"collectives", "--out", dir.filePath("p")}}) {
                const auto r = measure(args, dir.path());
                const QString what = soname + " " + args.join(' ') + ": " + r.err;
                QCOMPARE(r.code, 3);
                QCOMPARE(r.out, QString());
                QVERIFY2(oneLine(r.err), qPrintable(what));
                QVERIFY2(r.err.startsWith("error: no CUDA device visible: cannot load "),
                         qPrintable(what));
                QVERIFY2(r.err.contains(soname + " (") && r.err.contains(package) &&
                             r.err.contains("file too short"),
                         qPrintable(what));
            }
            QVERIFY(!QFile::exists(dir.filePath("p")));
            // A bad command line is still a usage error where the driver is what is missing
            // (the module reads it first); a missing CUDA library stops before that.
            const auto bad = measure({"bogus"}, dir.path());
            QCOMPARE(bad.code, soname == "libcuda.so.1" ? 2 : 3);
            // Help and the version need no GPU, even then.
            const auto help = measure({"--help"}, dir.path());
            QCOMPARE(help.code, 0);
            QVERIFY(help.out.contains("Exit codes"));
            const auto version = measure({"--version"}, dir.path());
            QCOMPARE(version.code, 0);
            QVERIFY(version.out.startsWith("paralens-measure "));
        }
    }
    void badUsage()
    {
        for (const auto& args : {QStringList{}, QStringList{"bogus"}, QStringList{"gemm", "-n"},
                                 QStringList{"collectives", "--dtype", "fp64"},
                                 QStringList{"collectives", "--ops", "all_to_all"},
                                 QStringList{"gemm", "--shapes", "1,2"},
                                 QStringList{"collectives", "-b", "1G", "-e", "1M"}}) {
            const auto r = measure(args);
            QVERIFY2(r.code == 2, qPrintable(args.join(' ')));
            QVERIFY(r.err.startsWith("error: "));
        }
        QCOMPARE(measure({"--version"}).code, 0);
        const auto bad = measure({"gemm", "--scenario", "/nonexistent/s.paralens.json"});
        QCOMPARE(bad.code, 2);
        QVERIFY2(bad.err.startsWith("error: ") && bad.err.contains("/nonexistent/s.paralens.json"),
                 qPrintable(bad.err));
    }
};

QTEST_GUILESS_MAIN(TestMeasureCli)
#include "test_measure_cli.moc"
