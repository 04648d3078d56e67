// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/cli.h"
#include "app/cli_commands.h"
#include "app/user_presets.h"
#include "core/error.h"

#include <QCommandLineParser>
#include <QRegularExpression>
#include <QTextStream>

#include <array>
#include <optional>

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
    Command{"calibrate", "fit a calibration profile from nccl-tests logs / measurements",
            cmdCalibrate},
    Command{"eval", "per-stage memory, step time and throughput of a scenario", cmdEval},
    Command{"reference", "predicted vs published throughput of known training runs", cmdReference},
    Command{"search", "score every valid plan for a model on N GPUs; best first", cmdSearch},
    Command{"schedule", "simulate the pipeline schedule (timeline, bubble, --trace)", cmdSchedule},
    Command{"tour", "run a guided tour: captions, --check its expectations, --export a handout",
            cmdTour},
    Command{"validate", "predicted vs measured for runs files and measured-iteration CSVs",
            cmdValidate},
    Command{"launch-config",
            "the plan as Megatron-LM, Megatron-Bridge, torchtitan or DeepSpeed "
            "launch files",
            cmdLaunchConfig},
    Command{"import-launch",
            "read a launch script, torchtitan TOML or DeepSpeed JSON into a "
            "scenario",
            cmdImportLaunch},
    Command{"import-model", "a Hugging Face config.json to a model preset", cmdImportModel},
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
        out << "  " << QString::fromLatin1(c.name).leftJustified(14) << c.summary << "\n";
    out << "\nOptions:\n  --help          show this help (also: paralens SUBCOMMAND --help)\n"
           "  --version       print the version\n"
           "  --presets DIR   add the model/hardware presets in DIR (any subcommand; repeatable).\n"
           "                  "
        << userPresetFolder() << " is read too when it exists.\n";
}

// The run's preset library; a process runs one subcommand, so one library per process.
std::optional<PresetLibrary>& library()
{
    static std::optional<PresetLibrary> lib;
    return lib;
}

} // namespace

const PresetLibrary& presets()
{
    if (!library())
        library().emplace(loadPresetLibrary({}));
    return *library();
}

QString usageText(const QCommandLineParser& parser, const char* subcommand)
{
    QString text = parser.helpText();
    const auto options = text.indexOf(" [options]");
    if (text.startsWith("Usage: ") && options > 0)
        text.replace(7, options - 7, QString("paralens ") + subcommand);
    return text;
}

std::optional<int> parseArguments(QCommandLineParser& parser, const QStringList& args,
                                  const char* subcommand)
{
    if (!parser.parse(args)) {
        QTextStream(stderr) << "error: " << subcommand << ": " << parser.errorText() << "\n";
        return BadUsage;
    }
    if (parser.isSet("help")) {
        QTextStream(stdout) << usageText(parser, subcommand);
        return Ok;
    }
    return std::nullopt;
}

int fail(const QString& message)
{
    QTextStream(stderr) << "error: " << message << "\n";
    return BadInput;
}

bool needsGui(const QStringList& arguments)
{
    QStringList args = arguments;
    takePresetOptions(args);
    if (args.size() < 2)
        return false;
    // `tour --export` draws charts; `tour --check` and the rest run without a GUI platform.
    return args.at(1) == QLatin1String("export") ||
           (args.at(1) == QLatin1String("tour") &&
            (args.contains(QLatin1String("--export")) ||
             args.filter(QRegularExpression(QStringLiteral("^--export="))).size() > 0));
}

bool wantsCli(const QStringList& arguments)
{
    QStringList args = arguments;
    takePresetOptions(args);
    args.removeAll(QStringLiteral("--present")); // a window option: presentation mode
    if (args.size() < 2)
        return false;
    // A scenario file or `--tour` / `--tour-step` opens the window; anything else is a
    // subcommand or an option.
    return !args.at(1).endsWith(QLatin1String(".json")) &&
           !args.at(1).startsWith(QLatin1String("--tour"));
}

int run(const QStringList& arguments)
{
    QTextStream out(stdout);
    QStringList args = arguments;
    const QStringList dirs = takePresetOptions(args);
    const QString first = args.value(1);
    if (args.contains("--presets")) { // takePresetOptions() leaves a trailing one without DIR
        QTextStream(stderr) << "error: --presets needs a folder (--presets DIR)\n";
        return BadUsage;
    }
    if (first == "--version" || first == "-v") {
        out << "paralens " << PARALENS_VERSION << "\n";
        return Ok;
    }
    if (first == "--help" || first == "-h") {
        printHelp(out);
        return Ok;
    }
    if (const Command* c = find(first)) {
        try {
            library().emplace(loadPresetLibrary(dirs));
        } catch (const InputError& e) {
            return fail(QString::fromStdString(e.what()));
        }
        return c->run(args.mid(1));
    }
    QTextStream(stderr) << "error: unknown subcommand '" << first
                        << "' (paralens --help lists them)\n";
    return BadUsage;
}

} // namespace paralens::cli
