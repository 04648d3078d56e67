// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/compare.h"
#include "core/compare.h"
#include "widgets/breakdownview.h"
#include "widgets/ganttview.h"
#include "widgets/headline.h"
#include "widgets/memoryview.h"
#include "widgets/units.h"

#include <cmath>

namespace paralens {
namespace {

QString signedText(double v, const QString& magnitude)
{
    return (v < 0 ? QStringLiteral("−") : QStringLiteral("+")) + magnitude;
}

} // namespace

Comparison::Comparison(Headline* headline, MemoryView* memory, BreakdownView* breakdown,
                       GanttView* gantt, QObject* parent)
    : QObject(parent), m_headline(headline), m_memory(memory), m_breakdown(breakdown),
      m_gantt(gantt)
{
}

QString Comparison::stepDelta(double delta_seconds, double ratio)
{
    QString text = signedText(delta_seconds, units::seconds(std::abs(delta_seconds)));
    if (ratio > 0)
        text +=
            QStringLiteral(" (%1)").arg(signedText(ratio - 1, units::percent(std::abs(ratio - 1))));
    return text;
}

QString Comparison::stepDeltaText(double delta_seconds, double ratio)
{
    return tr("%1 vs baseline").arg(stepDelta(delta_seconds, ratio));
}

QString Comparison::mfuDelta(double delta_fraction)
{
    return tr("%1 pt").arg(
        signedText(delta_fraction, QString::number(std::abs(delta_fraction) * 100, 'f', 1)));
}

QString Comparison::mfuDeltaText(double delta_fraction)
{
    return tr("%1 vs baseline").arg(mfuDelta(delta_fraction));
}

QString Comparison::bytesDelta(double delta_bytes)
{
    if (std::abs(delta_bytes) < 0.5) // "+0 B" reads as a rounding artefact
        return tr("same");
    return signedText(delta_bytes, units::bytes(std::abs(delta_bytes)));
}

QString Comparison::bytesDeltaText(double delta_bytes)
{
    if (std::abs(delta_bytes) < 0.5)
        return tr("same as baseline");
    return tr("%1 vs baseline").arg(bytesDelta(delta_bytes));
}

void Comparison::pin(const Evaluation& e)
{
    if (!e.ok())
        return;
    m_baseline = e;
    m_pinned = true;
    update(e);
    emit pinnedChanged(true);
}

void Comparison::unpin()
{
    if (!m_pinned)
        return;
    m_pinned = false;
    m_baseline = Evaluation{};
    for (int f = 0; f < Headline::FigureCount; ++f)
        m_headline->setDelta(static_cast<Headline::Figure>(f), QString());
    m_memory->setBaseline(nullptr);
    m_breakdown->setBaseline(nullptr);
    m_gantt->setBaseline(nullptr);
    emit pinnedChanged(false);
}

void Comparison::update(const Evaluation& current)
{
    if (!m_pinned)
        return;
    const Estimate& b = m_baseline.estimate;
    m_memory->setBaseline(&b);
    m_breakdown->setBaseline(&b);
    m_gantt->setBaseline(m_baseline.timeline, tr("baseline"));
    if (!current.ok()) {
        for (int f = 0; f < Headline::FigureCount; ++f)
            m_headline->setDelta(static_cast<Headline::Figure>(f), QString());
        return;
    }
    const EstimateDelta d = delta(current.estimate, b);
    m_headline->setDelta(Headline::StepTime, stepDeltaText(d.step_seconds, d.step_ratio),
                         stepDelta(d.step_seconds, d.step_ratio));
    m_headline->setDelta(Headline::Mfu, mfuDeltaText(d.mfu), mfuDelta(d.mfu));
    m_headline->setDelta(Headline::PeakMemory, bytesDeltaText(d.peak_bytes),
                         bytesDelta(d.peak_bytes));
    const QString tokens =
        signedText(d.tokens_per_second, units::count(std::abs(d.tokens_per_second)));
    m_headline->setDelta(Headline::TokensPerSecond, tr("%1 vs baseline").arg(tokens), tokens);
}

} // namespace paralens
