// SPDX-License-Identifier: GPL-3.0-or-later
// `paralens calibrate INPUT... --out PROFILE.json`: nccl-tests logs and paralens-measure
// profiles in, one fitted calibration profile out. With --runs, measured runs in and the
// model's constants fitted to them (cli_calibrate_runs.cpp).
#include "app/cli_commands.h"

#include "core/calibration.h"
#include "core/error.h"
#include "core/input_file.h"
#include "core/nccl_log.h"
#include "widgets/qt_text.h"

#include <QCommandLineParser>
#include <QDateTime>
#include <QFile>
#include <QSaveFile>
#include <QTextStream>

namespace paralens::cli {
namespace {

void printFitTable(QTextStream& out, const CalibrationProfile& p)
{
    out << QStringLiteral("%1 %2 %3 %4 %5 %6 %7  %8\n")
               .arg("collective", -15)
               .arg("ranks", 5)
               .arg("span", -5)
               .arg("alpha_us", 9)
               .arg("busbw_GB/s", 10)
               .arg("rms_%", 6)
               .arg("points", 6)
               .arg("source");
    for (const auto& c : p.collectives) {
        const QString name = qText(toString(c.collective));
        const QString span = qText(toString(c.span));
        out << QStringLiteral("%1 %2 %3 ").arg(name, -15).arg(c.ranks, 5).arg(span, -5);
        if (c.fit.valid)
            out << QStringLiteral("%1 %2 %3 ")
                       .arg(c.fit.alpha_seconds * 1e6, 9, 'f', 1)
                       .arg(c.fit.busbw_gbps, 10, 'f', 2)
                       .arg(c.fit.rms_residual_pct, 6, 'f', 2);
        else
            out << QStringLiteral("%1 %2 %3 ").arg("-", 9).arg("-", 10).arg("-", 6);
        out << QStringLiteral("%1  %2\n")
                   .arg(c.points.size(), 6)
                   .arg(QString::fromStdString(c.source));
    }
    if (!p.gemm.empty())
        out << "gemm: " << p.gemm.size() << " shapes measured\n";
    if (p.hbm_gbps)
        out << "hbm: " << QString::number(*p.hbm_gbps, 'f', 0) << " GB/s\n";
}

} // namespace

int cmdCalibrate(const QStringList& args)
{
    if (args.contains(QLatin1String("--runs")))
        return cmdCalibrateRuns(args);
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Fit a calibration profile from nccl-tests logs and paralens-measure output.\n"
        "Each input is detected by content: nccl-tests text output (several operations per\n"
        "file allowed) or a calibration profile JSON (schema 1). The fit per collective, group\n"
        "size and span is t(S) = alpha + S * busFactor / busbw (weighted least squares).\n"
        "With --runs FILE..., fits the model's constants to measured runs instead\n"
        "(paralens calibrate --runs --help).");
    parser.addHelpOption();
    parser.addPositionalArgument("INPUT", "nccl-tests log or paralens-measure profile", "INPUT...");
    const QCommandLineOption outOpt("out", "write the profile to FILE (required)", "FILE");
    const QCommandLineOption opOpt(
        "op", "operation for log tables that do not name one (all_reduce, all_gather, ...)", "OP");
    const QCommandLineOption quietOpt("quiet", "do not print the fit table or warnings");
    parser.addOptions({outOpt, opOpt, quietOpt});
    if (const auto code = parseArguments(parser, args, "calibrate"))
        return *code;
    const QStringList inputs = parser.positionalArguments();
    if (inputs.isEmpty()) {
        QTextStream(stderr) << "error: calibrate: no INPUT given (paralens calibrate --help)\n";
        return BadUsage;
    }
    if (!parser.isSet(outOpt)) {
        QTextStream(stderr) << "error: calibrate: --out PROFILE.json is required\n";
        return BadUsage;
    }
    const QString outPath = parser.value(outOpt);

    CalibrationProfile profile;
    profile.tool = QStringLiteral("paralens calibrate %1").arg(PARALENS_VERSION).toStdString();
    profile.created = QDateTime::currentDateTimeUtc().toString(Qt::ISODate).toStdString();
    try {
        for (const QString& in : inputs) {
            // Refused by size before reading (docs/limits.md): logs and profiles share 64 MiB.
            const std::string source = in.toStdString();
            const std::string text = readInputFile(source, kMaxNcclLogFileBytes, "file", source);
            if (looksLikeNcclLog(text)) {
                NcclLogConfig cfg;
                cfg.source = source;
                cfg.default_op = parser.value(opOpt).toStdString();
                addNcclLog(profile, parseNcclLog(text, cfg), source);
            } else if (text.find_first_not_of(" \t\r\n") != std::string::npos &&
                       text[text.find_first_not_of(" \t\r\n")] == '{') {
                mergeProfile(profile, parseProfile(text, source));
            } else {
                return fail(in + ": neither an nccl-tests log (no algbw/busbw header) nor a "
                                 "calibration profile (JSON)");
            }
        }
    } catch (const InputError& e) {
        return fail(QString::fromStdString(e.what()));
    }
    if (profile.collectives.empty() && profile.gemm.empty() && !profile.hbm_gbps)
        return fail("calibrate: the inputs hold no measurement the model can use");

    QSaveFile out(outPath);
    if (!out.open(QIODevice::WriteOnly))
        return fail(outPath + ": cannot write (" + out.errorString() + ")");
    const std::string body = profileToText(profile);
    out.write(body.data(), qint64(body.size()));
    if (!out.commit())
        return fail(outPath + ": cannot write (" + out.errorString() + ")");

    if (!parser.isSet(quietOpt)) {
        QTextStream so(stdout);
        printFitTable(so, profile);
        so << "wrote " << outPath << "\n";
        QTextStream se(stderr);
        for (const auto& w : profile.warnings)
            se << "warning: " << QString::fromStdString(w) << "\n";
    }
    return Ok;
}

} // namespace paralens::cli
