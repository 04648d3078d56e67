// SPDX-License-Identifier: GPL-3.0-or-later
// What every subcommand that reads one scenario file shares: its arguments, loading with the
// user's presets, and the error lines for a plan that cannot run.
#include "app/cli_commands.h"
#include "core/error.h"
#include "core/scenario_io.h"
#include "core/validate.h"

#include <QCommandLineParser>
#include <QTextStream>

namespace paralens::cli {

namespace {

std::optional<int> parseScenarioArgs(QCommandLineParser& parser, const QStringList& args,
                                     const char* subcommand, QString* file)
{
    if (const auto code = parseArguments(parser, args, subcommand))
        return *code;
    const QStringList files = parser.positionalArguments();
    if (files.size() != 1) {
        QTextStream(stderr) << "error: " << subcommand
                            << " needs exactly one SCENARIO file (paralens " << subcommand
                            << " --help)\n";
        return BadUsage;
    }
    *file = files.front();
    return std::nullopt;
}

std::optional<Scenario> loadRunnableScenario(const QString& path, int* code)
{
    Scenario s;
    try {
        s = loadScenarioFile(path.toStdString(), presets());
    } catch (const InputError& e) {
        *code = fail(QString::fromStdString(e.what()));
        return std::nullopt;
    }
    const auto errors = validate(s);
    if (errors.empty())
        return s;
    // One `error:` line (the first broken rule); the others follow as `  also:` lines.
    QTextStream err(stderr);
    for (std::size_t i = 0; i < errors.size(); ++i)
        err << (i == 0 ? "error: " : "  also: ") << path << ": "
            << QString::fromStdString(errors[i].message) << " ["
            << QString::fromStdString(errors[i].rule) << "]\n";
    *code = BadInput;
    return std::nullopt;
}

} // namespace

std::optional<Scenario> parseAndLoadScenario(QCommandLineParser& parser, const QStringList& args,
                                             const char* subcommand, int* code, QString* file)
{
    QString path;
    if (const auto done = parseScenarioArgs(parser, args, subcommand, &path)) {
        *code = *done;
        return std::nullopt;
    }
    if (file)
        *file = path;
    *code = Ok;
    return loadRunnableScenario(path, code);
}

} // namespace paralens::cli
