// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/pipeline_cost.h"

#include <QColor>
#include <QString>
#include <qcustomplot.h>

#include <memory>
#include <optional>
#include <vector>

namespace paralens {

/// Draws one simulated pipeline timeline on a key axis in milliseconds and a value axis whose
/// row r (one per device, or per device and chunk when expanded) sits at value r. Ops wider
/// than a few pixels are rectangles (labelled like "F3" where the label fits, p2p links drawn
/// when zoomed in); narrower ones are summed into a per-pixel-column busy share, so a paint
/// costs one pass over the ops and at most a few thousand rectangles.
class GanttPlottable : public QCPAbstractPlottable
{
    Q_OBJECT
public:
    GanttPlottable(QCPAxis* keyAxis, QCPAxis* valueAxis);

    /// The timeline to draw (nullptr: nothing). `expandChunks` gives each chunk its own row.
    void setTimeline(std::shared_ptr<const PipelineTimeline> timeline, bool expandChunks);
    const PipelineTimeline* timeline() const { return m_timeline.get(); }

    int rowCount() const { return static_cast<int>(m_rowOps.size()); }
    int rowDevice(int row) const { return m_rowDevice.at(row); }
    int rowChunk(int row) const { return m_rowChunk.at(row); } ///< −1 when rows are devices
    /// Op indices (into schedule.ops / result.timing) drawn on `row`, in time order.
    const std::vector<std::int32_t>& rowOps(int row) const { return m_rowOps.at(row); }
    /// The row an op is drawn on.
    int rowOf(const PipelineOp& op) const;
    /// The op under key `ms` on `row`, if any.
    std::optional<std::int32_t> opAt(int row, double ms) const;
    /// The pipeline span in ms (0 without a timeline).
    double spanMs() const;

    void setSelectedRow(int row) { m_selectedRow = row; }
    void setFontScale(double scale) { m_fontScale = scale; }
    void setGhost(bool ghost) { m_ghost = ghost; }

    /// What the last draw() did, for tests and the level-of-detail check.
    struct DrawStats
    {
        int rectangles = 0;          ///< ops drawn one by one
        int aggregated = 0;          ///< ops folded into the per-column coverage
        int labels = 0;              ///< "F3" labels drawn
        int links = 0;               ///< p2p links drawn
        std::vector<double> busy_ms; ///< per row, busy time drawn (rects + coverage)
    };
    const DrawStats& lastDraw() const { return m_stats; }

    static QColor kindColor(OpKind kind);
    static QColor commColor();
    /// The fill of one op: its kind's colour, darker for later chunks, alternate micro-batches
    /// slightly lighter.
    static QColor opColor(const PipelineOp& op);
    static QString opLabel(const PipelineOp& op); ///< "F3" (micro-batch numbered from 1)

    double selectTest(const QPointF& pos, bool onlySelectable,
                      QVariant* details = nullptr) const override;
    QCPRange getKeyRange(bool& foundRange,
                         QCP::SignDomain inSignDomain = QCP::sdBoth) const override;
    QCPRange getValueRange(bool& foundRange, QCP::SignDomain inSignDomain = QCP::sdBoth,
                           const QCPRange& inKeyRange = QCPRange()) const override;

protected:
    void draw(QCPPainter* painter) override;
    void drawLegendIcon(QCPPainter* painter, const QRectF& rect) const override;

private:
    std::shared_ptr<const PipelineTimeline> m_timeline;
    std::vector<std::vector<std::int32_t>> m_rowOps;
    std::vector<int> m_rowDevice, m_rowChunk;
    /// Op index per (kind, model stage, micro-batch), to find an op's p2p predecessor.
    std::vector<std::int32_t> m_opIndex;
    bool m_expanded = false;
    int m_selectedRow = -1;
    double m_fontScale = 1.0;
    bool m_ghost = false;
    DrawStats m_stats;
    std::vector<float> m_coverage; // scratch: rows × columns × 3 kinds
    QImage m_image;                // scratch: the coverage as pixels
};

} // namespace paralens
