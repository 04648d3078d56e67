// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/headline.h"
#include "widgets/palette.h"
#include "widgets/units.h"

#include <QApplication>
#include <QEvent>
#include <QFrame>
#include <QGridLayout>
#include <QLabel>
#include <QResizeEvent>
#include <QVBoxLayout>

#include <algorithm>

namespace paralens {

QString Headline::figureName(Figure f)
{
    switch (f) {
    case StepTime:
        return tr("Step time");
    case TokensPerSecond:
        return tr("Tokens/s");
    case Mfu:
        return tr("MFU");
    case TflopsPerGpu:
        return tr("TFLOP/s per GPU");
    case PeakMemory:
        return tr("Peak memory");
    case Fits:
        return tr("Fits in HBM");
    case FigureCount:
        break;
    }
    return {};
}

Headline::Headline(QWidget* parent) : QWidget(parent)
{
    setAccessibleName(tr("Headline figures"));
    m_grid = new QGridLayout(this);
    m_grid->setContentsMargins(4, 2, 4, 2);
    const QString tips[FigureCount] = {
        tr("Wall time of one optimizer step"),
        tr("Training tokens processed per second by the whole cluster"),
        tr("Model FLOPs utilisation: model FLOP/s over the GPUs' dense peak"),
        tr("Model FLOP/s achieved per GPU, in 10^12"),
        tr("Largest per-GPU memory of any pipeline stage, against HBM capacity"),
        tr("Whether every stage fits in GPU memory"),
    };
    for (int i = 0; i < FigureCount; ++i) {
        auto* card = new QFrame(this);
        card->setFrameShape(QFrame::StyledPanel);
        auto* box = new QVBoxLayout(card);
        box->setContentsMargins(8, 3, 8, 3);
        box->setSpacing(0);
        m_names[i] = new QLabel(figureName(static_cast<Figure>(i)), card);
        m_values[i] = new QLabel(QStringLiteral("—"), card);
        QFont big = m_values[i]->font();
        big.setPointSizeF(big.pointSizeF() * 1.5);
        big.setBold(true);
        m_values[i]->setFont(big);
        m_values[i]->setTextInteractionFlags(Qt::TextSelectableByMouse);
        box->addWidget(m_names[i]);
        box->addWidget(m_values[i]);
        m_deltas[i] = new QLabel(card);
        m_deltas[i]->setVisible(false);
        box->addWidget(m_deltas[i]);
        card->setToolTip(tips[i]);
        m_values[i]->setAccessibleName(figureName(static_cast<Figure>(i)));
        m_cards[i] = card;
        if (i == StepTime) {
            // Under the step time, the figure a calibration changes most.
            m_calibration = new QLabel(card);
            m_calibration->setObjectName(QStringLiteral("calibrationBadge"));
            m_calibration->setAccessibleName(tr("Calibration of the figures"));
            m_calibration->setVisible(false);
            box->addWidget(m_calibration);
        }
    }
    m_accuracy = new QLabel(this);
    m_accuracy->setObjectName(QStringLiteral("accuracyNote"));
    m_accuracy->setAccessibleName(tr("Accuracy against measured runs"));
    m_accuracy->setWordWrap(true);
    m_accuracy->setMaximumWidth(220);
    m_accuracy->setVisible(false);
    reflow(QWIDGETSIZE_MAX);
    applyColors();
}

QSize Headline::minimumSizeHint() const
{
    // Two figures per row at the least, so a narrow window (a projector in presentation's
    // large font, a dock beside) never has to be wider than the screen.
    int widest = 0, height = 0;
    for (const QFrame* card : m_cards) {
        widest = std::max(widest, card->minimumSizeHint().width());
        height = std::max(height, card->minimumSizeHint().height());
    }
    const QMargins m = m_grid->contentsMargins();
    const int spacing = std::max(0, m_grid->horizontalSpacing());
    int width = 2 * widest + spacing + m.left() + m.right();
    if (!m_accuracy->isHidden())
        width += spacing + m_accuracy->maximumWidth();
    return {width, height + m.top() + m.bottom()};
}

void Headline::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    reflow(event->size().width());
}

