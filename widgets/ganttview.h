// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/pipeline_cost.h"
#include "widgets/chartview.h"

#include <memory>
#include <vector>

class QCheckBox;
class QFontMetrics;
class QCPAxisRect;
class QCPBars;
class QCPGraph;
class QCPItemStraightLine;
class QCPItemText;
class QCPTextElement;
class QCPLegend;

namespace paralens {

class GanttPlottable;

/// The pipeline schedule as a Gantt chart: one row per stage (or per stage and chunk), keys in
/// ms (labelled in s from a 1 s step on, like the other views), ops coloured by kind, bubbles
/// empty. Optional: a lane under it with the selected stage's activations in flight over time, a
/// baseline timeline above it (compare), and a time cursor (workshop animation). Draws the core's
/// PipelineTimeline and derives nothing. Mouse: wheel zooms, drag pans, click selects a stage,
/// hover names the op. Keys: + / − zoom, ← / → pan, Home shows the whole step.
class GanttView : public ChartView
{
    Q_OBJECT
public:
    static constexpr double kRefitRatio = 3.0;

    explicit GanttView(QWidget* parent = nullptr);
    ~GanttView() override;

    QString chartId() const override { return QStringLiteral("gantt"); }
    QString chartTitle() const override { return tr("Pipeline schedule"); }

    /// Shows a timeline (nullptr or not simulated: an explanatory message). Keeps the time
    /// range unless auto-fit is on (the default until the user zooms or pans).
    void setTimeline(std::shared_ptr<const PipelineTimeline> timeline);
    /// The baseline drawn above the current timeline, ghosted; nullptr removes it.
    void setBaseline(std::shared_ptr<const PipelineTimeline> timeline,
                     const QString& label = QString());
    bool hasBaseline() const;

    void setExpandChunks(bool expand);
    bool expandChunks() const { return m_expand; }
    void setMemoryLaneVisible(bool visible);
    bool memoryLaneVisible() const { return m_laneVisible; }

    /// The stage whose row is highlighted and whose memory the lane shows.
    void setSelectedStage(int stage);
    int selectedStage() const { return m_selectedStage; }

    /// Time cursor in seconds from the step start; < 0 hides it.
    void setCursorSeconds(double seconds);
    double cursorSeconds() const { return m_cursorSeconds; }
    /// Chunk-micro-batches whose activations `stage` holds at `seconds` (the simulator's
    /// memory timeline); 0 without one.
    int inflightAt(int stage, double seconds) const;
    /// The start of the first op after `seconds` on any stage, or the pipeline end.
    double nextEventAfter(double seconds) const;

    /// Auto-fit: each new timeline shows its whole step. Off: the time range stays, unless the
    /// step changed by more than kRefitRatio either way (another model, New, Open, undo),
    /// which would leave the user's range on a sliver or an empty stretch.
    void setAutoFit(bool on) { m_autoFit = on; }
    bool autoFit() const { return m_autoFit; }
    void zoomBy(double factor);  ///< > 1 zooms in around the range centre
    void panBy(double fraction); ///< of the visible range; > 0 moves later
    void resetZoom();            ///< the whole step; turns auto-fit back on
    double visibleStartMs() const;
    double visibleEndMs() const;
    /// Seconds per unit of the time axis labels: 1e-3 (ms) or 1 (s).
    double timeAxisUnitSeconds() const { return m_unitSeconds; }

    /// Larger fonts and thicker cursor for a projector.
    void setPresentation(bool on);

    GanttPlottable* gantt() const { return m_gantt; }
    GanttPlottable* baselineGantt() const { return m_baseGantt; }
    QCPGraph* memoryLane() const { return m_laneGraph; }
    /// The rows that get a label, of `rows` rows `rowPx` high, for labels `linePx` high:
    /// row 0, then every 2^k-th row, as few apart as keeps the labels' line boxes from
    /// overlapping (and at most ~16 labels), and the last row where two labels fit at all.
    static std::vector<int> labelledRows(int rows, double rowPx, int linePx);
    /// The in-flight lane's axis label for `stage` in a lane `heightPx` high: "stage N / in
    /// flight" where its widest line fits the height (it stands rotated), else shorter forms.
    static QString laneAxisLabel(int stage, int heightPx, const QFontMetrics& fm);
    /// The hover text for time `ms` on `row` of the current timeline ("" over a bubble).
    QString tooltipAt(int row, double ms) const;

signals:
    void stageSelected(int stage);

protected:
    void clearData() override;
    void applyColors() override;
    void adaptLayoutTo(const QSize& size) override;
    void exportingChanged(bool on) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void rebuildLayout();
    void updateRowTicks();
    void updateLane();
    void updateCursor();
    void updateTitle();
    void setRows(QCPAxisRect* rect, GanttPlottable* g);
    std::vector<int> labelledRowsOf(QCPAxisRect* rect, int rows) const;
    /// The rows' heights changed which rows fit a label.
    bool rowTicksStale() const;
    /// The lane's axis label for its height; true where it changed.
    bool fitLaneLabel();
    std::vector<int> m_mainLabelled, m_baseLabelled; ///< the rows labelled, as drawn
    void fitTimeRange();
    void updateTimeUnit();
    int rowAtPixel(const QPoint& pos, QCPAxisRect** rect = nullptr) const;

    std::shared_ptr<const PipelineTimeline> m_timeline, m_baseline;
    QString m_baseLabel;
    QCPTextElement* m_title = nullptr;
    QCPAxisRect* m_main = nullptr;
    QCPAxisRect* m_baseRect = nullptr;
    QCPAxisRect* m_laneRect = nullptr;
    QCPLegend* m_legend = nullptr;
    GanttPlottable* m_gantt = nullptr;
    GanttPlottable* m_baseGantt = nullptr;
    QCPGraph* m_laneGraph = nullptr;
    QCPItemStraightLine* m_cursor = nullptr;
    QCPItemStraightLine* m_laneCursor = nullptr;
    QCPItemText* m_cursorLabel = nullptr;
    QCheckBox* m_expandBox = nullptr;
    QCheckBox* m_laneBox = nullptr;
    bool m_expand = false;
    bool m_laneVisible = true;
    bool m_autoFit = true;
    bool m_presentation = false;
    int m_selectedStage = 0;
    double m_cursorSeconds = -1;
    double m_shownSpanMs = 0;    ///< the span the time range was last fitted or kept for
    double m_unitSeconds = 1e-3; ///< what the time axes label (the keys stay in ms)
    QPoint m_pressPos;
    std::vector<QCPBars*> m_swatches; ///< legend entries: F, B, W, communication, chunk shade
};

} // namespace paralens
