// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include <QFont>
#include <QFontMetrics>
#include <QWidget>

class QCustomPlot;
class QCPItemText;
class QCPTextElement;
class QCPLegend;
class QCPAbstractLegendItem;
class QVBoxLayout;

namespace paralens {

/// Common frame of every chart (the explorer's views, the search and the calibration charts):
/// a QCustomPlot, a message shown instead of data when the plan is invalid or there is nothing
/// to draw, palette-driven recolouring and an "Export…" context menu.
class ChartView : public QWidget
{
    Q_OBJECT
public:
    explicit ChartView(QWidget* parent = nullptr);

    QCustomPlot* plot() const { return m_plot; }
    /// Short id used on the command line ("memory", "breakdown", "topology").
    virtual QString chartId() const = 0;
    /// Title shown above the chart and in exports.
    virtual QString chartTitle() const = 0;

    /// Clears the data and shows `reason` in its place; the view stays grey until the next
    /// setEstimate(). An empty reason shows the data again.
    void setInvalid(const QString& reason);
    bool isInvalid() const { return !m_invalidReason.isEmpty(); }
    QString invalidReason() const { return m_invalidReason; }

    /// Fits the size-dependent parts of the layout (title wrapping, legend columns, tick
    /// density) to a plot of `size` pixels. Runs before every replot; exports call it with
    /// the export size before they paint and with the on-screen size after.
    void adaptLayout(const QSize& size);
    /// While an export paints: on-screen state such as the selected stage's highlight is
    /// hidden. Exports call it around their painting.
    void setExporting(bool on);
    bool isExporting() const { return m_exporting; }
    /// The entries of a legend (its grid's empty cells skipped).
    static QList<QCPAbstractLegendItem*> legendItems(const QCPLegend* legend);
    /// The title as drawn: the full title, wrapped onto more lines when the plot is narrow.
    QString drawnTitle() const;

signals:
    void exportRequested(paralens::ChartView* view);

protected:
    /// Removes every data point (called when the plan becomes invalid).
    virtual void clearData() = 0;
    /// Re-applies colours after a palette change.
    virtual void applyColors() = 0;
    /// Layout for subclasses that add controls above the plot.
    QVBoxLayout* layoutBox() const { return m_layout; }
    /// Puts the chart title above the axis rect and the legend to its right, top-aligned.
    void setUpTitleAndLegend();
    /// The element that shows the title (setUpTitleAndLegend() makes one); adaptLayout()
    /// wraps its text to the width.
    void setTitleElement(QCPTextElement* title);
    /// Sets the full title text (the element shows it wrapped).
    void setTitleText(const QString& text);
    /// `text` broken at its separators (" — ", " · ", ", ") onto further lines so that no line
    /// is wider than `room` pixels in `fm`; a piece wider than the room on its own is elided.
    /// Line breaks already in the text are kept.
    static QString wrapText(const QString& text, const QFontMetrics& fm, int room);
    /// Subclass part of adaptLayout() (tick density and the like); the default does nothing.
    virtual void adaptLayoutTo(const QSize& size) { Q_UNUSED(size); }
    /// Subclass part of setExporting(): hide or restore on-screen-only marks.
    virtual void exportingChanged(bool on) { Q_UNUSED(on); }
    /// Call from subclasses after new data: hides the invalid message.
    void markValid();
    /// Shows `text` in place of data in the text colour: an empty view, not an error (no
    /// data is cleared, nothing is replotted). markValid() hides it.
    void showMessage(const QString& text);

    void changeEvent(QEvent* event) override;
    /// Draws once more on becoming visible: a hidden view may skip replots (PlanMapView).
    void showEvent(QShowEvent* event) override;

private:
    void showContextMenu(const QPoint& pos);

    QVBoxLayout* m_layout = nullptr;
    QCustomPlot* m_plot = nullptr;
    void fitTitle(int width);
    void fitTickCounts(const QSize& size);
    void fitSideLegend(int height);

    QCPItemText* m_message = nullptr;
    QCPTextElement* m_title = nullptr;
    QString m_titleText;
    struct WrappedTitle
    {
        QString text; ///< the full title
        QFont font;
        int room = -1;
        QString wrapped; ///< as set on the element
    } m_wrapped;         ///< the last fitTitle() result
    bool m_sideLegend = false;
    bool m_exporting = false;
    QString m_invalidReason;
};

} // namespace paralens
