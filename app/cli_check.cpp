// SPDX-License-Identifier: GPL-3.0-or-later
// paralens check SCENARIO: load, validate, print the normalised scenario.
#include "app/cli_commands.h"
#include "core/scenario_io.h"

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
    int code = Ok;
    const auto loaded = parseAndLoadScenario(parser, args, "check", &code);
    if (!loaded)
        return code;
    const Scenario& scenario = *loaded;
    QTextStream(stdout) << QString::fromStdString(scenarioToText(scenario));
    return Ok;
}

} // namespace paralens::cli
