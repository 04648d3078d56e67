// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/tour_caption.h"

#include "core/error.h"
#include "core/units.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <functional>

namespace paralens::tour {
namespace {

enum class Unit
{
    Count,   ///< an integer, printed as is
    GiB,     ///< "62.4 GiB"
    Seconds, ///< "2.41 s" (three significant digits)
    Percent, ///< "41.3 %"
    Rate,    ///< tokens/s, "1,234,567"
    Tflops,  ///< "412 TFLOP/s"
    Text,    ///< not a number
};

struct Figure
{
    const char* name;
    Unit unit;
    std::function<double(const Scenario&, const Estimate&)> value;     ///< numeric figures
    std::function<std::string(const Scenario&, const Estimate&)> text; ///< Text figures
};

const StageMemory* peakStage(const Estimate& e)
{
    for (const auto& st : e.stages)
        if (st.stage == e.peak_stage)
            return &st;
    return e.stages.empty() ? nullptr : &e.stages.front();
}

double peakTerm(const Estimate& e, double StageMemory::*term)
{
    const StageMemory* st = peakStage(e);
    return st ? st->*term / units::kGiB : std::nan("");
}

// The one table: caption placeholders and expect checks read the same figures.
const std::vector<Figure>& figures()
{
    using S = const Scenario&;
    using E = const Estimate&;
    static const std::vector<Figure> table = {
        {"peak_gib", Unit::GiB, [](S, E e) { return e.peak_bytes / units::kGiB; }, {}},
        {"capacity_gib", Unit::GiB, [](S, E e) { return e.capacity_bytes / units::kGiB; }, {}},
        {"headroom_gib",
         Unit::GiB,
         [](S, E e) { return (e.capacity_bytes - e.peak_bytes) / units::kGiB; },
         {}},
        {"params_gib", Unit::GiB, [](S, E e) { return peakTerm(e, &StageMemory::parameters); }, {}},
        {"grads_gib", Unit::GiB, [](S, E e) { return peakTerm(e, &StageMemory::gradients); }, {}},
        {"optimizer_gib",
         Unit::GiB,
         [](S, E e) { return peakTerm(e, &StageMemory::optimizer_states); },
         {}},
        {"activations_gib",
         Unit::GiB,
         [](S, E e) { return peakTerm(e, &StageMemory::activations); },
         {}},
        {"step_s", Unit::Seconds, [](S, E e) { return e.time.step_seconds; }, {}},
        {"compute_s", Unit::Seconds, [](S, E e) { return e.time.compute_seconds; }, {}},
        {"bubble_s", Unit::Seconds, [](S, E e) { return e.time.bubble_seconds; }, {}},
        {"tp_comm_s", Unit::Seconds, [](S, E e) { return e.time.exposed.tp; }, {}},
        {"cp_comm_s", Unit::Seconds, [](S, E e) { return e.time.exposed.cp; }, {}},
        {"ep_comm_s", Unit::Seconds, [](S, E e) { return e.time.exposed.ep; }, {}},
        {"pp_comm_s", Unit::Seconds, [](S, E e) { return e.time.exposed.pp; }, {}},
        {"dp_comm_s", Unit::Seconds, [](S, E e) { return e.time.exposed.dp; }, {}},
        {"comm_s", Unit::Seconds, [](S, E e) { return e.time.exposed.total(); }, {}},
        {"hidden_comm_s", Unit::Seconds, [](S, E e) { return e.time.overlapped.total(); }, {}},
        {"bubble", Unit::Percent, [](S, E e) { return 100 * e.time.bubble_fraction; }, {}},
        {"bubble_overhead", Unit::Percent, [](S, E e) { return 100 * e.time.bubble_overhead; }, {}},
        {"mfu", Unit::Percent, [](S, E e) { return 100 * e.throughput.mfu; }, {}},
        {"hfu", Unit::Percent, [](S, E e) { return 100 * e.throughput.hfu; }, {}},
        {"tflops", Unit::Tflops, [](S, E e) { return e.throughput.tflops_per_gpu; }, {}},
        {"tokens_per_s", Unit::Rate, [](S, E e) { return e.throughput.tokens_per_second; }, {}},
        {"gpus", Unit::Count, [](S s, E) { return double(s.gpus); }, {}},
        {"tp", Unit::Count, [](S s, E) { return double(s.parallel.tp); }, {}},
        {"pp", Unit::Count, [](S s, E) { return double(s.parallel.pp); }, {}},
        {"dp", Unit::Count, [](S s, E) { return double(s.parallel.dp); }, {}},
        {"cp", Unit::Count, [](S s, E) { return double(s.parallel.cp); }, {}},
        {"ep", Unit::Count, [](S s, E) { return double(s.parallel.ep); }, {}},
        {"vp", Unit::Count, [](S s, E) { return double(s.parallel.virtual_stages); }, {}},
        {"zero", Unit::Count, [](S s, E) { return double(s.parallel.zero); }, {}},
        {"microbatches", Unit::Count, [](S, E e) { return double(e.microbatches); }, {}},
        {"micro_batch", Unit::Count, [](S s, E) { return double(s.training.micro_batch); }, {}},
        {"global_batch", Unit::Count, [](S s, E) { return double(s.training.global_batch); }, {}},
        {"seq_len", Unit::Count, [](S s, E) { return double(s.training.seq_len); }, {}},
        {"fits",
         Unit::Text,
         {},
         [](S, E e) { return std::string(e.fits ? "fits" : "does not fit"); }},
        {"model", Unit::Text, {}, [](S s, E) { return s.model.name; }},
        {"hardware", Unit::Text, {}, [](S s, E) { return s.cluster.name; }},
        {"schedule",
         Unit::Text,
         {},
         [](S s, E) { return std::string(toString(s.parallel.schedule)); }},
    };
    return table;
}

const Figure* find(std::string_view name)
{
    for (const auto& f : figures())
        if (name == f.name)
            return &f;
    return nullptr;
}

// 1234567 -> "1,234,567".
std::string grouped(double v)
{
    std::string digits = std::to_string(static_cast<long long>(std::llround(std::fabs(v))));
    for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3)
        digits.insert(static_cast<std::size_t>(i), ",");
    return (v < 0 ? "-" : "") + digits;
}

// A no-break space (U+00A0) between a figure and its unit: a wrapped caption never leaves the
// unit alone at the start of a line ("45.1" / "%").
std::string format(double v, Unit unit)
{
    char buf[64];
    switch (unit) {
    case Unit::Count:
        std::snprintf(buf, sizeof buf, "%.0f", v);
        return buf;
    case Unit::GiB:
        std::snprintf(buf, sizeof buf, "%.1f\u00a0GiB", v);
        return buf;
    case Unit::Seconds:
        // Three significant digits; milliseconds below a tenth of a second read better.
        if (std::fabs(v) < 0.1 && v != 0)
            std::snprintf(buf, sizeof buf, "%.3g\u00a0ms", v * 1e3);
        else
            std::snprintf(buf, sizeof buf, "%.3g\u00a0s", v);
        return buf;
    case Unit::Percent:
        std::snprintf(buf, sizeof buf, "%.1f\u00a0%%", v);
        return buf;
    case Unit::Rate:
        return grouped(v);
    case Unit::Tflops:
        std::snprintf(buf, sizeof buf, "%.0f\u00a0TFLOP/s", v);
        return buf;
    case Unit::Text:
        break;
    }
    return {};
}

/// Which step a placeholder reads: this one, the one before, or step N (1-based).
struct StepRef
{
    enum Kind
    {
        This,
        Previous,
        Numbered
    } kind = This;
    std::size_t number = 0; ///< for Numbered, 1-based
    std::string spelled;    ///< "prev." or "stepN.", for messages
};

/// Splits "prev.mfu" / "step3.mfu" / "mfu" into the step reference and the figure name.
StepRef splitRef(std::string_view& name)
{
    StepRef ref;
    const std::size_t dot = name.find('.');
    if (dot == std::string_view::npos)
        return ref;
    const std::string_view head = name.substr(0, dot);
    ref.spelled = std::string(name.substr(0, dot + 1));
    if (head == "prev") {
        ref.kind = StepRef::Previous;
    } else if (head.size() > 4 && head.substr(0, 4) == "step" && head.size() <= 8 &&
               head.find_first_not_of("0123456789", 4) == std::string_view::npos) {
        ref.kind = StepRef::Numbered;
        ref.number = std::stoul(std::string(head.substr(4)));
    } else {
        throw InputError("", "{" + std::string(name) + "}: '" + std::string(head) +
                                 ".' is not prev. or stepN.");
    }
    name.remove_prefix(dot + 1);
    return ref;
}

/// Calls on(name, ref) for each placeholder and literal(text) for the text between;
/// throws for an unclosed `{`, a stray `}` or an empty name.
template <typename OnName, typename OnText> void scan(std::string_view c, OnName on, OnText literal)
{
    std::size_t i = 0;
    while (i < c.size()) {
        const char ch = c[i];
        if ((ch == '{' || ch == '}') && i + 1 < c.size() && c[i + 1] == ch) {
            literal(std::string_view(&c[i], 1));
            i += 2;
            continue;
        }
        if (ch == '}')
            throw InputError("", "a '}' without its '{' at character " + std::to_string(i + 1) +
                                     " (write }} for a literal brace)");
        if (ch != '{') {
            const std::size_t next = c.find_first_of("{}", i);
            const std::size_t end = next == std::string_view::npos ? c.size() : next;
            literal(c.substr(i, end - i));
            i = end;
            continue;
        }
        const std::size_t close = c.find('}', i + 1);
        if (close == std::string_view::npos)
            throw InputError("", "a '{' at character " + std::to_string(i + 1) +
                                     " is never closed (write {{ for a literal brace)");
        std::string_view name = c.substr(i + 1, close - i - 1);
        if (name.empty() || name.find('{') != std::string_view::npos)
            throw InputError("", "an empty or malformed placeholder at character " +
                                     std::to_string(i + 1));
        const StepRef ref = splitRef(name);
        on(name, ref);
        i = close + 1;
    }
}

std::string knownList()
{
    std::string s;
    for (const auto& f : figures())
        s += (s.empty() ? "" : ", ") + std::string(f.name);
    return s;
}

} // namespace

