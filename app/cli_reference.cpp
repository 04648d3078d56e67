// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/cli_commands.h"
#include "core/error.h"
#include "core/evaluate.h"
#include "core/reference.h"
#include "core/validate.h"

#include <QCommandLineParser>
#include <QTextStream>

#include <nlohmann/json.hpp>

#include <cmath>

namespace paralens::cli {

int cmdReference(const QStringList& args)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Predicted vs published throughput of the built-in reference runs (resources/reference),\n"
        "each in the publication's own metric and FLOP convention, with the mean absolute error.");
    parser.addHelpOption();
    const QCommandLineOption jsonOpt("json", "print the comparison as JSON");
    parser.addOption(jsonOpt);
    if (!parser.parse(args)) {
        QTextStream(stderr) << "error: " << parser.errorText() << "\n";
        return BadUsage;
    }
    if (parser.isSet("help")) {
        QTextStream(stdout) << usageText(parser, "reference");
        return Ok;
    }
    if (!parser.positionalArguments().isEmpty()) {
        QTextStream(stderr) << "error: reference takes no arguments (paralens reference --help)\n";
        return BadUsage;
    }
    const bool json = parser.isSet(jsonOpt);
    std::vector<ReferenceRun> runs;
    try {
        runs = referenceRuns();
    } catch (const InputError& e) {
        return fail(QString::fromStdString(e.what()));
    }

    nlohmann::json rows = nlohmann::json::array();
    QTextStream out(stdout);
    if (!json)
        out << QString::asprintf("%-52s %9s %9s %8s %5s\n", "run (TFLOP/s per GPU, or MFU)",
                                 "published", "predicted", "error", "fits");
    std::string lastSource;
    double sumAbs = 0;
    int n = 0;
    Estimate e;
    for (const ReferenceRun& r : runs) {
        if (!isRunnable(r.scenario)) {
            const auto errs = validate(r.scenario);
            return fail(QString::fromStdString("reference/" + r.file + ": " + r.name + ": " +
                                               (errs.empty() ? "invalid" : errs[0].message)));
        }
        evaluate(r.scenario, e);
        const double predicted = predictedMetric(r, e);
        const double error = (predicted - r.published) / r.published;
        sumAbs += std::abs(error);
        ++n;
        if (json) {
            rows.push_back({{"source", r.source},
                            {"name", r.name},
                            {"metric", r.metric},
                            {"published", r.published},
                            {"predicted", predicted},
                            {"error", error},
                            {"fits", e.fits}});
        } else {
            if (r.source != lastSource) {
                out << "\n" << QString::fromStdString(r.source) << "\n";
                lastSource = r.source;
            }
            // MFU rows print in percent; TFLOP/s rows as they are.
            const double scale = r.metric == "mfu" ? 100.0 : 1.0;
            const char* unit = r.metric == "mfu" ? "%" : " ";
            out << QString::asprintf("  %-50s %8.1f%s %8.1f%s %+7.1f%% %5s\n", r.name.c_str(),
                                     scale * r.published, unit, scale * predicted, unit,
                                     100 * error, e.fits ? "yes" : "no");
        }
    }
    const double mae = n > 0 ? sumAbs / n : 0;
    if (json) {
        const nlohmann::json doc{
            {"runs", std::move(rows)}, {"count", n}, {"mean_absolute_error", mae}};
        out << QString::fromStdString(doc.dump(2)) << "\n";
    } else {
        out << QString::asprintf("\nMean absolute error over %d runs: %.1f %%\n", n, 100 * mae);
    }
    return Ok;
}

} // namespace paralens::cli
