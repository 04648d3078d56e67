// SPDX-License-Identifier: GPL-3.0-or-later
// `paralens import-model CONFIG.json [--id ID] [--out PRESET.json | --install]`: a Hugging
// Face config.json in, a model preset out (docs/cli.md).
#include "app/cli_commands.h"

#include "app/import_model.h"
#include "app/user_presets.h"
#include "core/error.h"
#include "core/params.h"

#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QTextStream>

namespace paralens::cli {
namespace {

QString billions(double n)
{
    return QString::number(n / 1e9, 'f', 2) + " B";
}

// "Llama-3.1-8B (Llama): 32 layers, hidden 4096, ..., 8.03 B parameters".
QString summary(const ModelImport& m)
{
    const ModelSpec& s = m.imported.model;
    QString line =
        QStringLiteral("%1 (%2, preset '%3'): %4 layers, hidden %5, %6 heads (%7 KV)")
            .arg(QString::fromStdString(s.name), QString::fromStdString(m.imported.family), m.id)
            .arg(s.layers)
            .arg(s.hidden)
            .arg(s.heads)
            .arg(s.kv_heads);
    if (s.isMla())
        line += QStringLiteral(", MLA (kv rank %1, q rank %2)")
                    .arg(s.mla.kv_lora_rank)
                    .arg(s.mla.q_lora_rank);
    if (s.isMoe())
        line += QStringLiteral(", %1 experts top-%2").arg(s.moe.experts).arg(s.moe.top_k);
    line += ", " + billions(totalParameters(s)) + " parameters";
    if (s.isMoe())
        line += " (" + billions(activeParameters(s)) + " active)";
    if (s.mtp_layers > 0)
        line += QStringLiteral(" + %1 in %2 MTP module(s)")
                    .arg(billions(mtpParameters(s)))
                    .arg(s.mtp_layers);
    return line;
}

void printNotes(QTextStream& out, const ModelImport& m)
{
    for (const auto& n : m.imported.notes)
        out << "note: " << QString::fromStdString(n) << "\n";
}

} // namespace

int cmdImportModel(const QStringList& args)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Read a Hugging Face config.json and write a model preset (the presets format, which\n"
        "--presets DIR and the user preset folder take). Without --out or --install the preset\n"
        "is printed on stdout and the summary and notes on stderr.\n"
        "Families: " +
        QString::fromStdString(supportedHfArchitectures()));
    parser.addHelpOption();
    parser.addPositionalArgument("CONFIG", "a Hugging Face config.json", "CONFIG.json");
    const QCommandLineOption idOpt(
        "id", "preset id (default: from _name_or_path, the file or the folder name)", "ID");
    const QCommandLineOption outOpt("out", "write the preset to FILE", "FILE");
    const QCommandLineOption installOpt(
        "install", "write it into the user preset folder as ID.json (" + userPresetFolder() + ")");
    parser.addOptions({idOpt, outOpt, installOpt});
    if (const auto code = parseArguments(parser, args, "import-model"))
        return *code;
    const QStringList pos = parser.positionalArguments();
    if (pos.size() != 1) {
        QTextStream(stderr) << "error: import-model: expected one CONFIG.json (paralens "
                               "import-model --help)\n";
        return BadUsage;
    }
    if (parser.isSet(outOpt) && parser.isSet(installOpt)) {
        QTextStream(stderr) << "error: import-model: --out and --install exclude each other\n";
        return BadUsage;
    }
    ModelImport m;
    try {
        m = importModelPreset(pos.front(), parser.value(idOpt), presets());
    } catch (const InputError& e) {
        return fail(QString::fromStdString(e.what()));
    }
    QString target = parser.value(outOpt);
    if (parser.isSet(installOpt)) {
        target = QDir(userPresetFolder()).filePath(m.id + ".json");
        if (QFileInfo::exists(target))
            return fail(target + " exists already; choose another --id or remove the file");
    }
    if (target.isEmpty()) {
        QTextStream(stdout) << m.text;
        QTextStream err(stderr);
        err << summary(m) << "\n";
        printNotes(err, m);
        return Ok;
    }
    if (const QString e = writePresetFile(target, m.text); !e.isEmpty())
        return fail(target + ": cannot write the preset: " + e);
    QTextStream out(stdout);
    out << summary(m) << "\nwrote " << target << "\n";
    printNotes(out, m);
    return Ok;
}

} // namespace paralens::cli