std::vector<std::string> figureNames()
{
    std::vector<std::string> names;
    for (const auto& f : figures())
        names.emplace_back(f.name);
    return names;
}

bool isFigure(std::string_view name)
{
    return find(name) != nullptr;
}

bool isNumericFigure(std::string_view name)
{
    const Figure* f = find(name);
    return f && f->unit != Unit::Text;
}

std::optional<double> figureValue(std::string_view name, const StepFigures& step)
{
    const Figure* f = find(name);
    if (!f || f->unit == Unit::Text || !step.scenario || !step.estimate)
        return std::nullopt;
    return f->value(*step.scenario, *step.estimate);
}

std::string figureText(std::string_view name, const StepFigures& step)
{
    const Figure* f = find(name);
    if (!f)
        throw InputError("",
                         "{" + std::string(name) + "}: not a figure (known: " + knownList() + ")");
    if (!step.scenario || !step.estimate)
        throw InputError("", "{" + std::string(name) + "}: the step has no estimate");
    if (f->unit == Unit::Text)
        return f->text(*step.scenario, *step.estimate);
    const double v = f->value(*step.scenario, *step.estimate);
    if (!std::isfinite(v))
        throw InputError("", "{" + std::string(name) + "}: the model gives no finite value");
    return format(v, f->unit);
}

