// SPDX-License-Identifier: GPL-3.0-or-later
// paralens search: every valid plan of a model on a cluster, scored; the best first.
#include "app/cli_commands.h"
#include "core/error.h"
#include "core/scenario_io.h"
#include "core/search.h"
#include "core/units.h"
#include "widgets/qt_text.h"

#include <QCommandLineParser>
#include <QTextStream>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <optional>

namespace paralens::cli {
namespace {

struct IntPin
{
    const char* name;
    std::optional<int> SearchSpace::*field;
    int min;
};

constexpr IntPin kIntPins[] = {
    {"tp", &SearchSpace::tp, 1},
    {"pp", &SearchSpace::pp, 1},
    {"dp", &SearchSpace::dp, 1},
    {"cp", &SearchSpace::cp, 1},
    {"ep", &SearchSpace::ep, 1},
    {"virtual-stages", &SearchSpace::virtual_stages, 1},
    {"micro-batch", &SearchSpace::micro_batch, 1},
    {"zero", &SearchSpace::zero, 0},
    {"shard-group", &SearchSpace::shard_group, 0},
};

std::optional<int> parseInt(const QString& text, int min)
{
    bool ok = false;
    const int v = text.toInt(&ok);
    if (!ok || v < min)
        return std::nullopt;
    return v;
}

std::optional<bool> parseOnOff(const QString& text)
{
    if (text == "on" || text == "true" || text == "1")
        return true;
    if (text == "off" || text == "false" || text == "0")
        return false;
    return std::nullopt;
}

QString planText(const SearchPlan& p)
{
    const ParallelPlan& pl = p.parallel;
    QString sched = qText(toString(pl.schedule));
    if (pl.virtual_stages > 1)
        sched += QString(" v%1").arg(pl.virtual_stages);
    QString zero = QString::number(pl.zero);
    if (pl.zero > 0 && pl.shard_group > 0)
        zero += QString("/%1").arg(pl.shard_group);
    return QString::asprintf("%3d %3d %4d %3d %3d  %-22s %2d  %-6s %-9s %-3s %-3s", pl.tp, pl.pp,
                             pl.dp, pl.cp, pl.ep, qPrintable(sched), p.training.micro_batch,
                             qPrintable(zero), qPrintable(qText(toString(p.training.recompute))),
                             pl.sequence_parallel ? "on" : "off",
                             pl.offload_optimizer ? "on" : "off");
}

void printTable(QTextStream& out, const SearchSpace& sp, const SearchResult& r)
{
    const Scenario& b = sp.base;
    out << QString::fromStdString(b.model.name) << " on " << b.gpus << " × "
        << QString::fromStdString(b.cluster.gpu.name) << ", global batch "
        << b.training.global_batch << " × " << b.training.seq_len << " tokens\n";
    out << QString::asprintf(
        "%llu plans evaluated (%llu scored, %llu proved too big from their "
        "weights), %llu fit; %.2f s on %u threads%s\n\n",
        static_cast<unsigned long long>(r.evaluated), static_cast<unsigned long long>(r.scored),
        static_cast<unsigned long long>(r.pruned), static_cast<unsigned long long>(r.feasible),
        r.seconds, r.threads, r.cancelled ? " (cancelled)" : "");
    if (r.results.empty()) {
        out << (r.evaluated == 0 ? "No valid plan: check the pinned dimensions against the model "
                                   "and the GPU count.\n"
                                 : "No plan fits in GPU memory.\n");
        return;
    }
    out << QString::asprintf("%4s %3s %3s %4s %3s %3s  %-22s %2s  %-6s %-9s %-3s %-3s %12s %6s "
                             "%9s %9s\n",
                             "rank", "tp", "pp", "dp", "cp", "ep", "schedule", "mb", "zero",
                             "recompute", "sp", "off", "tokens/s", "MFU", "peak GiB", "step s");
    int rank = 1;
    for (const SearchPlan& p : r.results)
        out << QString::asprintf("%4d ", rank++) << planText(p)
            << QString::asprintf(" %12.0f %5.1f%% %9.1f %9.3f\n", p.tokens_per_second, 100 * p.mfu,
                                 p.peak_bytes / units::kGiB, p.step_seconds);
    out << QString::asprintf("\nPareto front (tokens/s against peak memory): %zu plans, from "
                             "%.1f GiB at %.0f tokens/s to %.1f GiB at %.0f tokens/s\n",
                             r.pareto.size(), r.pareto.front().peak_bytes / units::kGiB,
                             r.pareto.front().tokens_per_second,
                             r.pareto.back().peak_bytes / units::kGiB,
                             r.pareto.back().tokens_per_second);
}

using Json = nlohmann::ordered_json;

Json planJson(const SearchSpace& sp, const SearchPlan& p)
{
    // The scenario file's own "parallel" and "training" objects, so a result pastes into one.
    const nlohmann::json s = scenarioToJson(scenarioFor(sp, p));
    Json j;
    j["parallel"] = Json::parse(s.at("parallel").dump());
    j["training"] = Json::parse(s.at("training").dump());
    j["tokens_per_second"] = p.tokens_per_second;
    j["mfu"] = p.mfu;
    j["peak_bytes"] = p.peak_bytes;
    j["step_seconds"] = p.step_seconds;
    return j;
}

Json toJson(const SearchSpace& sp, const SearchResult& r)
{
    Json j;
    j["evaluated"] = r.evaluated;
    j["feasible"] = r.feasible;
    j["seconds"] = r.seconds;
    j["scored"] = r.scored;
    j["pruned"] = r.pruned;
    j["threads"] = r.threads;
    j["results"] = Json::array();
    for (const SearchPlan& p : r.results)
        j["results"].push_back(planJson(sp, p));
    j["pareto"] = Json::array();
    for (const SearchPlan& p : r.pareto)
        j["pareto"].push_back(planJson(sp, p));
    return j;
}

} // namespace

int cmdSearch(const QStringList& args)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Score every valid parallel plan for a model on a cluster and print the best first.\n"
        "Pin a dimension (e.g. --tp 8) to search only the plans with that value.");
    parser.addHelpOption();
    const QCommandLineOption model("model", "model preset id (paralens presets)", "ID");
    const QCommandLineOption hardware("hardware", "hardware preset id", "ID");
    const QCommandLineOption gpus("gpus", "number of GPUs", "N");
    const QCommandLineOption batch("global-batch", "sequences per optimizer step", "B");
    const QCommandLineOption seq("seq-len", "tokens per sequence (default 4096)", "S");
    const QCommandLineOption top("top", "plans to print (default 10)", "K");
    const QCommandLineOption threads("threads", "worker threads (default: all cores)", "N");
    const QCommandLineOption json("json", "print JSON: evaluated, feasible, seconds, results[]");
    const QCommandLineOption schedule("schedule", "pin the pipeline schedule", "NAME");
    const QCommandLineOption recompute("recompute", "pin recomputation: none|selective|full",
                                       "MODE");
    const QCommandLineOption sp("sequence-parallel", "pin sequence parallelism: on|off", "on|off");
    const QCommandLineOption offload("offload", "pin optimizer offload: on|off", "on|off");
    const QCommandLineOption precision("precision", "bf16 (default) or fp8", "P");
    const QCommandLineOption framework("framework", "megatron (default), deepspeed or fsdp", "F");
    const QCommandLineOption maxTp("max-tp", "largest TP tried (default: the scale-up domain)",
                                   "N");
    for (const auto& o : {model, hardware, gpus, batch, seq, top, threads, json, schedule,
                          recompute, sp, offload, precision, framework, maxTp})
        parser.addOption(o);
    for (const IntPin& pin : kIntPins)
        parser.addOption(QCommandLineOption(pin.name, QString("pin %1").arg(pin.name), "N"));
    if (const auto code = parseArguments(parser, args, "search"))
        return *code;
    if (!parser.positionalArguments().isEmpty()) {
        QTextStream(stderr) << "error: search takes no positional arguments (got "
                            << parser.positionalArguments().front() << ")\n";
        return BadUsage;
    }
    for (const auto* required : {&model, &hardware, &gpus, &batch})
        if (!parser.isSet(*required)) {
            QTextStream(stderr) << "error: search needs --" << required->names().front()
                                << " (paralens search --help)\n";
            return BadUsage;
        }

    SearchSpace space;
    Scenario& b = space.base;
    const PresetLibrary& lib = presets();
    const std::string modelId = parser.value(model).toStdString();
    const std::string hwId = parser.value(hardware).toStdString();
    if (!lib.model(modelId))
        return fail("--model: unknown model preset '" + parser.value(model) +
                    "' (paralens presets lists them)");
    if (!lib.hardware(hwId))
        return fail("--hardware: unknown hardware preset '" + parser.value(hardware) +
                    "' (paralens presets lists them)");
    b.model_id = modelId;
    b.model = *lib.model(modelId);
    b.hardware_id = hwId;
    b.cluster = *lib.hardware(hwId);

    auto intOption = [&](const QCommandLineOption& o, int min, int& out) {
        const auto v = parseInt(parser.value(o), min);
        if (!v) {
            fail("--" + o.names().front() + ": expected an integer of at least " +
                 QString::number(min) + " (got '" + parser.value(o) + "')");
            return false;
        }
        out = *v;
        return true;
    };
    if (!intOption(gpus, 1, b.gpus) || !intOption(batch, 1, b.training.global_batch))
        return BadInput;
    if (parser.isSet(seq) && !intOption(seq, 1, b.training.seq_len))
        return BadInput;
    SearchOptions options;
    if (parser.isSet(top) && !intOption(top, 1, options.top_k))
        return BadInput;
    int nThreads = 0;
    if (parser.isSet(threads) && !intOption(threads, 1, nThreads))
        return BadInput;
    options.threads = unsigned(nThreads);
    if (parser.isSet(maxTp) && !intOption(maxTp, 1, space.max_tp))
        return BadInput;
    for (const IntPin& pin : kIntPins) {
        if (!parser.isSet(pin.name))
            continue;
        const auto v = parseInt(parser.value(pin.name), pin.min);
        if (!v)
            return fail(QString("--%1: expected an integer of at least %2 (got '%3')")
                            .arg(pin.name)
                            .arg(pin.min)
                            .arg(parser.value(pin.name)));
        space.*(pin.field) = *v;
    }
    if (parser.isSet(schedule)) {
        const auto s = parseSchedule(parser.value(schedule).toStdString());
        if (!s)
            return fail("--schedule: unknown schedule '" + parser.value(schedule) +
                        "' (gpipe, 1f1b, interleaved-1f1b, zb-h1, zb-v, dualpipe-v)");
        space.schedule = *s;
    }
    if (parser.isSet(recompute)) {
        const auto r = parseRecompute(parser.value(recompute).toStdString());
        if (!r)
            return fail("--recompute: expected none, selective or full (got '" +
                        parser.value(recompute) + "')");
        space.recompute = *r;
    }
    for (const auto& [opt, field] : {std::pair{&sp, &SearchSpace::sequence_parallel},
                                     std::pair{&offload, &SearchSpace::offload_optimizer}}) {
        if (!parser.isSet(*opt))
            continue;
        const auto v = parseOnOff(parser.value(*opt));
        if (!v)
            return fail("--" + opt->names().front() + ": expected on or off (got '" +
                        parser.value(*opt) + "')");
        space.*field = *v;
    }
    if (parser.isSet(precision)) {
        const auto p = parsePrecision(parser.value(precision).toStdString());
        if (!p)
            return fail("--precision: expected bf16 or fp8 (got '" + parser.value(precision) +
                        "')");
        b.training.precision = *p;
    }
    if (parser.isSet(framework)) {
        const auto f = parseFramework(parser.value(framework).toStdString());
        if (!f)
            return fail("--framework: expected megatron, deepspeed or fsdp (got '" +
                        parser.value(framework) + "')");
        b.training.framework = *f;
    }

    SearchResult result;
    try {
        result = search(space, options);
    } catch (const InputError& e) {
        return fail(QString::fromStdString(e.what()));
    }
    QTextStream out(stdout);
    if (parser.isSet(json))
        out << QString::fromStdString(toJson(space, result).dump(2)) << "\n";
    else
        printTable(out, space, result);
    return Ok;
}

} // namespace paralens::cli
