// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/estimate.h"
#include "core/scenario.h"
#include "widgets/chartview.h"

#include <array>

class QCPBars;
class QCPItemRect;
class QCPGraph;
class QCPItemStraightLine;
class QCPItemText;
class QMouseEvent;

namespace paralens {

/// Memory per GPU of each pipeline stage as stacked bars (GiB), with the HBM capacity line.
class MemoryView : public ChartView
{
    Q_OBJECT
public:
    enum Part
    {
        Parameters,
        Gradients,
        OptimizerStates,
        Activations,
        Buffers,
        Overhead,
        PartCount
    };
    explicit MemoryView(QWidget* parent = nullptr);

    QString chartId() const override { return QStringLiteral("memory"); }
    QString chartTitle() const override { return tr("Memory per GPU"); }

    /// Shows the estimate's stages. `scenario` supplies the formula text of the tooltips.
    void setEstimate(const Estimate& estimate, const Scenario& scenario);

    /// What the chart shows, read back from the plotted data (GiB): for tests and exports.
    int stageCount() const;
    double segmentGiB(Part part, int stage) const;
    double capacityGiB() const { return m_capacityGiB; }
    /// Stages drawn as over capacity.
    int overCapacityCount() const;
    /// Tooltip text for a segment (exact bytes and the formula behind it).
    QString tooltipText(Part part, int stage) const;

    static QString partName(Part part);

    /// Highlights one stage's column (linked from the Gantt); < 0 removes the highlight.
    void setHighlightedStage(int stage);
    int highlightedStage() const { return m_highlighted; }
    /// Draws a baseline's per-stage totals as ghosted bars behind the current ones (compare);
    /// nullptr removes them.
    void setBaseline(const Estimate* baseline);
    /// Baseline total of a stage as drawn (GiB), 0 without a baseline.
    double baselineGiB(int stage) const;
    /// The "HBM capacity" label: its text, and where the last layout put it (pixels).
    QCPItemText* capacityLabel() const { return m_capacityLabel; }
    QRectF capacityLabelRect() const;
    /// Where the last layout drew a stage's stacked bar (pixels); empty without data.
    QRectF stageBarRect(int stage) const;

protected:
    void changeEvent(QEvent* event) override;
    void adaptLayoutTo(const QSize& size) override;
    void clearData() override;
    void applyColors() override;
    void exportingChanged(bool on) override;

private:
    bool m_narrow = false; ///< short legend names and capacity label (a narrow plot)
    void setCapacityText();
    void updateRanges();
    void onMouseMove(QMouseEvent* event);

    std::array<QCPBars*, PartCount> m_bars{};
    QCPGraph* m_over = nullptr;
    QCPItemStraightLine* m_capacityLine = nullptr;
    QCPItemText* m_capacityLabel = nullptr;
    QCPBars* m_ghost = nullptr;
    QCPItemRect* m_highlight = nullptr;
    int m_highlighted = -1;
    Estimate m_estimate;
    Scenario m_scenario;
    double m_capacityGiB = 0;
};

} // namespace paralens
