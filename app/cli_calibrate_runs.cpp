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

// Everything one fit produces: the runs, the fit, and the reports before and after it.
struct FitRun
{
    std::vector<RunSet> sets;
    std::vector<MeasuredRun> runs;
    CalibrationProfile profile; ///< the base profile (or empty) with the fitted constants
    FitResult result;
    AccuracyReport before, after;
};

// Throws InputError.
FitRun runFit(const QStringList& files, const QString& hardware, const QString& base,
              const FitOptions& opt)
{
    FitRun f;
    f.sets = loadRunFiles(files, hardware, presets());
    f.runs = allRuns(f.sets);
    const GpuSpec gpu = f.runs.empty() ? GpuSpec{} : f.runs.front().scenario.cluster.gpu;
    std::unique_ptr<CalibratedPerformance> tables;
    if (!base.isEmpty()) {
        f.profile = loadProfileFile(base.toStdString());
        f.profile.model_constants.reset(); // the fit replaces them; they must not pull it
        tables =
            std::make_unique<CalibratedPerformance>(f.profile, gpu.bf16_tflops, gpu.fp8_tflops);
    }
    f.result = fitConstants(f.runs, opt, ModelConstants{}, tables.get());
    f.profile.tool = QStringLiteral("paralens calibrate %1").arg(PARALENS_VERSION).toStdString();
    f.profile.created = QDateTime::currentDateTimeUtc().toString(Qt::ISODate).toStdString();
    FittedConstants fc = f.result.constants();
    for (const QString& file : files)
        fc.fit.sources.push_back(QFileInfo(file).fileName().toStdString());
    f.profile.model_constants = fc;
    const CalibratedPerformance fitted(f.profile, gpu.bf16_tflops, gpu.fp8_tflops);
    f.before = validateRuns(f.runs, ModelConstants{}, tables.get());
    f.after = validateRuns(f.runs, ModelConstants{}, &fitted);
    return f;
}

nlohmann::json groupsJson(const AccuracyReport& before, const AccuracyReport& after)
{
    nlohmann::json groups = nlohmann::json::array();
    for (std::size_t i = 0; i < after.groups.size(); ++i) {
        const GroupSummary& g = after.groups[i];
        nlohmann::json j{{"key", g.key},
                         {"runs", g.runs},
                         {"spearman", g.spearman},
                         {"best_plan_rank", g.best_plan_rank},
                         {"best_plan_slowdown", g.best_plan_slowdown}};
        if (i < before.groups.size() && before.groups[i].key == g.key) {
            j["spearman_before"] = before.groups[i].spearman;
            j["best_plan_rank_before"] = before.groups[i].best_plan_rank;
        }
        groups.push_back(j);
    }
    return groups;
}

void printGroups(QTextStream& o, const AccuracyReport& before, const AccuracyReport& after)
{
    for (std::size_t i = 0; i < after.groups.size(); ++i) {
        const GroupSummary& g = after.groups[i];
        const bool same = i < before.groups.size() && before.groups[i].key == g.key;
        o << QStringLiteral("group %1 (%2 runs): Spearman %3 -> %4, the model's best plan "
                            "measured rank %5 -> %6 (%7 slower than the measured best)\n")
                 .arg(qs(g.key))
                 .arg(g.runs)
                 .arg(same ? QString::number(before.groups[i].spearman, 'f', 2) : "-")
                 .arg(g.spearman, 0, 'f', 2)
                 .arg(same ? QString::number(before.groups[i].best_plan_rank) : "-")
                 .arg(g.best_plan_rank)
                 .arg(pct(g.best_plan_slowdown));
    }
}

// Reads --holdout, --seed and --fit; an exit code on bad input.
std::optional<int> readOptions(const QCommandLineParser& parser, FitOptions& opt)
{
    bool ok = true;
    if (parser.isSet("holdout")) {
        opt.holdout = parser.value("holdout").toDouble(&ok);
        if (!ok)
            return fail("--holdout: expected a number in [0, 1), got '" + parser.value("holdout") +
                        "'");
    }
    if (parser.isSet("seed")) {
        opt.seed = parser.value("seed").toULongLong(&ok);
        if (!ok)
            return fail("--seed: expected a non-negative integer, got '" + parser.value("seed") +
                        "'");
    }
    if (parser.isSet("fit")) {
        QString error;
        const auto c = parseConstants(parser.value("fit"), &error);
        if (!c)
            return fail(error);
        opt.constants = *c;
    }
    return std::nullopt;
}

void addOptions(QCommandLineParser& parser)
{
    parser.setApplicationDescription(
        "Fit the model's free constants to measured runs (docs/fit.md): GEMM efficiency per\n"
        "GPU type and its small-size falloff, HBM efficiency, attention-kernel efficiency,\n"
        "scale-up and scale-out efficiency, the share of the DP reduction hidden under\n"
        "backward, fixed per-layer and per-step costs. Robust least squares on\n"
        "log(predicted / measured) within physical bounds. Inputs: runs files\n"
        "(*.paralens-runs.json) and measured-iteration CSVs (with --hardware).");
    parser.addHelpOption();
    parser.addPositionalArgument("FILE", "runs file or measured-iteration CSV", "FILE...");
    parser.addOptions({
        {"runs", "fit to the measured runs in FILE..."},
        {"out", "write the profile to PROFILE (required)", "PROFILE"},
        {"hardware", "cluster of CSV rows: preset id or hardware file", "ID|FILE"},
        {"holdout", "keep share F of the runs out of the fit", "F"},
        {"seed", "seed of the hold-out split (default 1)", "S"},
        {"fit", "constants to fit, comma-separated (default all)", "LIST"},
        {"base", "a measured profile whose tables the model uses and the output keeps", "PROFILE"},
        {"json", "print the result as one JSON object"},
        {"quiet", "print nothing on success"},
    });
}

} // namespace

int cmdCalibrateRuns(const QStringList& args)
{
    QCommandLineParser parser;
    addOptions(parser);
    if (const auto code = parseArguments(parser, args, "calibrate"))
        return *code;
    const QStringList files = parser.positionalArguments();
    if (files.isEmpty() || !parser.isSet("out")) {
        QTextStream(stderr) << "error: calibrate --runs: needs FILE... and --out PROFILE.json\n";
        return BadUsage;
    }
    FitOptions opt;
    if (const auto code = readOptions(parser, opt))
        return *code;
    try {
        const FitRun f = runFit(files, parser.value("hardware"), parser.value("base"), opt);
        saveProfileFile(f.profile, parser.value("out").toStdString());
        QTextStream o(stdout);
        if (parser.isSet("json")) {
            nlohmann::json j = resultJson(f.result, parser.value("out"));
            j["groups"] = groupsJson(f.before, f.after);
            o << QString::fromStdString(
                     j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace))
              << "\n";
        } else if (!parser.isSet("quiet")) {
            printText(o, f.result, f.sets);
            printGroups(o, f.before, f.after);
            o << "wrote " << parser.value("out") << "\n";
        }
    } catch (const InputError& e) {
        return fail(QString::fromStdString(e.what()));
    }
    return Ok;
}

} // namespace paralens::cli
