// SPDX-License-Identifier: GPL-3.0-or-later
// paralens launch-config SCENARIO --framework F: the plan as a framework's launch files.
// paralens import-launch FILE: a launch file read back into a scenario.
#include "app/cli_commands.h"
#include "core/error.h"
#include "core/launch_config.h"
#include "core/launch_import.h"
#include "core/scenario_io.h"
#include "core/validate.h"

#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QSaveFile>
#include <QTextStream>

namespace paralens::cli {
namespace {

std::optional<QString> writeFile(const QString& path, const std::string& text)
{
    QSaveFile out(path);
    if (!out.open(QIODevice::WriteOnly))
        return path + ": cannot write (" + out.errorString() + ")";
    out.write(text.data(), qint64(text.size()));
    if (!out.commit())
        return path + ": cannot write (" + out.errorString() + ")";
    return std::nullopt;
}

// --out FILE: the main file there; a second file (DeepSpeed's launch script) beside it as
// FILE's name with .sh, naming FILE as its --deepspeed_config.
int writeFiles(const LaunchConfig& c, const QString& path)
{
    if (const auto err = writeFile(path, c.files.front().text))
        return fail(*err);
    QTextStream out(stdout);
    out << "wrote " << path << "\n";
    for (std::size_t i = 1; i < c.files.size(); ++i) {
        const QFileInfo info(path);
        const QString second = info.dir().filePath(info.completeBaseName() + ".sh");
        std::string text = c.files[i].text;
        const std::string from = "--deepspeed_config " + c.files.front().name;
        if (const auto at = text.find(from); at != std::string::npos)
            text.replace(at, from.size(), "--deepspeed_config " + info.fileName().toStdString());
        if (const auto err = writeFile(second, text))
            return fail(*err);
        out << "wrote " << second << "\n";
    }
    return Ok;
}

} // namespace

int cmdLaunchConfig(const QStringList& args)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Write the launch configuration of a scenario's plan for a training framework:\n"
        "  megatron         Megatron-LM pretrain_gpt.py arguments under torchrun\n"
        "  megatron-bridge  Megatron-Bridge run_recipe.py with recipe overrides\n"
        "  torchtitan       a torchtitan TOML job config\n"
        "  deepspeed        a DeepSpeed JSON config and its Megatron-DeepSpeed launch script\n"
        "Settings the framework cannot express are named as warnings, in the output and on "
        "stderr.");
    parser.addHelpOption();
    parser.addPositionalArgument("SCENARIO", "a .paralens.json scenario file");
    const QCommandLineOption frameworkOpt(
        "framework", "megatron, megatron-bridge, torchtitan or deepspeed", "F");
    const QCommandLineOption outOpt(
        "out",
        "write to FILE (DeepSpeed: the JSON; its launch script beside it, .sh) instead "
        "of stdout",
        "FILE");
    parser.addOptions({frameworkOpt, outOpt});
    int code = Ok;
    const auto loaded = parseAndLoadScenario(parser, args, "launch-config", &code);
    if (!loaded)
        return code;
    const auto f = parseLaunchFramework(parser.value(frameworkOpt).toStdString());
    if (!f) {
        QTextStream(stderr) << "error: launch-config: --framework must be megatron, "
                               "megatron-bridge, torchtitan or deepspeed\n";
        return BadUsage;
    }
    const LaunchConfig c = launchConfig(*loaded, *f);
    QTextStream err(stderr);
    for (const auto& w : c.warnings)
        err << "warning: " << QString::fromStdString(w.id) << ": "
            << QString::fromStdString(w.message) << "\n";
    err.flush();
    if (parser.isSet(outOpt))
        return writeFiles(c, parser.value(outOpt));
    QTextStream out(stdout);
    for (const auto& file : c.files) {
        if (c.files.size() > 1)
            out << "==> " << QString::fromStdString(file.name) << " <==\n";
        out << QString::fromStdString(file.text);
    }
    return Ok;
}

int cmdImportLaunch(const QStringList& args)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Read a launch file into a scenario: a Megatron-LM launch script or argument list, a\n"
        "Megatron-Bridge run_recipe.py script, a torchtitan TOML, a DeepSpeed JSON config, or a\n"
        "Megatron-DeepSpeed script (with the JSON its --deepspeed_config names). Prints the\n"
        "scenario JSON; notes on what was assumed, and the rules the plan breaks, go to stderr.");
    parser.addHelpOption();
    parser.addPositionalArgument("FILE", "the launch file");
    const QCommandLineOption modelOpt("model", "model preset to use (when the file has no shape)",
                                      "M");
    const QCommandLineOption hardwareOpt("hardware",
                                         "hardware preset (default: the file's "
                                         "paralens header, else h100-sxm)",
                                         "H");
    const QCommandLineOption outOpt("out", "write the scenario to FILE instead of stdout", "FILE");
    parser.addOptions({modelOpt, hardwareOpt, outOpt});
    if (const auto code = parseArguments(parser, args, "import-launch"))
        return *code;
    if (parser.positionalArguments().size() != 1) {
        QTextStream(stderr) << "error: import-launch needs exactly one FILE (paralens "
                               "import-launch --help)\n";
        return BadUsage;
    }
    LaunchImport imported;
    try {
        imported = importLaunchFile(
            parser.positionalArguments().front().toStdString(),
            {parser.value(modelOpt).toStdString(), parser.value(hardwareOpt).toStdString()},
            presets());
    } catch (const InputError& e) {
        return fail(QString::fromStdString(e.what()));
    }
    QTextStream err(stderr);
    err << "read as " << QString::fromStdString(std::string(toString(imported.framework))) << "\n";
    for (const auto& n : imported.notes)
        err << "note: " << QString::fromStdString(n) << "\n";
    for (const auto& v : validate(imported.scenario))
        err << "warning: the plan breaks " << QString::fromStdString(v.rule) << ": "
            << QString::fromStdString(v.message) << "\n";
    err.flush();
    const std::string text = scenarioToText(imported.scenario);
    if (parser.isSet(outOpt)) {
        if (const auto e = writeFile(parser.value(outOpt), text))
            return fail(*e);
        QTextStream(stdout) << "wrote " << parser.value(outOpt) << "\n";
        return Ok;
    }
    QTextStream(stdout) << QString::fromStdString(text);
    return Ok;
}

} // namespace paralens::cli
