// SPDX-License-Identifier: GPL-3.0-or-later
// paralens presets [--json]: the model and hardware presets with their key figures.
#include "app/cli_commands.h"
#include "core/spec_io.h"

#include <nlohmann/json.hpp>

#include <QCommandLineParser>
#include <QTextStream>

namespace paralens::cli {
namespace {

QString num(double v, int precision = 0)
{
    return QString::number(v, 'f', precision);
}

QString cell(const QString& s, int width)
{
    return s.leftJustified(width, ' ', true) + "  ";
}

QString rcell(const QString& s, int width)
{
    return s.rightJustified(width) + "  ";
}

void printTable(QTextStream& out, const PresetLibrary& lib)
{
    out << "Models\n";
    out << cell("id", 16) << cell("name", 26) << rcell("layers", 6) << rcell("hidden", 6)
        << rcell("heads", 5) << rcell("kv", 3) << rcell("ffn", 6) << rcell("vocab", 7)
        << "experts\n";
    for (const auto& id : lib.modelIds()) {
        const ModelSpec& m = *lib.model(id);
        const QString experts =
            m.isMoe() ? QString("%1 top-%2").arg(m.moe.experts).arg(m.moe.top_k) : QString("-");
        out << cell(QString::fromStdString(id) + (lib.isBuiltin(id) ? "" : " *"), 16)
            << cell(QString::fromStdString(m.name), 26) << rcell(num(m.layers), 6)
            << rcell(num(static_cast<double>(m.hidden)), 6) << rcell(num(m.heads), 5)
            << rcell(num(m.kv_heads), 3) << rcell(num(static_cast<double>(m.ffn_hidden)), 6)
            << rcell(num(static_cast<double>(m.vocab)), 7) << experts << "\n";
    }
    out << "\nHardware\n";
    out << cell("id", 16) << cell("name", 36) << rcell("GiB", 5) << rcell("HBM GB/s", 8)
        << rcell("BF16 TF", 7) << rcell("FP8 TF", 7) << rcell("per node", 8) << rcell("scale-up", 8)
        << rcell("GB/s", 5) << "out GB/s\n";
    for (const auto& id : lib.hardwareIds()) {
        const ClusterSpec& c = *lib.hardware(id);
        out << cell(QString::fromStdString(id) + (lib.isBuiltin(id) ? "" : " *"), 16)
            << cell(QString::fromStdString(c.name), 36) << rcell(num(c.gpu.memory_gib), 5)
            << rcell(num(c.gpu.hbm_gbps), 8) << rcell(num(c.gpu.bf16_tflops, 1), 7)
            << rcell(c.gpu.fp8_tflops > 0 ? num(c.gpu.fp8_tflops, 1) : QString("-"), 7)
            << rcell(num(c.gpus_per_node), 8) << rcell(num(c.scale_up_domain), 8)
            << rcell(num(c.scale_up_gbps), 5) << num(c.scale_out_gbps) << "\n";
    }
    bool user = false;
    for (const auto& ids : {lib.modelIds(), lib.hardwareIds()})
        for (const auto& id : ids)
            user = user || !lib.isBuiltin(id);
    if (user)
        out << "\n* user preset\n";
}

nlohmann::json toJson(const PresetLibrary& lib)
{
    nlohmann::json j = {{"models", nlohmann::json::array()}, {"hardware", nlohmann::json::array()}};
    for (const auto& id : lib.modelIds()) {
        nlohmann::json m = modelToJson(*lib.model(id));
        m["id"] = id;
        m["builtin"] = lib.isBuiltin(id);
        m["source"] = lib.source(id);
        j["models"].push_back(m);
    }
    for (const auto& id : lib.hardwareIds()) {
        nlohmann::json h = clusterToJson(*lib.hardware(id));
        h["id"] = id;
        h["builtin"] = lib.isBuiltin(id);
        h["source"] = lib.source(id);
        j["hardware"].push_back(h);
    }
    return j;
}

} // namespace

int cmdPresets(const QStringList& args)
{
    QCommandLineParser parser;
    parser.setApplicationDescription("List the model and hardware presets (built-in and user).");
    parser.addHelpOption();
    const QCommandLineOption json("json", "print {\"models\": [...], \"hardware\": [...]}");
    parser.addOption(json);
    if (const auto code = parseArguments(parser, args, "presets"))
        return *code;
    if (!parser.positionalArguments().isEmpty()) {
        QTextStream(stderr) << "error: presets takes no arguments (got "
                            << parser.positionalArguments().front() << ")\n";
        return BadUsage;
    }
    QTextStream out(stdout);
    if (parser.isSet(json))
        out << QString::fromStdString(toJson(presets()).dump(2)) << "\n";
    else
        printTable(out, presets());
    return Ok;
}

} // namespace paralens::cli
