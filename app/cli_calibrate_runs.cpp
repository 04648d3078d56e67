// SPDX-License-Identifier: GPL-3.0-or-later
// `paralens calibrate --runs FILE... --out PROFILE.json`: the model's free constants fitted to
// measured runs (docs/fit.md), written into a calibration profile of schema 2.
#include "app/cli_commands.h"
#include "app/runs_loader.h"

#include "core/calibration.h"
#include "core/error.h"
#include "core/fit.h"

#include <QCommandLineParser>
#include <QDateTime>
#include <QFileInfo>
#include <QTextStream>

#include <memory>

#include <nlohmann/json.hpp>

namespace paralens::cli {
namespace {

QString qs(std::string_view s)
{
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

std::optional<std::vector<FitConstant>> parseConstants(const QString& list, QString* error)
{
    std::vector<FitConstant> out;
    for (const QString& key : list.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const auto c = parseFitConstant(key.trimmed().toStdString());
        if (!c) {
            QStringList known;
            for (FitConstant k : allFitConstants())
                known << qs(fitConstantKey(k));
            *error = "--fit: unknown constant '" + key + "' (" + known.join(", ") + ")";
            return std::nullopt;
        }
        out.push_back(*c);
    }
    return out;
}

nlohmann::json errorsJson(const FitErrors& e, int runs)
{
    nlohmann::json j{{"runs", runs}, {"rows", e.rows}};
    if (e.rows == 0) {
        j["mape"] = nullptr;
        return j;
    }
    j["mape"] = e.mape;
    j["median_ape"] = e.median_ape;
    j["worst"] = {{"name", e.worst_name}, {"error", e.worst_error}};
    return j;
}

nlohmann::json resultJson(const FitResult& r, const QString& out)
{
    nlohmann::json j;
    j["fit"] = errorsJson(r.fit_after, r.fit_runs);
    j["fit"]["mape_before"] = r.fit_before.mape;
    j["holdout"] = errorsJson(r.holdout_after, r.holdout_runs);
    j["holdout"]["mape_before"] =
        r.holdout_before.rows ? nlohmann::json(r.holdout_before.mape) : nlohmann::json();
    j["holdout"]["seed"] = r.seed;
    nlohmann::json constants = nlohmann::json::object(), params = nlohmann::json::array();
    for (const FitParameter& p : r.parameters) {
        params.push_back({{"name", p.name},
                          {"start", p.start},
                          {"value", p.value},
                          {"lower", p.bounds.lower},
                          {"upper", p.bounds.upper},
                          {"identified", p.identified},
                          {"at_bound", p.at_bound}});
        if (!p.identified)
            continue;
        const std::string key(fitConstantKey(p.constant));
        if (p.constant == FitConstant::GemmEfficiency)
            constants[key][p.gpu] = p.value;
        else
            constants[key] = p.value;
    }
    j["constants"] = constants;
    j["parameters"] = params;
    nlohmann::json rows = nlohmann::json::array();
    for (const FitRow& row : r.rows)
        rows.push_back({{"name", row.name},
                        {"metric", std::string(metricName(row.metric))},
                        {"measured", row.measured},
                        {"predicted_before", row.predicted_before},
                        {"predicted", row.predicted_after},
                        {"error_before", row.error_before},
                        {"error", row.error_after},
                        {"holdout", row.holdout}});
    j["residuals"] = rows;
    j["failed"] = r.failed;
    j["iterations"] = r.iterations;
    j["converged"] = r.converged;
    j["out"] = out.toStdString();
    return j;
}

QString pct(double f)
{
    return QString::number(100 * f, 'f', 1) + " %";
}

void printErrors(QTextStream& o, const char* what, const FitErrors& before, const FitErrors& after,
                 int runs)
{
    o << QStringLiteral("%1 %2 runs: MAPE %3 -> %4, median %5 -> %6, worst %7 (%8)\n")
             .arg(what)
             .arg(runs)
             .arg(pct(before.mape), pct(after.mape), pct(before.median_ape), pct(after.median_ape),
                  qs(after.worst_name), pct(after.worst_error));
}

void printText(QTextStream& o, const FitResult& r, const std::vector<RunSet>& sets)
{
    for (const RunSet& s : sets)
        for (const std::string& a : s.assumptions)
            o << "assumption (" << qs(s.file) << "): " << qs(a) << "\n";
    o << QStringLiteral("%1 %2 %3 %4  %5\n")
             .arg("run", -28)
             .arg("measured", 12)
             .arg("before", 8)
             .arg("after", 8)
             .arg("metric");
    for (const FitRow& row : r.rows)
        o << QStringLiteral("%1 %2 %3 %4  %5%6\n")
                 .arg(qs(row.name).left(28), -28)
                 .arg(row.measured, 12, 'g', 5)
                 .arg(QString::number(100 * row.error_before, 'f', 1) + "%", 8)
                 .arg(QString::number(100 * row.error_after, 'f', 1) + "%", 8)
                 .arg(qs(metricName(row.metric)), row.holdout ? " (held out)" : "");
    for (const std::string& f : r.failed)
        o << "failed: " << qs(f) << "\n";
    o << QStringLiteral("%1 %2 %3 %4 %5\n")
             .arg("constant", -34)
             .arg("start", 10)
             .arg("fitted", 10)
             .arg("bounds", 18)
             .arg("");
    for (const FitParameter& p : r.parameters)
        o << QStringLiteral("%1 %2 %3 %4 %5\n")
                 .arg(qs(p.name), -34)
                 .arg(p.start, 10, 'g', 4)
                 .arg(p.value, 10, 'g', 4)
                 .arg(QStringLiteral("[%1, %2]").arg(p.bounds.lower).arg(p.bounds.upper), 18)
                 .arg(!p.identified ? "not identified by these runs"
                      : p.at_bound  ? "at a bound"
                                    : "");
    printErrors(o, "fit", r.fit_before, r.fit_after, r.fit_runs);
    if (r.holdout_runs > 0)
        printErrors(o, "hold-out", r.holdout_before, r.holdout_after, r.holdout_runs);
    if (!r.converged)
        o << "note: the fit stopped after " << r.iterations << " iterations before converging\n";
}

} // namespace

int cmdCalibrateRuns(const QStringList& args)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Fit the model's free constants to measured runs (docs/fit.md): GEMM efficiency per\n"
        "GPU type, attention-kernel efficiency, scale-up and scale-out efficiency, the share of\n"
        "the DP reduction hidden under backward, fixed per-layer and per-step costs. Robust\n"
        "least squares on log(predicted / measured) within physical bounds. Inputs: runs files\n"
        "(*.paralens-runs.json) and measured-iteration CSVs (with --hardware).");
    parser.addHelpOption();
    parser.addPositionalArgument("FILE", "runs file or measured-iteration CSV", "FILE...");
    const QCommandLineOption runsOpt("runs", "fit to the measured runs in FILE...");
    const QCommandLineOption outOpt("out", "write the profile to PROFILE (required)", "PROFILE");
    const QCommandLineOption hwOpt("hardware", "cluster of CSV rows: preset id or hardware file",
                                   "ID|FILE");
    const QCommandLineOption holdOpt("holdout", "keep share F of the runs out of the fit", "F");
    const QCommandLineOption seedOpt("seed", "seed of the hold-out split (default 1)", "S");
    const QCommandLineOption fitOpt("fit", "constants to fit, comma-separated (default all)",
                                    "LIST");
    const QCommandLineOption baseOpt(
        "base", "a measured profile whose tables the model uses and the output keeps", "PROFILE");
    const QCommandLineOption jsonOpt("json", "print the result as one JSON object");
    const QCommandLineOption quietOpt("quiet", "print nothing on success");
    parser.addOptions(
        {runsOpt, outOpt, hwOpt, holdOpt, seedOpt, fitOpt, baseOpt, jsonOpt, quietOpt});
    if (!parser.parse(args)) {
        QTextStream(stderr) << "error: calibrate: " << parser.errorText() << "\n";
        return BadUsage;
    }
    if (parser.isSet("help")) {
        QTextStream(stdout) << usageText(parser, "calibrate");
        return Ok;
    }
    const QStringList files = parser.positionalArguments();
    if (files.isEmpty() || !parser.isSet(outOpt)) {
        QTextStream(stderr) << "error: calibrate --runs: needs FILE... and --out PROFILE.json\n";
        return BadUsage;
    }
    FitOptions opt;
    bool ok = true;
    if (parser.isSet(holdOpt)) {
        opt.holdout = parser.value(holdOpt).toDouble(&ok);
        if (!ok)
            return fail("--holdout: expected a number in [0, 1), got '" + parser.value(holdOpt) +
                        "'");
    }
    if (parser.isSet(seedOpt)) {
        opt.seed = parser.value(seedOpt).toULongLong(&ok);
        if (!ok)
            return fail("--seed: expected a non-negative integer, got '" + parser.value(seedOpt) +
                        "'");
    }
    QString error;
    if (parser.isSet(fitOpt)) {
        const auto c = parseConstants(parser.value(fitOpt), &error);
        if (!c)
            return fail(error);
        opt.constants = *c;
    }
    CalibrationProfile profile;
    std::unique_ptr<CalibratedPerformance> tables;
    try {
        const std::vector<RunSet> sets = loadRunFiles(files, parser.value(hwOpt), presets());
        const std::vector<MeasuredRun> runs = allRuns(sets);
        if (parser.isSet(baseOpt)) {
            profile = loadProfileFile(parser.value(baseOpt).toStdString());
            CalibrationProfile forFit = profile;
            forFit.model_constants.reset(); // the fit replaces them; they must not pull it
            const GpuSpec gpu = runs.empty() ? GpuSpec{} : runs.front().scenario.cluster.gpu;
            tables =
                std::make_unique<CalibratedPerformance>(forFit, gpu.bf16_tflops, gpu.fp8_tflops);
        }
        const FitResult r = fitConstants(runs, opt, ModelConstants{}, tables.get());
        profile.tool = QStringLiteral("paralens calibrate %1").arg(PARALENS_VERSION).toStdString();
        profile.created = QDateTime::currentDateTimeUtc().toString(Qt::ISODate).toStdString();
        FittedConstants fc = r.constants();
        for (const QString& f : files)
            fc.fit.sources.push_back(QFileInfo(f).fileName().toStdString());
        profile.model_constants = fc;
        saveProfileFile(profile, parser.value(outOpt).toStdString());
        QTextStream o(stdout);
        if (parser.isSet(jsonOpt))
            o << QString::fromStdString(
                     resultJson(r, parser.value(outOpt))
                         .dump(2, ' ', false, nlohmann::json::error_handler_t::replace))
              << "\n";
        else if (!parser.isSet(quietOpt)) {
            printText(o, r, sets);
            o << "wrote " << parser.value(outOpt) << "\n";
        }
    } catch (const InputError& e) {
        return fail(QString::fromStdString(e.what()));
    }
    return Ok;
}

} // namespace paralens::cli
