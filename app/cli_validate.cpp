// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/cli_accuracy.h"
#include "app/cli_commands.h"
#include "core/error.h"

#include <QCommandLineParser>
#include <QTextStream>

#include <nlohmann/json.hpp>

namespace paralens::cli {

int cmdValidate(const QStringList& args)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Predicted vs measured for measured runs: a runs file (*.paralens-runs.json) or a\n"
        "measured-iteration CSV (docs/runs-format.md). Prints every run with its signed error\n"
        "and predicted breakdown, the mean absolute error, median and worst run, and for each\n"
        "group of competing plans the rank correlation and where the model's best plan ranks.\n"
        "Exit status 0 for any report; 1 only when an input cannot be read.");
    parser.addHelpOption();
    parser.addPositionalArgument("FILE", "runs file or measured-iteration CSV", "FILE...");
    const QCommandLineOption hardwareOpt(
        "hardware",
        "the cluster the CSV rows ran on: a hardware preset id, or a hardware preset file "
        "(e.g. resources/examples/vtrain-a100-cluster.json). Runs files name their own.",
        "ID|FILE");
    const QCommandLineOption jsonOpt("json", "print the report as one JSON object");
    const QCommandLineOption groupOpt(
        "group-by",
        "group runs for rank correlation: model-and-gpus (default), model, gpus, "
        "hardware, source, none",
        "KEY", "model-and-gpus");
    parser.addOptions({hardwareOpt, jsonOpt, groupOpt});
    if (const auto code = parseArguments(parser, args, "validate"))
        return *code;
    const QStringList files = parser.positionalArguments();
    if (files.isEmpty()) {
        QTextStream(stderr) << "error: validate needs at least one runs file or CSV "
                               "(paralens validate --help)\n";
        return BadUsage;
    }
    const auto groupBy = parseGroupBy(parser.value(groupOpt).toStdString());
    if (!groupBy) {
        QTextStream(stderr) << "error: --group-by: '" << parser.value(groupOpt)
                            << "' is not one of model-and-gpus, model, gpus, hardware, source, "
                               "none\n";
        return BadUsage;
    }

    std::vector<MeasuredRun> runs;
    std::vector<std::string> assumptions;
    try {
        std::optional<Scenario> cluster;
        if (parser.isSet(hardwareOpt))
            cluster = hardwareTemplate(parser.value(hardwareOpt).toStdString(), presets());
        for (const QString& f : files) {
            RunSet set = readRuns(f.toStdString(), presets(), cluster ? &*cluster : nullptr);
            for (const auto& a : set.assumptions)
                assumptions.push_back(set.file + ": " + a);
            std::move(set.runs.begin(), set.runs.end(), std::back_inserter(runs));
        }
    } catch (const InputError& e) {
        return fail(QString::fromStdString(e.what()));
    }

    AccuracyReport report = validateRuns(runs, ModelConstants{}, nullptr, *groupBy);
    report.assumptions = std::move(assumptions);
    QTextStream out(stdout);
    if (parser.isSet(jsonOpt))
        out << QString::fromStdString(accuracyJson(report, runs).dump(2)) << "\n";
    else
        printAccuracyReport(out, report, runs, *groupBy);
    return Ok;
}

} // namespace paralens::cli
