// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/cli_accuracy.h"
#include "core/accuracy_plot.h"
#include "widgets/qt_text.h"

#include <QString>

#include <nlohmann/json.hpp>

#include <algorithm>

namespace paralens::cli {
namespace {

QString value(RunMetric m, double v)
{
    switch (m) {
    case RunMetric::StepSeconds:
        return QString::asprintf("%.4g s", v);
    case RunMetric::TokensPerSecond:
        return QString::asprintf("%.4g tok/s", v);
    case RunMetric::TflopsPerGpu:
        return QString::asprintf("%.1f TF/s", v);
    case RunMetric::Mfu:
        return QString::asprintf("%.1f %%", 100 * v);
    case RunMetric::PeakMemoryGib:
        return QString::asprintf("%.1f GiB", v);
    }
    return QString::number(v);
}

QString percent(double fraction)
{
    return QString::asprintf("%+.1f %%", 100 * fraction);
}

void printRows(QTextStream& out, const AccuracyReport& rep, std::span<const MeasuredRun> runs)
{
    int width = 20;
    for (const RunResult& r : rep.rows)
        width = std::max(width, int(r.name.size()));
    width = std::min(width, 60);
    out << QString("run").leftJustified(width + 3)
        << QString::asprintf("%-17s %12s %12s %8s  %s\n", "metric", "measured", "predicted",
                             "error", "predicted: compute  bubble    comm   optim (s)");
    std::string lastSource = "\x01"; // print the first source too
    for (const RunResult& r : rep.rows) {
        const std::string& source = runs[r.run_index].source;
        if (source != lastSource && !source.empty())
            out << QString::fromStdString(source) << "\n";
        lastSource = source;
        out << "  " << QString::fromStdString(r.name).leftJustified(width) << " "
            << QString::asprintf("%-17s ", std::string(metricName(r.metric)).c_str())
            << value(r.metric, r.measured).rightJustified(12) << " ";
        if (!r.failure.empty()) {
            out << "failed: " << QString::fromStdString(r.failure) << "\n";
            continue;
        }
        out << value(r.metric, r.predicted).rightJustified(12) << " "
            << percent(r.error).rightJustified(8)
            << QString::asprintf("  %18.3f %7.3f %7.3f %7.3f", r.compute_seconds, r.bubble_seconds,
                                 r.comm_seconds, r.optimizer_seconds)
            << (r.fits ? "" : "  (does not fit)") << "\n";
    }
}

// The bias of each software stack: a level shared by all, or one stack's conventions.
void printStacks(QTextStream& out, const AccuracyReport& rep, std::span<const MeasuredRun> runs)
{
    const std::vector<StackAccuracy> stacks = accuracyByStack(rep, runs);
    if (stacks.empty())
        return;
    out << "\nBy stack (framework on GPU family): speed figures, MAPE, and how much faster the "
           "model says they run (mean signed; negative: slower)\n";
    for (const StackAccuracy& st : stacks)
        out << "  " << qText(toString(st.framework)) << " on " << qText(st.family) << ": "
            << st.accuracy.runs
            << QString::asprintf(" runs, MAPE %.1f %%, ", 100 * st.accuracy.mape)
            << percent(st.accuracy.mean_fast) << "\n";
}

void printSummary(QTextStream& out, const AccuracyReport& rep, GroupBy group_by)
{
    const AccuracySummary& s = rep.summary;
    out << "\n" << s.runs << " runs predicted, " << s.failed << " failed\n";
    if (s.runs > 0)
        out << QString::asprintf("Mean absolute error (MAPE) over %d runs: %.1f %%, median %.1f "
                                 "%%; worst: ",
                                 s.runs, 100 * s.mape, 100 * s.median_ape)
            << QString::fromStdString(s.worst_name) << ", " << percent(s.worst_error) << "\n";
    if (rep.groups.empty())
        return;
    out << "\nGroups (" << QString::fromStdString(std::string(toString(group_by)))
        << "): Spearman rank correlation of predicted vs measured speed, and where the model's "
           "best plan ranks\n";
    for (const GroupSummary& g : rep.groups) {
        out << "  " << QString::fromStdString(g.key) << ": " << g.runs << " runs, Spearman "
            << QString::asprintf("%.2f", g.spearman) << "\n    the plan ranked best by the model ("
            << QString::fromStdString(g.best_plan) << ") is measured rank " << g.best_plan_rank;
        if (g.best_plan_rank == 1)
            out << ", the measured best\n";
        else
            out << QString::asprintf(", %.1f %% slower than the measured best (",
                                     100 * g.best_plan_slowdown)
                << QString::fromStdString(g.measured_best) << ")\n";
    }
}

} // namespace

void printAccuracyReport(QTextStream& out, const AccuracyReport& report,
                         std::span<const MeasuredRun> runs, GroupBy group_by)
{
    if (!report.assumptions.empty()) {
        out << "Assumptions:\n";
        for (const auto& a : report.assumptions)
            out << "  - " << QString::fromStdString(a) << "\n";
        out << "\n";
    }
    printRows(out, report, runs);
    printSummary(out, report, group_by);
    printStacks(out, report, runs);
}

nlohmann::json accuracyJson(const AccuracyReport& report, std::span<const MeasuredRun> runs)
{
    using nlohmann::json;
    const AccuracySummary& s = report.summary;
    json summary{
        {"runs", s.runs}, {"failed", s.failed}, {"mape", s.mape}, {"median_ape", s.median_ape}};
    summary["worst"] =
        s.runs > 0 ? json{{"name", s.worst_name}, {"error", s.worst_error}} : json(nullptr);
    json groups = json::array();
    for (const GroupSummary& g : report.groups)
        groups.push_back({{"key", g.key},
                          {"runs", g.runs},
                          {"spearman", g.spearman},
                          {"best_plan_rank", g.best_plan_rank},
                          {"best_plan_slowdown", g.best_plan_slowdown}});
    json rows = json::array();
    for (const RunResult& r : report.rows) {
        json row{{"name", r.name},
                 {"metric", std::string(metricName(r.metric))},
                 {"measured", r.measured}};
        if (r.failure.empty()) {
            row["predicted"] = r.predicted;
            row["error"] = r.error;
        } else {
            row["failed"] = r.failure;
        }
        rows.push_back(std::move(row));
    }
    json stacks = json::array();
    for (const StackAccuracy& st : accuracyByStack(report, runs))
        stacks.push_back({{"framework", std::string(toString(st.framework))},
                          {"gpu_family", std::string(st.family)},
                          {"runs", st.accuracy.runs},
                          {"mape", st.accuracy.mape},
                          {"mean_signed", st.accuracy.mean_fast}});
    return json{{"summary", std::move(summary)},
                {"groups", std::move(groups)},
                {"stacks", std::move(stacks)},
                {"runs", std::move(rows)}};
}

} // namespace paralens::cli
