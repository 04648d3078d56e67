// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/accuracy.h"
#include "core/accuracy_plot.h"
#include "widgets/chartview.h"

#include <vector>

class QComboBox;
class QCPGraph;
class QLabel;
class QMouseEvent;

namespace paralens {

/// Predicted against measured step time of measured runs, log-log: one point per run measured
/// by a speed (step time, tokens/s, TFLOP/s or MFU, shown as the step time it implies), the
/// y = x line and the ±10 % band, points coloured by group or by a plan dimension picked in a
/// combo. Above the chart: the report's summary (MAPE, median, worst) and its groups (Spearman,
/// the rank of the model's best plan). Hovering a point names the run with its predicted
/// breakdown; double-clicking it emits runChosen(). Every number comes from core
/// (validateRuns(), accuracyPlot()); the view only draws and formats.
class AccuracyView : public ChartView
{
    Q_OBJECT
public:
    explicit AccuracyView(QWidget* parent = nullptr);

    QString chartId() const override { return QStringLiteral("accuracy"); }
    QString chartTitle() const override { return tr("Predicted vs measured step time"); }

    /// Shows `report`, made by validateRuns() from `runs`.
    void setReport(const AccuracyReport& report, std::vector<MeasuredRun> runs);
    void clear();
    const AccuracyReport& report() const { return m_report; }

    void setColourBy(AccuracyColour c);
    AccuracyColour colourBy() const;

    /// The plotted points (core's accuracyPlot() of the report).
    const AccuracyPlot& points() const { return m_points; }
    int pointCount() const { return int(m_points.points.size()); }
    /// Widget pixel position of point i (for tests and hit-testing).
    QPointF pointPixel(int i) const;
    /// The hover text of point i: the run, measured and predicted, the breakdown, the plan.
    QString pointToolTip(int i) const;
    /// The point within a few pixels of `pos` (plot widget coordinates), or -1.
    int pointAt(const QPointF& pos) const;
    /// Emits runChosen() for point i, as a double-click on it does.
    void choosePoint(int i);

    QString summaryText() const;
    QString groupsText() const;
    QCPGraph* identityGraph() const { return m_identity; }
    QCPGraph* bandUpperGraph() const { return m_bandHigh; }
    QCPGraph* bandLowerGraph() const { return m_bandLow; }

signals:
    /// A point was double-clicked: that run's scenario and name.
    void runChosen(const paralens::Scenario& scenario, const QString& name);

protected:
    void adaptLayoutTo(const QSize& size) override;
    void clearData() override;
    void applyColors() override;
    void resizeEvent(QResizeEvent* event) override;

    /// The axis titles, whole or brief (a plot too short for the whole vertical one).
    static QString measuredLabel(bool brief);
    static QString predictedLabel(bool brief);

private:
    void setUpTitleAndLegendBelow();
    void rebuild();
    void drawReference();
    void updateTexts();
    void hover(QMouseEvent* event);
    void doubleClicked(QMouseEvent* event);

    AccuracyReport m_report;
    std::vector<MeasuredRun> m_runs;
    AccuracyPlot m_points;
    QComboBox* m_colour = nullptr;
    QLabel* m_summary = nullptr;
    QLabel* m_groups = nullptr;
    QCPGraph* m_bandHigh = nullptr;
    QCPGraph* m_bandLow = nullptr;
    QCPGraph* m_identity = nullptr;
    std::vector<QCPGraph*> m_series;
};

} // namespace paralens
