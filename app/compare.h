// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "app/evaluator.h"

#include <QObject>

namespace paralens {

class BreakdownView;
class GanttView;
class Headline;
class MemoryView;

/// Compare mode: a pinned baseline evaluation shown alongside the current one until unpinned
/// (ghosted memory totals and step bar, a second Gantt above the current one, deltas under the
/// headline figures, all from core::delta).
class Comparison : public QObject
{
    Q_OBJECT
public:
    Comparison(Headline* headline, MemoryView* memory, BreakdownView* breakdown, GanttView* gantt,
               QObject* parent = nullptr);

    /// Pins `e` as the baseline (ignored when it has no estimate).
    void pin(const Evaluation& e);
    void unpin();
    bool isPinned() const { return m_pinned; }
    const Evaluation& baseline() const { return m_baseline; }

    /// Re-applies the baseline overlays after the views showed `current`.
    void update(const Evaluation& current);

    /// "−12.3 ms (−4.1 %)" style texts, from the core's delta.
    static QString stepDeltaText(double delta_seconds, double ratio);
    static QString mfuDeltaText(double delta_fraction);
    static QString bytesDeltaText(double delta_bytes);
    /// The same changes without " vs baseline", for a card too narrow for the whole text.
    static QString stepDelta(double delta_seconds, double ratio);
    static QString mfuDelta(double delta_fraction);
    static QString bytesDelta(double delta_bytes);

signals:
    void pinnedChanged(bool pinned);

private:
    Headline* m_headline;
    MemoryView* m_memory;
    BreakdownView* m_breakdown;
    GanttView* m_gantt;
    Evaluation m_baseline;
    bool m_pinned = false;
};

} // namespace paralens
