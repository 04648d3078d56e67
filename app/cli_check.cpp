// SPDX-License-Identifier: GPL-3.0-or-later
// paralens check SCENARIO: load, validate, print the normalised scenario.
#include "app/cli_commands.h"
#include "core/error.h"
#include "core/scenario_io.h"
#include "core/validate.h"

#include <QCommandLineParser>
#include <QTextStream>

namespace paralens::cli {

int cmdCheck(const QStringList& args)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Validate a scenario file and print it normalised (every key, defaults filled in).\n"
        "Exit 0 when the plan can run, 1 with an `error: ...` line per broken rule otherwise.");
    parser.addHelpOption();
    parser.addPositionalArgument("SCENARIO", "a .paralens.json scenario file");
    if (!parser.parse(args)) {
        QTextStream(stderr) << "error: " << parser.errorText() << "\n";
        return BadUsage;
    }
    if (parser.isSet("help")) {
        QTextStream(stdout) << usageText(parser, "check");
        return Ok;
    }
    const QStringList files = parser.positionalArguments();
    if (files.size() != 1) {
        QTextStream(stderr) << "error: check needs exactly one SCENARIO file (paralens check "
                               "--help)\n";
        return BadUsage;
    }
    const QString path = files.front();
    Scenario scenario;
    try {
        scenario = loadScenarioFile(path.toStdString(), presets());
    } catch (const InputError& e) {
        return fail(QString::fromStdString(e.what()));
    }
    const auto errors = validate(scenario);
    if (!errors.empty()) {
        // One `error:` line (the first broken rule); the others follow as `  also:` lines.
        QTextStream err(stderr);
        for (std::size_t i = 0; i < errors.size(); ++i) {
            err << (i == 0 ? "error: " : "  also: ") << path << ": "
                << QString::fromStdString(errors[i].message) << " ["
                << QString::fromStdString(errors[i].rule) << "]\n";
        }
        return BadInput;
    }
    QTextStream(stdout) << QString::fromStdString(scenarioToText(scenario));
    return Ok;
}

} // namespace paralens::cli
