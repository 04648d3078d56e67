// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/estimate.h"
#include "widgets/chartview.h"

#include <array>

class QCPBars;
class QCPItemStraightLine;
class QCPItemText;
class QMouseEvent;

namespace paralens {

/// Where one optimizer step's time goes: compute, pipeline bubble and exposed communication
/// per dimension on the critical path, and (as a second, hatched bar) the communication
/// hidden under compute.
class BreakdownView : public ChartView
{
    Q_OBJECT
public:
    enum Segment
    {
        Compute,
        Bubble,
        ExposedTp,
        ExposedCp,
        ExposedEp,
        ExposedPp,
        ExposedDp,
        OptimizerStep,
        Offload,
        HiddenTp,
        HiddenCp,
        HiddenEp,
        HiddenPp,
        HiddenDp,
        SegmentCount
    };
    explicit BreakdownView(QWidget* parent = nullptr);

    QString chartId() const override { return QStringLiteral("breakdown"); }
    QString chartTitle() const override { return tr("Step time breakdown"); }

    void setEstimate(const Estimate& estimate);

    /// The plotted value of a segment, converted back to seconds (for tests).
    double segmentSeconds(Segment s) const;
    /// Seconds per axis unit (1e-3 when the axis is in ms).
    double axisUnitSeconds() const { return m_unit; }
    static QString segmentName(Segment s);
    /// Compare mode: a ghosted bar above the critical path as long as the baseline's step;
    /// nullptr removes it.
    void setBaseline(const Estimate* baseline);
    /// The baseline step drawn, in seconds (0 without a baseline).
    double baselineStepSeconds() const;

protected:
    void clearData() override;
    void applyColors() override;

private:
    void onMouseMove(QMouseEvent* event);

    std::array<QCPBars*, SegmentCount> m_bars{};
    QCPBars* m_ghost = nullptr;
    QCPItemStraightLine* m_stepLine = nullptr;
    QCPItemText* m_stepLabel = nullptr;
    Estimate m_estimate;
    double m_unit = 1e-3;
};

} // namespace paralens
