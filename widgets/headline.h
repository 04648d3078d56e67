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
    /// hides it.
    void setDelta(Figure f, const QString& text);
    QString deltaText(Figure f) const;
    /// The model's accuracy on measured runs like this scenario ("vs measured: ±8.3 % on 12
    /// similar runs"), shown at the end of the strip; "" hides it.
    void setAccuracyNote(const QString& text, const QString& toolTip = {});
    QString accuracyNote() const;

    /// Figures per row: all six when they fit the width, else three or two rows of them.
    int columns() const { return m_columns; }
    QSize minimumSizeHint() const override;

protected:
    void changeEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void applyColors();
    void updateCalibration(bool calibrated);
    void reflow(int width);

    QLabel* m_values[FigureCount] = {};
    QLabel* m_names[FigureCount] = {};
    QLabel* m_deltas[FigureCount] = {};
    QLabel* m_accuracy = nullptr;
    QLabel* m_calibration = nullptr;
    QString m_calibrationSource;
    QFrame* m_cards[FigureCount] = {};
    QGridLayout* m_grid = nullptr;
    int m_columns = 0;
    bool m_fits = true;
    bool m_valid = false;
};

} // namespace paralens
