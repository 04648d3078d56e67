// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/estimate.h"

#include <QWidget>

class QFrame;
class QGridLayout;
class QLabel;

namespace paralens {

/// The strip of headline figures: step time, tokens/s, MFU, TFLOP/s per GPU, peak memory
/// against capacity, and whether the plan fits.
class Headline : public QWidget
{
    Q_OBJECT
public:
    enum Figure
    {
        StepTime,
        TokensPerSecond,
        Mfu,
        TflopsPerGpu,
        PeakMemory,
        Fits,
        FigureCount
    };
    explicit Headline(QWidget* parent = nullptr);

    void setEstimate(const Estimate& estimate);
    /// Shows dashes instead of numbers (invalid plan) and the reason.
    void setInvalid(const QString& reason);

    /// The text of one figure's value, as shown (for tests and the report).
    QString valueText(Figure f) const;
    static QString figureName(Figure f);
    /// The text a figure shows for an estimate (the strip and the report use it).
    static QString figureText(Figure f, const Estimate& e);
    /// A badge says "Calibrated figures" when the estimate's collective and GEMM figures come
    /// from a measured profile (Estimate::calibrated; setEstimate() shows or hides it);
    /// `source` names the profile in its tooltip.
    void setCalibrationSource(const QString& source);
    /// The calibration badge as shown ("" when hidden).
    QString calibrationText() const;
    /// A small line under a figure's value (compare mode: the change from the baseline); ""
    /// hides it. `compact` is shown instead when the card is too narrow for `text` (the whole
    /// text stays in the tooltip).
    void setDelta(Figure f, const QString& text, const QString& compact = {});
    QString deltaText(Figure f) const;
    /// The delta as drawn now: whole, its compact form, or either cut with "…".
    QString shownDeltaText(Figure f) const;
    /// The model's accuracy on measured runs like this scenario ("vs measured: ±8.3 % on 12
    /// similar runs"), shown at the end of the strip; "" hides it.
    void setAccuracyNote(const QString& text, const QString& toolTip = {});
    QString accuracyNote() const;

    /// Figures per row: all six when they fit the width, else three or two rows of them.
    /// The width alone sets it (each card as wide as its widest line at level 0).
    int columns() const { return m_columns; }
    /// How tightly the cards are set, from the height the strip is given (never from its own
    /// hints, so a change of level cannot change the strip's size): 0 = name, value and
    /// delta on lines of their own; 1 = the delta (and the calibration badge) beside the value
    /// (and the name); 2 = one line per card, the value at the text's size. A line too long
    /// for its card ends in "…" and its tooltip has the whole of it.
    int compactLevel() const { return m_level; }
    static constexpr int kLevels = 3;
    /// The height the cards need at a level and the current column count.
    int heightAtLevel(int level) const;
    /// The preferred size sets the cards at level 0, the least at level 2, both for the
    /// current width's column count (the width, not the height, sets the rows).
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;
    bool hasHeightForWidth() const override;
    /// The labels of one card, for tests: name, value, delta (delta hidden when empty).
    QFrame* card(Figure f) const { return m_cards[f]; }
    QLabel* nameLabel(Figure f) const { return m_names[f]; }
    QLabel* valueLabel(Figure f) const { return m_values[f]; }
    QLabel* deltaLabel(Figure f) const { return m_deltas[f]; }
    /// Resize events seen (a test checks that a change of level does not resize again).
    int resizeCount() const { return m_resizes; }

protected:
    void changeEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void applyColors();
    void updateCalibration(bool calibrated);
    void reflow(int width);
    void setLevel(int level);
    void arrangeCard(int figure);
    void applyValueFonts();
    int widestCard() const;
    int cardHeight(int level) const;
    int rowsFor(int columns) const;
    QSize valueSize(int figure, int level) const;
    static QString shortName(Figure f);
    static QMargins cardMargins(int level);
    static int rowSpacing(int level);
    static int textWidth(const QLabel* label, const QString& text);
    static constexpr int kCardSpacing = 6; ///< between cards (pixels), as Qt's styles space widgets
    void chooseLevel(const QSize& size);
    int cardWidthAtLevel(int level) const;
    void contentChanged();
    void hintsChanged();

    QLabel* m_values[FigureCount] = {};
    QLabel* m_names[FigureCount] = {};
    QLabel* m_deltas[FigureCount] = {};
    QLabel* m_accuracy = nullptr;
    QLabel* m_calibration = nullptr;
    QString m_calibrationSource;
    QFrame* m_cards[FigureCount] = {};
    QGridLayout* m_grid = nullptr;
    int m_columns = 0;
    int m_level = 0;
    int m_resizes = 0;
    bool m_inResize = false;
    QSize m_hint, m_minimumHint; ///< as the layout last learnt them
    double m_figurePoints = 0;   ///< the values' size at levels 0 and 1 (points)
    bool m_fits = true;
    bool m_valid = false;
};

} // namespace paralens
