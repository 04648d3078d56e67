// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/trace.h"

namespace paralens {

nlohmann::json chromeTrace(const PipelineSchedule& schedule, const SimulationResult& result,
                           const std::string& process_name)
{
    using nlohmann::json;
    constexpr int kPid = 1;
    constexpr double kMicro = 1e6;
    json events = json::array();
    events.push_back({{"name", "process_name"},
                      {"ph", "M"},
                      {"pid", kPid},
                      {"tid", 0},
                      {"args", {{"name", process_name}}}});
    for (int d = 0; d < schedule.stages; ++d) {
        events.push_back({{"name", "thread_name"},
                          {"ph", "M"},
                          {"pid", kPid},
                          {"tid", d},
                          {"args", {{"name", "stage " + std::to_string(d)}}}});
        events.push_back({{"name", "thread_sort_index"},
                          {"ph", "M"},
                          {"pid", kPid},
                          {"tid", d},
                          {"args", {{"sort_index", d}}}});
    }
    static constexpr const char* kKind[] = {"F", "B", "W"};
    static constexpr const char* kCat[] = {"forward", "backward", "weight_grad"};
    for (std::size_t i = 0; i < schedule.ops.size() && i < result.timing.size(); ++i) {
        const PipelineOp& op = schedule.ops[i];
        const OpTiming& t = result.timing[i];
        const int k = static_cast<int>(op.kind);
        events.push_back({{"name", std::string(kKind[k]) + " mb" + std::to_string(op.microbatch) +
                                       " c" + std::to_string(op.chunk)},
                          {"cat", kCat[k]},
                          {"ph", "X"},
                          {"pid", kPid},
                          {"tid", op.device},
                          {"ts", t.start * kMicro},
                          {"dur", std::max(0.0, t.end - t.start) * kMicro},
                          {"args",
                           {{"stage", op.device},
                            {"microbatch", op.microbatch},
                            {"chunk", op.chunk},
                            {"model_stage", schedule.modelStage(op.device, op.chunk)}}}});
    }
    for (const StageStats& st : result.stages) {
        if (st.dp_exposed_seconds <= 0)
            continue;
        events.push_back({{"name", "DP sync"},
                          {"cat", "dp"},
                          {"ph", "X"},
                          {"pid", kPid},
                          {"tid", st.stage},
                          {"ts", (st.finish_seconds - st.dp_exposed_seconds) * kMicro},
                          {"dur", st.dp_exposed_seconds * kMicro},
                          {"args", {{"stage", st.stage}}}});
    }
    return json{{"traceEvents", std::move(events)},
                {"displayTimeUnit", "ms"},
                {"otherData",
                 {{"schedule", std::string(toString(schedule.kind))},
                  {"stages", schedule.stages},
                  {"microbatches", schedule.microbatches},
                  {"virtual_stages", schedule.chunks}}}};
}

nlohmann::json timelineJson(const PipelineSchedule& schedule, const SimulationResult& result)
{
    using nlohmann::json;
    json stats = json::array();
    for (const StageStats& st : result.stages)
        stats.push_back({{"stage", st.stage},
                         {"busy_seconds", st.busy_seconds},
                         {"idle_seconds", st.idle_seconds},
                         {"dp_exposed_seconds", st.dp_exposed_seconds},
                         {"peak_inflight_microbatches", st.peak_inflight_microbatches}});
    json ops = json::array();
    static constexpr const char* kKind[] = {"F", "B", "W"};
    for (std::size_t i = 0; i < schedule.ops.size() && i < result.timing.size(); ++i) {
        const PipelineOp& op = schedule.ops[i];
        ops.push_back({{"stage", op.device},
                       {"kind", kKind[static_cast<int>(op.kind)]},
                       {"microbatch", op.microbatch},
                       {"chunk", op.chunk},
                       {"start", result.timing[i].start},
                       {"end", result.timing[i].end}});
    }
    return json{{"schedule", std::string(toString(schedule.kind))},
                {"stages", schedule.stages},
                {"microbatches", schedule.microbatches},
                {"virtual_stages", schedule.chunks},
                {"step_seconds", result.step_seconds},
                {"pipeline_seconds", result.pipeline_seconds},
                {"bubble_fraction", result.bubble_fraction},
                {"bubble_overhead", result.bubble_overhead},
                {"stage_stats", std::move(stats)},
                {"ops", std::move(ops)}};
}

} // namespace paralens