void checkCaption(std::string_view caption, std::size_t step_index)
{
    scan(
        caption,
        [&](std::string_view name, const StepRef& ref) {
            if (!isFigure(name))
                throw InputError("", "{" + ref.spelled + std::string(name) +
                                         "}: unknown placeholder (known: " + knownList() + ")");
            if (ref.kind == StepRef::Previous && step_index == 0)
                throw InputError("", "{prev." + std::string(name) +
                                         "}: the first step has no previous step");
            if (ref.kind == StepRef::Numbered && (ref.number < 1 || ref.number > step_index))
                throw InputError("", "{" + ref.spelled + std::string(name) + "}: step " +
                                         std::to_string(ref.number) + " is not an earlier step");
        },
        [](std::string_view) {});
}

std::string fillCaption(std::string_view caption, const StepFigures& step,
                        const std::vector<StepFigures>& earlier)
{
    checkCaption(caption, earlier.size());
    std::string out;
    scan(
        caption,
        [&](std::string_view name, const StepRef& ref) {
            const StepFigures& from = ref.kind == StepRef::This       ? step
                                      : ref.kind == StepRef::Previous ? earlier.back()
                                                                      : earlier[ref.number - 1];
            out += figureText(name, from);
        },
        [&](std::string_view text) { out += text; });
    return out;
}

} // namespace paralens::tour
