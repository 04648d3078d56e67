// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/cli_commands.h"
#include "core/accuracy.h"
#include "core/accuracy_plot.h"
#include "core/calibration.h"
#include "core/error.h"
#include "core/estimate_json.h"
#include "core/evaluate.h"
#include "core/gpu_family.h"
#include "core/kernel_time.h"
#include "core/scenario_io.h"
#include "core/units.h"
#include "widgets/qt_text.h"

#include <QCommandLineParser>
#include <QFileInfo>
#include <QTextStream>

#include <nlohmann/json.hpp>

#include <cmath>
#include <memory>

namespace paralens::cli {
namespace {

QString gib(double bytes)
{
    return QString::asprintf("%.1f", bytes / units::kGiB);
}

QString ms(double seconds)
{
    return QString::asprintf("%.1f", seconds * 1e3);
}

// How far the model's own constants were from the built-in published runs of this framework on
// this GPU family (stackAccuracy()): the evidence behind the figures above.
void printPublishedEvidence(QTextStream& out, const Scenario& s)
{
    const RunSet set = builtinReferenceRuns();
    const SimilarAccuracy a = stackAccuracy(validateRuns(set.runs, ModelConstants{}), set.runs, s);
    const QString stack = qText(toString(s.training.framework)) + " on " +
                          qText(gpuFamily(s.cluster.gpu.name)) + " GPUs";
    if (a.runs == 0) {
        out << "Published runs of this stack (" << stack << "): none built in\n";
        return;
    }
    out << QString::asprintf("Published runs of this stack (%s, paralens reference): %d speed "
                             "figures, MAPE %.1f %%, predicted %.1f %% %s on average\n",
                             qPrintable(stack), a.runs, 100 * a.mape, 100 * std::abs(a.mean_fast),
                             a.mean_fast >= 0 ? "fast" : "slow");
}

void printTable(QTextStream& out, const Scenario& s, const Estimate& e)
{
    const ParallelPlan& p = s.parallel;
    out << QString::fromStdString(s.model.name) << " on " << e.gpus << " × "
        << QString::fromStdString(s.cluster.gpu.name) << "\n";
    out << QString::asprintf("plan: tp %d · pp %d · dp %d · cp %d · ep %d, %s", p.tp, p.pp, p.dp,
                             p.cp, p.ep, qPrintable(qText(toString(p.schedule))));
    if (p.virtual_stages > 1)
        out << " v" << p.virtual_stages;
    // Megatron's module list, when it is not the default attention core.
    QString modules;
    const TrainingSettings& tr = s.training;
    if (tr.recompute == Recompute::Selective && tr.recompute_modules != kRecomputeCoreAttn) {
        const std::string names = recomputeModuleList(tr.recompute_modules, ", ");
        modules = " (" + (names.empty() ? QStringLiteral("nothing") : qText(names)) + ")";
    }
    if (tr.recomputedPerChunk() > 0) // full recompute of some layers
        modules = QStringLiteral(" (%1 layers a chunk)").arg(tr.recompute_num_layers);
    out << QString::asprintf(", zero %d, %s, %s recompute%s, %d micro-batches\n\n", p.zero,
                             qPrintable(qText(toString(tr.framework))),
                             qPrintable(qText(toString(tr.recompute))), qPrintable(modules),
                             e.microbatches);

    out << (e.calibrated ? "calibration: measured collectives and GEMM efficiency from " +
                               QString::fromStdString(s.calibration)
                         : QString("calibration: none (datasheet figures)"))
        << "\n\n";
    out << "Memory per GPU (GiB), capacity " << gib(e.capacity_bytes) << "\n";
    out << QString::asprintf("%6s %6s %8s %8s %8s %8s %8s %8s %8s %9s\n", "stage", "layers",
                             "params", "grads", "optim", "activ", "buffers", "runtime", "total",
                             "in-flight");
    for (const StageMemory& st : e.stages)
        out << QString::asprintf("%6d %6d %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %9.1f\n",
                                 st.stage, st.layers, st.parameters / units::kGiB,
                                 st.gradients / units::kGiB, st.optimizer_states / units::kGiB,
                                 st.activations / units::kGiB, st.comm_buffers / units::kGiB,
                                 st.runtime_overhead / units::kGiB, st.total() / units::kGiB,
                                 st.inflight_microbatches);
    out << "peak: stage " << e.peak_stage << ", " << gib(e.peak_bytes)
        << " GiB: " << (e.fits ? "fits" : "DOES NOT FIT") << "\n\n";

    const TimeBreakdown& t = e.time;
    out << "Step time " << ms(t.step_seconds) << " ms: compute " << ms(t.compute_seconds)
        << " ms, bubble " << QString::asprintf("%.1f %%", 100 * t.bubble_fraction)
        << " of the step (" << QString::asprintf("%.1f %%", 100 * t.bubble_overhead)
        << " of compute), optimizer " << ms(t.optimizer_seconds) << " ms";
    if (t.offload_seconds > 0)
        out << ", offload " << ms(t.offload_seconds) << " ms";
    out << "\n";
    out << "Exposed communication (ms): tp " << ms(t.exposed.tp) << ", cp " << ms(t.exposed.cp)
        << ", ep " << ms(t.exposed.ep) << ", pp " << ms(t.exposed.pp) << ", dp " << ms(t.exposed.dp)
        << "\n";
    out << "Overlapped communication (ms): tp " << ms(t.overlapped.tp) << ", cp "
        << ms(t.overlapped.cp) << ", ep " << ms(t.overlapped.ep) << ", pp " << ms(t.overlapped.pp)
        << ", dp " << ms(t.overlapped.dp) << "\n\n";

    const Throughput& th = e.throughput;
    out << QString::asprintf("Throughput: %.0f tokens/s, %.1f TFLOP/s per GPU (model FLOPs, full "
                             "s²), MFU %.1f %%, HFU %.1f %%\n",
                             th.tokens_per_second, th.tflops_per_gpu, 100 * th.mfu, 100 * th.hfu);
    if (!e.calibrated)
        printPublishedEvidence(out, s);
    const auto warnings = warningTexts(e);
    if (!warnings.empty()) {
        out << "\nWarnings:\n";
        for (const auto& w : warnings)
            out << "  - " << QString::fromStdString(w) << "\n";
    }
}

} // namespace

int cmdEval(const QStringList& args)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Per-stage memory, step time, throughput and warnings of a scenario (the core model).\n"
        "Bytes and seconds in --json; GiB and ms in the table.");
    parser.addHelpOption();
    parser.addPositionalArgument("SCENARIO", "a .paralens.json scenario file");
    const QCommandLineOption jsonOpt("json", "print the Estimate as JSON (keys in docs/cli.md)");
    parser.addOption(jsonOpt);
    QString path;
    int code = Ok;
    const auto loaded = parseAndLoadScenario(parser, args, "eval", &code, &path);
    if (!loaded)
        return code;
    const bool json = parser.isSet(jsonOpt);
    const Scenario& s = *loaded;
    // A profile named by the scenario replaces datasheet figures; its path is relative to
    // the scenario file.
    std::unique_ptr<CalibratedPerformance> measured;
    try {
        measured = loadCalibration(s, QFileInfo(path).absolutePath().toStdString());
    } catch (const InputError& e) {
        return fail(QString::fromStdString(e.what()));
    }
    Estimate e;
    evaluate(s, e, measured.get());
    QTextStream out(stdout);
    if (json)
        out << QString::fromStdString(estimateToJson(e).dump(2)) << "\n";
    else
        printTable(out, s, e);
    return Ok;
}

} // namespace paralens::cli