void Headline::reflow(int width)
{
    const QMargins m = m_grid->contentsMargins();
    const int spacing = std::max(0, m_grid->horizontalSpacing());
    int widest = 0;
    for (const QFrame* card : m_cards)
        widest = std::max(widest, card->sizeHint().width());
    int room = width - m.left() - m.right();
    if (!m_accuracy->isHidden())
        room -= spacing + m_accuracy->maximumWidth();
    int columns = 2;
    for (int c : {int(FigureCount), 3})
        if (c * widest + (c - 1) * spacing <= room) {
            columns = c;
            break;
        }
    if (columns == m_columns)
        return;
    m_columns = columns;
    for (QFrame* card : m_cards)
        m_grid->removeWidget(card);
    m_grid->removeWidget(m_accuracy);
    for (int i = 0; i < FigureCount; ++i) {
        m_grid->addWidget(m_cards[i], i / columns, i % columns);
        m_grid->setColumnStretch(i % columns, 1);
    }
    for (int c = columns; c < FigureCount; ++c)
        m_grid->setColumnStretch(c, 0);
    m_grid->addWidget(m_accuracy, 0, columns, (FigureCount + columns - 1) / columns, 1);
}

void Headline::setAccuracyNote(const QString& text, const QString& toolTip)
{
    m_accuracy->setText(text);
    m_accuracy->setToolTip(toolTip);
    m_accuracy->setVisible(!text.isEmpty());
    m_columns = 0; // the note takes room: lay the figures out again
    reflow(width());
    updateGeometry();
}

QString Headline::accuracyNote() const
{
    return m_accuracy->text();
}

QString Headline::figureText(Figure f, const Estimate& e)
{
    switch (f) {
    case StepTime:
        return units::seconds(e.time.step_seconds);
    case TokensPerSecond:
        return units::count(e.throughput.tokens_per_second);
    case Mfu:
        return units::percent(e.throughput.mfu);
    case TflopsPerGpu:
        return QString::number(e.throughput.tflops_per_gpu, 'f', 0);
    case PeakMemory:
        return tr("%1 / %2").arg(units::bytes(e.peak_bytes), units::bytes(e.capacity_bytes));
    case Fits:
        return e.fits ? tr("✔ fits") : tr("✘ OOM (stage %1)").arg(e.peak_stage);
    case FigureCount:
        break;
    }
    return {};
}

void Headline::setEstimate(const Estimate& e)
{
    m_valid = true;
    m_fits = e.fits;
    for (int f = 0; f < FigureCount; ++f)
        m_values[f]->setText(figureText(static_cast<Figure>(f), e));
    m_values[Fits]->setToolTip(QString());
    updateCalibration(e.calibrated);
    applyColors();
}

void Headline::setCalibrationSource(const QString& source)
{
    m_calibrationSource = source;
    if (!m_calibration->isHidden())
        updateCalibration(true);
}

QString Headline::calibrationText() const
{
    return m_calibration->isHidden() ? QString() : m_calibration->text();
}

void Headline::updateCalibration(bool calibrated)
{
    m_calibration->setVisible(calibrated);
    m_calibration->setText(tr("calibrated figures"));
    QString tip = tr("Collective times and GEMM efficiency come from a measured calibration "
                     "profile, not from datasheet figures");
    if (!m_calibrationSource.isEmpty())
        tip += QStringLiteral("\n") + m_calibrationSource;
    m_calibration->setToolTip(tip);
}

void Headline::setInvalid(const QString& reason)
{
    m_valid = false;
    for (QLabel* v : m_values)
        v->setText(QStringLiteral("—"));
    m_values[Fits]->setText(tr("invalid plan"));
    m_values[Fits]->setToolTip(reason);
    m_calibration->setVisible(false);
    applyColors();
}

void Headline::setDelta(Figure f, const QString& text)
{
    m_deltas[f]->setText(text);
    m_deltas[f]->setVisible(!text.isEmpty());
}

QString Headline::deltaText(Figure f) const
{
    return m_deltas[f]->text();
}

QString Headline::valueText(Figure f) const
{
    return m_values[f]->text();
}

void Headline::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::PaletteChange)
        applyColors();
    if (event->type() == QEvent::FontChange) {
        // The figures are 1.5 times the application's text, shrinking with a small window's
        // font; a larger font (a large screen, presentation mode) only brings them up to the
        // text's own size, so that the cards keep their width on a projector.
        const double text = font().pointSizeF();
        const double figures =
            std::max(text, 1.5 * std::min(text, QApplication::font().pointSizeF()));
        for (QLabel* value : m_values) {
            QFont big = font();
            big.setPointSizeF(figures);
            big.setBold(true);
            value->setFont(big);
        }
    }
    QWidget::changeEvent(event);
}

void Headline::applyColors()
{
    QPalette p = m_values[Fits]->palette();
    const QColor c = !m_valid ? palette().color(QPalette::Disabled, QPalette::WindowText)
                     : m_fits ? palette::ok(palette())
                              : palette::warning(palette());
    p.setColor(QPalette::WindowText, c);
    m_values[Fits]->setPalette(p);
    for (int i = 0; i < Fits; ++i)
        m_values[i]->setEnabled(m_valid);
}

} // namespace paralens
