// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/cli.h"
#include "app/cli_commands.h"

#include <QTextStream>

#include <array>

namespace paralens::cli {
namespace {

struct Command
{
    const char* name;
    const char* summary;
    int (*run)(const QStringList&);
};

// The subcommand table; `paralens --help` lists it in this order.
const std::array kCommands{
    Command{"check", "validate a scenario and print it normalised", cmdCheck},
    Command{"export", "write a chart as PNG, SVG or PDF", cmdExport},
    Command{"presets", "list the model and hardware presets", cmdPresets},
};

const Command* find(const QString& name)
{
    for (const auto& c : kCommands)
        if (name == QLatin1String(c.name))
            return &c;
    return nullptr;
}

void printHelp(QTextStream& out)
{
    out << "Usage: paralens [SCENARIO.paralens.json]        open the explorer window\n"
           "       paralens SUBCOMMAND [OPTIONS]             run headless\n\n"
           "Subcommands:\n";
    for (const auto& c : kCommands)
        out << "  " << QString::fromLatin1(c.name).leftJustified(12) << c.summary << "\n";
    out << "\nOptions:\n  --help       show this help (also: paralens SUBCOMMAND --help)\n"
           "  --version    print the version\n";
}

} // namespace

int fail(const QString& message)
{
    QTextStream(stderr) << "error: " << message << "\n";
    return BadInput;
}

bool needsGui(const QStringList& args)
{
    return args.size() >= 2 && args.at(1) == QLatin1String("export");
}

bool wantsCli(const QStringList& args)
{
    if (args.size() < 2)
        return false;
    // A scenario file opens the window; anything else is a subcommand or an option.
    return !args.at(1).endsWith(QLatin1String(".json"));
}

int run(const QStringList& args)
{
    QTextStream out(stdout);
    const QString first = args.value(1);
    if (first == "--version" || first == "-v") {
        out << "paralens " << PARALENS_VERSION << "\n";
        return Ok;
    }
    if (first == "--help" || first == "-h") {
        printHelp(out);
        return Ok;
    }
    if (const Command* c = find(first))
        return c->run(args.mid(1));
    QTextStream(stderr) << "error: unknown subcommand '" << first
                        << "' (paralens --help lists them)\n";
    return BadUsage;
}

} // namespace paralens::cli
