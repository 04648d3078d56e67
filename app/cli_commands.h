// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/presets.h"
#include "core/scenario.h"

#include <QStringList>

#include <optional>

class QCommandLineParser;

// One function per subcommand, each in its own cli_<name>.cpp. `args` starts with the
// subcommand name. Each returns the process exit code.
namespace paralens::cli {

int cmdPresets(const QStringList& args);
int cmdCheck(const QStringList& args);
int cmdCalibrate(const QStringList& args);
/// `calibrate --runs`: the model's constants fitted to measured runs (cli_calibrate_runs.cpp).
int cmdCalibrateRuns(const QStringList& args);
int cmdEval(const QStringList& args);
int cmdExport(const QStringList& args);
int cmdReference(const QStringList& args);
int cmdSearch(const QStringList& args);
int cmdSchedule(const QStringList& args);
int cmdValidate(const QStringList& args);
/// launch-config and import-launch (cli_launch.cpp).
int cmdLaunchConfig(const QStringList& args);
int cmdImportLaunch(const QStringList& args);
/// `import-model`: a Hugging Face config.json to a model preset (cli_import_model.cpp).
int cmdImportModel(const QStringList& args);

/// Prints "error: <message>" on stderr and returns the exit code for bad input.
int fail(const QString& message);
/// parser.helpText() with the usage line naming "paralens SUBCOMMAND" instead of the binary path.
QString usageText(const QCommandLineParser& parser, const char* subcommand);
/// Parses a subcommand's arguments. Returns nullopt to go on, or the exit code to return at
/// once: Ok after printing --help, BadUsage after an `error: SUBCOMMAND: ...` line.
std::optional<int> parseArguments(QCommandLineParser& parser, const QStringList& args,
                                  const char* subcommand);
/// The presets for this run: built-ins, the user's config folder and every --presets DIR
/// (run() loads them before the subcommand starts). Pass it to loadScenarioFile().
const PresetLibrary& presets();

/// Parses a subcommand taking one SCENARIO file, then loads it with the user's presets and
/// validates it. Returns the scenario (with *file set to its path when `file` is given), or
/// nullopt with *code the exit code to return at once: Ok after --help, BadUsage after a
/// usage error, BadInput after a load error or broken rules (one `error:` line, the first
/// broken rule, and `  also:` lines for the others).
std::optional<Scenario> parseAndLoadScenario(QCommandLineParser& parser, const QStringList& args,
                                             const char* subcommand, int* code,
                                             QString* file = nullptr);
/// Exit codes shared by all subcommands.
enum ExitCode
{
    Ok = 0,
    BadInput = 1,
    BadUsage = 2
};

} // namespace paralens::cli
