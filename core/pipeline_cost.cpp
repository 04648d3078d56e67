// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/pipeline_cost.h"

#include <algorithm>

namespace paralens {

PipelineCost pipelineCost(Schedule schedule, int microbatches, int virtual_stages,
                          std::span<const StageTimes> stages, double p2p_seconds,
                          std::span<double> inflight)
{
    PipelineCost out;
    const int p = int(stages.size());
    if (p == 0)
        return out;
    const double m = std::max(1, microbatches);
    int v = std::max(1, virtual_stages);
    if (schedule == Schedule::Interleaved1F1B && v == 1)
        schedule = Schedule::OneF1B;

    int slow = 0;
    double sum = 0, sumZbH1 = 0, sumZbV = 0, sumDual = 0;
    for (int r = 0; r < p; ++r) {
        const StageTimes& s = stages[std::size_t(r)];
        if (s.total() > stages[std::size_t(slow)].total())
            slow = r;
        sum += s.total();
        sumZbH1 += s.forward_seconds + s.backward_seconds - s.weight_seconds;
        sumZbV += s.forward_seconds + s.backward_seconds - 2 * s.weight_seconds;
        sumDual += (s.forward_seconds + 2 * s.backward_seconds - 3 * s.weight_seconds) / 2;
    }
    const StageTimes& ss = stages[std::size_t(slow)];
    const double tmax = ss.total();
    double fill = 0;
    double hops = p - 1;
    switch (schedule) {
    case Schedule::GPipe:
    case Schedule::OneF1B:
        fill = sum - tmax;
        break;
    case Schedule::Interleaved1F1B:
        fill = (sum - tmax) / v;
        hops = p * v - 1;
        break;
    case Schedule::ZBH1:
        fill = sumZbH1 - (ss.forward_seconds + ss.backward_seconds - ss.weight_seconds);
        break;
    case Schedule::ZBV:
        fill = sumZbV - (ss.forward_seconds + ss.backward_seconds - 2 * ss.weight_seconds);
        hops = 2 * p - 1;
        break;
    case Schedule::DualPipeV:
        fill = sumDual - (ss.forward_seconds + 2 * ss.backward_seconds - 3 * ss.weight_seconds) / 2;
        hops = 2 * p - 1;
        break;
    }
    fill = std::max(0.0, fill);
    out.p2p_exposed_seconds = p > 1 ? 2 * hops * p2p_seconds : 0.0;
    out.step_seconds = m * tmax + fill + out.p2p_exposed_seconds;
    out.bubble_seconds = out.step_seconds - m * tmax;

    double idle = 0, busy = 0, fracSum = 0;
    for (int r = 0; r < p; ++r) {
        const double b = m * stages[std::size_t(r)].total();
        const double i = std::max(0.0, out.step_seconds - b);
        busy += b;
        idle += i;
        fracSum += out.step_seconds > 0 ? i / out.step_seconds : 0;
    }
    out.bubble_fraction = fracSum / p;
    out.bubble_overhead = busy > 0 ? idle / busy : 0;

    const int n = std::min(int(inflight.size()), p);
    for (int r = 0; r < n; ++r) {
        double f = 1;
        switch (schedule) {
        case Schedule::GPipe:
            f = m;
            break;
        case Schedule::OneF1B:
            f = std::min<double>(p - r, m);
            break;
        case Schedule::Interleaved1F1B:
            f = std::min<double>(2.0 * (p - r - 1) + (v - 1) * p + 1, m * v) / v;
            break;
        case Schedule::ZBH1:
            f = std::min<double>(p - r, m) + std::min<double>(r, m - 1) * kZbWeightStashRatio;
            break;
        case Schedule::ZBV:
            f = std::min<double>(p, m);
            break;
        case Schedule::DualPipeV:
            f = std::min<double>(p + 0.5, m);
            break;
        }
        inflight[std::size_t(r)] = std::max(1.0, f);
    }
    return out;
}

} // namespace paralens
