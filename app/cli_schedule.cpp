// SPDX-License-Identifier: GPL-3.0-or-later
// paralens schedule SCENARIO [--json] [--trace OUT.json]: the simulated pipeline timeline.
#include "app/cli_commands.h"
#include "core/error.h"
#include "core/evaluate.h"
#include "core/pipeline_cost.h"
#include "core/scenario_io.h"
#include "core/schedule.h"
#include "core/trace.h"
#include "widgets/qt_text.h"

#include <QCommandLineParser>
#include <QFileInfo>
#include <QSaveFile>
#include <QTextStream>

namespace paralens::cli {
namespace {

QString num(double v, int precision)
{
    return QString::number(v, 'f', precision);
}

/// Seconds with a unit a reader takes in at a glance: "18.16 s", "412.3 ms", "85.0 us".
QString duration(double seconds)
{
    if (seconds >= 1)
        return num(seconds, 2) + " s";
    if (seconds >= 1e-3)
        return num(seconds * 1e3, 1) + " ms";
    return num(seconds * 1e6, 1) + " us";
}

void printSummary(QTextStream& out, const Scenario& s, const Estimate& est,
                  const PipelineTimeline& tl)
{
    const PipelineSchedule& sc = tl.schedule;
    const SimulationResult& r = tl.result;
    out << "schedule " << qText(toString(sc.kind)) << ": pp " << sc.stages;
    if (sc.chunks > 1)
        out << " x " << sc.chunks << " chunks";
    out << ", " << sc.microbatches << " micro-batches, " << sc.ops.size() << " ops\n";
    out << "step " << duration(est.time.step_seconds) << " (pipeline "
        << duration(r.pipeline_seconds) << "), bubble " << num(r.bubble_fraction * 100, 1)
        << " % of the pipeline, overhead " << num(r.bubble_overhead * 100, 1)
        << " % of compute, p2p on the critical path " << duration(r.p2p_exposed_seconds) << "\n\n";
    out << "stage    busy s    idle s   peak in flight\n";
    for (const StageStats& st : r.stages)
        out << QString::number(st.stage).rightJustified(5)
            << num(st.busy_seconds, 4).rightJustified(10)
            << num(st.idle_seconds, 4).rightJustified(10)
            << QString::number(st.peak_inflight_microbatches).rightJustified(17) << "\n";
    if (sc.chunks > 1)
        out << "(in flight counts chunk-micro-batches of "
            << num(double(s.model.layers) / (sc.stages * sc.chunks), 1) << " layers each)\n";
}

bool writeFile(const QString& path, const std::string& text, QString& error)
{
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly)) {
        error = f.errorString();
        return false;
    }
    f.write(text.data(), qint64(text.size()));
    if (!f.commit()) {
        error = f.errorString();
        return false;
    }
    return true;
}

} // namespace

int cmdSchedule(const QStringList& args)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Simulate the scenario's pipeline schedule with the model's per-stage times and print\n"
        "the timeline: step time, bubble, per-stage busy/idle time and peak micro-batches in\n"
        "flight. --json prints every op with its start and end (seconds).");
    parser.addHelpOption();
    parser.addPositionalArgument("SCENARIO", "a .paralens.json scenario file");
    const QCommandLineOption json("json", "print JSON (keys in docs/cli.md)");
    const QCommandLineOption trace(
        "trace", "write Chrome trace-event JSON (Perfetto, chrome://tracing) to FILE", "FILE");
    parser.addOption(json);
    parser.addOption(trace);
    QString path;
    int code = Ok;
    const auto loaded = parseAndLoadScenario(parser, args, "schedule", &code, &path);
    if (!loaded)
        return code;
    const Scenario& scenario = *loaded;

    Estimate est;
    PipelineTimeline timeline;
    evaluate(scenario, est, nullptr, ModelConstants{}, &timeline);
    if (!timeline.simulated) {
        // Build it again to say why: the op limit or a rule of the schedule itself.
        try {
            buildSchedule(scheduleParamsFor(scenario.parallel, est.microbatches));
        } catch (const InputError& e) {
            return fail(path + ": " + QString::fromStdString(e.what()));
        }
        return fail(path + ": the pipeline schedule could not be simulated");
    }

    if (parser.isSet(trace)) {
        QString why;
        const QString out = parser.value(trace);
        const std::string text = chromeTrace(timeline.schedule, timeline.result,
                                             QFileInfo(path).baseName().toStdString())
                                     .dump();
        if (!writeFile(out, text, why))
            return fail("--trace: cannot write " + out + ": " + why);
    }

    QTextStream out(stdout);
    if (parser.isSet(json)) {
        nlohmann::json j = timelineJson(timeline.schedule, timeline.result);
        // The whole optimizer step, as `paralens eval` reports it (the timeline's span plus
        // exposed DP synchronisation, optimizer and the like); pipeline_seconds is the span.
        j["step_seconds"] = est.time.step_seconds;
        // peak_inflight_microbatches counts chunk-micro-batches; inflight_microbatches is the
        // figure `paralens eval` multiplies activations by (whole-stage micro-batches, plus
        // 32/34 of one per pending weight-gradient pass in the zero-bubble schedules).
        for (std::size_t i = 0; i < j["stage_stats"].size() && i < est.stages.size(); ++i)
            j["stage_stats"][i]["inflight_microbatches"] = est.stages[i].inflight_microbatches;
        out << QString::fromStdString(j.dump(1)) << "\n";
    } else {
        printSummary(out, scenario, est, timeline);
    }
    return Ok;
}

} // namespace paralens::cli
