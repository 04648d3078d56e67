// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/calibration.h"
#include "core/calibration_chart.h"
#include "core/cluster_spec.h"
#include "widgets/chartview.h"

#include <optional>

class QComboBox;
class QLabel;
class QCPAxisRect;
class QCPGraph;
class QCPItemStraightLine;
class QMouseEvent;

namespace paralens {

/// The Calibration view: bus bandwidth against message size (log-log) for one measured curve
/// of a calibration profile (picked in a combo: collective, group size, span, dtype), with the
/// measured points, the datasheet model before calibration (from a ClusterSpec) and the fitted
/// curve after it, and the fit's residuals in % below. Every number comes from core
/// (calibrationChart()); the view only draws and formats. A chart view like the explorer's:
/// palette recolouring, export, and a message in place of data when there is no curve.
class CalibrationView : public ChartView
{
    Q_OBJECT
public:
    explicit CalibrationView(QWidget* parent = nullptr);
    ~CalibrationView() override;

    QString chartId() const override { return QStringLiteral("calibration"); }
    QString chartTitle() const override;

    /// Shows `profile`'s curves; keeps the selected curve when the new profile has it.
    void setProfile(const CalibrationProfile& profile);
    void clearProfile();
    const CalibrationProfile& profile() const { return m_profile; }

    /// The cluster whose datasheet figures give the "before calibration" curve.
    void setCluster(const ClusterSpec& cluster);
    void clearCluster();

    int curveCount() const;
    int currentCurve() const; ///< index into profile().collectives, -1 when none
    void setCurrentCurve(int index);
    /// The series drawn for the current curve (empty when none).
    const CalibrationChart& chart() const { return m_chart; }

    /// The text of the hover tooltip for measured point `i` of the current curve.
    QString pointToolTip(int i) const;

    /// plot() has two axis rects: the bandwidth one (axisRect(0)) above the residual one.
    QCPAxisRect* residualAxisRect() const { return m_residualRect; }
    QCPGraph* measuredGraph() const { return m_measured; }
    QCPGraph* datasheetGraph() const { return m_datasheet; }
    QCPGraph* fittedGraph() const { return m_fitted; }
    QCPGraph* residualGraph() const { return m_residuals; }

signals:
    void currentCurveChanged(int index);

protected:
    void clearData() override;
    void applyColors() override;
    void adaptLayoutTo(const QSize& size) override;

private:
    void rebuildCombo();
    void rebuild();
    void hover(QMouseEvent* event);
    int nearestPoint(const QPointF& pos) const;

    CalibrationProfile m_profile;
    std::optional<ClusterSpec> m_cluster;
    CalibrationChart m_chart;
    int m_current = -1;

    QComboBox* m_curveCombo = nullptr;
    QLabel* m_fitLabel = nullptr;
    QCPAxisRect* m_residualRect = nullptr;
    QCPGraph* m_measured = nullptr;
    QCPGraph* m_datasheet = nullptr;
    QCPGraph* m_fitted = nullptr;
    QCPGraph* m_residuals = nullptr;
    QCPItemStraightLine* m_zeroLine = nullptr;
};

} // namespace paralens
