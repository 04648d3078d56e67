// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/cli_accuracy.h"
#include "app/cli_commands.h"
#include "core/error.h"

#include <QCommandLineParser>
#include <QTextStream>

#include <nlohmann/json.hpp>

namespace paralens::cli {

// The built-in reference runs are one data set of `paralens validate`: the same rows, summary
// and groups. The JSON keeps the keys of the earlier report (count, mean_absolute_error and
// per run published, source, fits) beside validate's.
int cmdReference(const QStringList& args)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Predicted vs published throughput of the built-in reference runs (resources/reference),\n"
        "each in the publication's own metric and FLOP convention, with the mean absolute error;\n"
        "the same report as paralens validate.");
    parser.addHelpOption();
    const QCommandLineOption jsonOpt("json", "print the comparison as JSON");
    parser.addOption(jsonOpt);
    if (const auto code = parseArguments(parser, args, "reference"))
        return *code;
    if (!parser.positionalArguments().isEmpty()) {
        QTextStream(stderr) << "error: reference takes no arguments (paralens reference --help)\n";
        return BadUsage;
    }
    RunSet set;
    try {
        set = builtinReferenceRuns();
    } catch (const InputError& e) {
        return fail(QString::fromStdString(e.what()));
    }
    const GroupBy groupBy = GroupBy::ModelAndGpus;
    AccuracyReport report = validateRuns(set.runs, ModelConstants{}, nullptr, groupBy);
    report.assumptions = set.assumptions;

    QTextStream out(stdout);
    if (!parser.isSet(jsonOpt)) {
        printAccuracyReport(out, report, set.runs, groupBy);
        return Ok;
    }
    nlohmann::json doc = accuracyJson(report, set.runs);
    for (std::size_t i = 0; i < report.rows.size(); ++i) {
        const RunResult& r = report.rows[i];
        nlohmann::json& row = doc["runs"][i];
        row["published"] = r.measured;
        row["source"] = set.runs[r.run_index].source;
        if (r.failure.empty())
            row["fits"] = r.fits;
    }
    doc["count"] = report.summary.runs;
    doc["mean_absolute_error"] = report.summary.mape;
    out << QString::fromStdString(doc.dump(2)) << "\n";
    return Ok;
}

} // namespace paralens::cli
