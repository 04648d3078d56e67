// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/scenario.h"
#include "widgets/chartview.h"

#include <QPoint>
#include <QSize>

#include <vector>

class QComboBox;
class QLabel;
class QCPColorMap;
class QCPGraph;
class QCPTextElement;
class QMouseEvent;

namespace paralens {

/// The cluster's GPUs grouped by node, coloured by the process group the user picks. Beyond
/// kMaxCells GPUs it draws one cell per node (coloured by the node's first GPU), so a
/// million-GPU plan stays a few hundred thousand cells.
class TopologyView : public ChartView
{
    Q_OBJECT
public:
    enum ColorBy
    {
        ByTpGroup,
        ByPpStage,
        ByDpReplica,
        ByEpShard,
        ByCpChunk,
        ByNode
    };
    static constexpr int kMaxCells = 65536;

    explicit TopologyView(QWidget* parent = nullptr);

    QString chartId() const override { return QStringLiteral("topology"); }
    QString chartTitle() const override { return tr("Rank topology"); }

    void setScenario(const Scenario& s);
    void setColorBy(ColorBy by);
    ColorBy colorBy() const { return m_colorBy; }

    /// True when each cell stands for a whole node rather than one GPU.
    bool isAggregated() const { return m_aggregated; }
    /// The group index drawn for `rank` (read back from the plotted cells; -1 when not drawn).
    int drawnGroup(int rank) const;
    /// Number of distinct groups for the current colouring.
    int groupCount() const { return m_groupCount; }
    /// Hover text for a rank: rank, node, local GPU and its coordinates.
    QString rankText(int rank) const;

protected:
    void clearData() override;
    void applyColors() override;
    void adaptLayoutTo(const QSize& size) override;

private:
    void rebuild();
    int groupOf(int rank) const;
    QPoint cellOf(int unit) const; ///< top-left map cell of a GPU (or node when aggregated)
    int nodeGap() const;           ///< map cells between nodes
    int unitAt(const QPointF& pixel) const;
    void fitAspect();
    void layoutCells();
    int bestNodeColumns(QSize area) const;
    void onMouseMove(QMouseEvent* event);

    QComboBox* m_colorBox = nullptr;
    QCPTextElement* m_caption = nullptr;
    QString m_captionText;     ///< the caption unwrapped
    bool m_shortNames = false; ///< legend entries are the bare numbers (a narrow plot)
    int m_nodeRows = 0;        ///< rows of nodes in the picture
    int m_rowLabelStep = 0;    ///< every how many node rows a label is drawn (0: none yet)
    void labelNodeRows(int step);
    void nameLegendEntries();
    QCPColorMap* m_map = nullptr;
    std::vector<QCPGraph*> m_legendEntries;
    std::vector<int> m_groups; ///< colour level per cell unit (GPU or node)
    Scenario m_scenario;
    bool m_hasScenario = false;
    ColorBy m_colorBy = ByTpGroup;
    bool m_aggregated = false;
    int m_groupCount = 1;
    int m_units = 0;    ///< cells drawn: GPUs, or nodes when aggregated
    int m_blockW = 8;   ///< cells per node row
    int m_blockH = 1;   ///< rows per node
    int m_nodeCols = 1; ///< nodes per row of the picture
    int m_unitsPerNode = 8;
    int m_pitch = 1; ///< map cells per GPU (the last row/column is the gap between GPUs)
};

} // namespace paralens
