// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/headline.h"
#include "widgets/palette.h"
#include "widgets/units.h"

#include <QApplication>
#include <QEvent>
#include <QFrame>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QPainter>
#include <QResizeEvent>
#include <QStyle>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

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

namespace {

/// A one-line label that ends in "…" when its box is narrower than its text (the whole text
/// then in its tooltip, before the label's own tip); its least width is the ellipsis'.
class ElidedLabel : public QLabel
{
public:
    using QLabel::QLabel;

    /// A shorter form shown whole before the full text is cut ("−765 ms (−4.2 %)" for
    /// "−765 ms (−4.2 %) vs baseline"); empty: none.
    void setCompactText(const QString& compact)
    {
        m_compact = compact;
        update();
    }
    bool isElided() const
    {
        return fontMetrics().horizontalAdvance(text()) > contentsRect().width();
    }
    /// What paintEvent draws: the text, else the compact form, cut to the box.
    QString shownText() const
    {
        const QString& whole = isElided() && !m_compact.isEmpty() ? m_compact : text();
        return fontMetrics().elidedText(whole, Qt::ElideRight, contentsRect().width());
    }
    QSize minimumSizeHint() const override
    {
        const QMargins m = contentsMargins();
        return {fontMetrics().horizontalAdvance(QStringLiteral("…")) + m.left() + m.right(),
                QLabel::minimumSizeHint().height()};
    }

protected:
    void paintEvent(QPaintEvent*) override
    {
        QPainter painter(this);
        const QRect r = contentsRect();
        const QString shown = shownText();
        style()->drawItemText(&painter, r, int(alignment()) | Qt::TextSingleLine, palette(),
                              isEnabled(), shown, foregroundRole());
    }
    bool event(QEvent* event) override
    {
        if (event->type() == QEvent::ToolTip && isElided()) {
            QString tip = text();
            if (!toolTip().isEmpty())
                tip += QStringLiteral("\n") + toolTip();
            QToolTip::showText(static_cast<QHelpEvent*>(event)->globalPos(), tip, this);
            return true;
        }
        return QLabel::event(event);
    }

private:
    QString m_compact;
};

/// Takes every item out of a card's column of rows (the rows' layouts deleted, the labels
/// kept: they belong to the card).
void clearLayout(QLayout* layout)
{
    while (QLayoutItem* item = layout->takeAt(0)) {
        if (QLayout* inner = item->layout())
            clearLayout(inner);
        delete item;
    }
}

} // namespace

Headline::Headline(QWidget* parent) : QWidget(parent)
{
    setAccessibleName(tr("Headline figures"));
    m_grid = new QGridLayout(this);
    m_grid->setContentsMargins(4, 2, 4, 2);
    m_grid->setHorizontalSpacing(kCardSpacing);
    m_grid->setVerticalSpacing(rowSpacing(m_level));
    const QString tips[FigureCount] = {
        tr("Wall time of one optimizer step"),
        tr("Training tokens processed per second by the whole cluster"),
        tr("Model FLOPs utilisation: model FLOP/s over the GPUs' dense peak"),
        tr("Model FLOP/s achieved per GPU, in 10^12"),
        tr("Largest per-GPU memory of any pipeline stage, against HBM capacity"),
        tr("Whether every stage fits in GPU memory"),
    };
    m_figurePoints = font().pointSizeF() * 1.5;
    for (int i = 0; i < FigureCount; ++i) {
        auto* card = new QFrame(this);
        card->setFrameShape(QFrame::StyledPanel);
        auto* box = new QVBoxLayout(card);
        box->setContentsMargins(cardMargins(m_level));
        box->setSpacing(0);
        m_names[i] = new ElidedLabel(figureName(static_cast<Figure>(i)), card);
        m_values[i] = new QLabel(QStringLiteral("—"), card);
        m_values[i]->setTextInteractionFlags(Qt::TextSelectableByMouse);
        // Never narrower than its text: beside a delta, the delta gives way ("…").
        m_values[i]->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Preferred);
        m_deltas[i] = new ElidedLabel(card);
        m_deltas[i]->setVisible(false);
        card->setToolTip(tips[i]);
        m_values[i]->setAccessibleName(figureName(static_cast<Figure>(i)));
        m_cards[i] = card;
        if (i == StepTime) {
            // Under the step time, the figure a calibration changes most.
            m_calibration = new ElidedLabel(card);
            m_calibration->setObjectName(QStringLiteral("calibrationBadge"));
            m_calibration->setAccessibleName(tr("Calibration of the figures"));
            m_calibration->setVisible(false);
        }
        arrangeCard(i);
    }
    applyValueFonts();
    m_accuracy = new QLabel(this);
    m_accuracy->setObjectName(QStringLiteral("accuracyNote"));
    m_accuracy->setAccessibleName(tr("Accuracy against measured runs"));
    m_accuracy->setWordWrap(true);
    m_accuracy->setMaximumWidth(220);
    m_accuracy->setVisible(false);
    reflow(QWIDGETSIZE_MAX);
    applyColors();
}

void Headline::arrangeCard(int i)
{
    auto* box = static_cast<QVBoxLayout*>(m_cards[i]->layout());
    clearLayout(box);
    QLabel* name = m_names[i];
    QLabel* value = m_values[i];
    QLabel* delta = m_deltas[i];
    QLabel* badge = i == StepTime ? m_calibration : nullptr;
    const int gap = fontMetrics().horizontalAdvance(QLatin1Char(' ')) * 2;
    box->setContentsMargins(cardMargins(m_level));
    // The tightest level names each figure in a word or two, whole; the others in full (an
    // ellipsis where a card is narrower).
    name->setText(m_level >= 2 ? shortName(static_cast<Figure>(i))
                               : figureName(static_cast<Figure>(i)));
    name->setMinimumWidth(m_level >= 2 ? textWidth(name, name->text()) : 0);
    auto row = [&](std::initializer_list<QLabel*> labels, Qt::Alignment align) {
        auto* line = new QHBoxLayout;
        line->setSpacing(gap);
        for (QLabel* l : labels)
            if (l)
                line->addWidget(l, 0, align);
        line->addStretch(1);
        box->addLayout(line);
    };
    switch (m_level) {
    case 0: // name / value / delta / badge, a line each
        for (QLabel* l : {name, value, delta, badge})
            if (l)
                box->addWidget(l);
        break;
    case 1: // name and badge / value and delta
        row({name, badge}, Qt::AlignVCenter);
        row({value, delta}, Qt::AlignBottom);
        break;
    default: // one line
        row({name, value, delta, badge}, Qt::AlignVCenter);
        break;
    }
}

void Headline::applyValueFonts()
{
    for (QLabel* value : m_values) {
        QFont f = font();
        f.setPointSizeF(m_level >= 2 ? font().pointSizeF() : m_figurePoints);
        f.setBold(true);
        value->setFont(f);
    }
}

void Headline::setLevel(int level)
{
    level = std::clamp(level, 0, kLevels - 1);
    if (level == m_level)
        return;
    m_level = level;
    m_grid->setVerticalSpacing(rowSpacing(m_level));
    for (int i = 0; i < FigureCount; ++i)
        arrangeCard(i);
    applyValueFonts();
    // The hints do not depend on the level: the strip keeps its size, only its cards change.
}

QString Headline::shortName(Figure f)
{
    switch (f) {
    case StepTime:
        return tr("Step");
    case TokensPerSecond:
        return tr("Tok/s");
    case Mfu:
        return tr("MFU");
    case TflopsPerGpu:
        return tr("TFLOP/s");
    case PeakMemory:
        return tr("Peak");
    case Fits:
        return tr("HBM");
    case FigureCount:
        break;
    }
    return {};
}

QMargins Headline::cardMargins(int level)
{
    // The tightest level's line keeps a pixel above and below it, the others three.
    return level >= 2 ? QMargins(6, 1, 6, 1) : QMargins(8, 3, 8, 3);
}

int Headline::rowSpacing(int level)
{
    return level >= 2 ? 2 : kCardSpacing;
}

int Headline::textWidth(const QLabel* label, const QString& text)
{
    // As a label measures its one line of text: the advance, rounded up.
    return int(std::ceil(QFontMetricsF(label->font()).horizontalAdvance(text)));
}

QSize Headline::valueSize(int figure, int level) const
{
    // As the value's label measures its (selectable) text: the text's advance and the font's
    // height, each rounded up. From the fonts alone, so the same at every level.
    QFont f = font();
    f.setPointSizeF(level >= 2 ? font().pointSizeF() : m_figurePoints);
    f.setBold(true);
    const QFontMetricsF metrics(f);
    return {int(std::ceil(metrics.horizontalAdvance(m_values[figure]->text()))),
            int(std::ceil(metrics.height()))};
}

int Headline::rowsFor(int columns) const
{
    columns = std::max(1, columns);
    return (FigureCount + columns - 1) / columns;
}

int Headline::widestCard() const
{
    // Every line whole at level 0 (the value in the large type), whatever the level now: the
    // columns follow from the width only.
    int widest = 0;
    for (int i = 0; i < FigureCount; ++i) {
        int line = std::max(textWidth(m_names[i], figureName(static_cast<Figure>(i))),
                            valueSize(i, 0).width());
        if (!m_deltas[i]->isHidden())
            line = std::max(line, m_deltas[i]->sizeHint().width());
        if (i == StepTime && !m_calibration->isHidden())
            line = std::max(line, m_calibration->sizeHint().width());
        const QMargins frame = m_cards[i]->contentsMargins();
        const QMargins box = cardMargins(0);
        widest = std::max(widest, line + frame.left() + frame.right() + box.left() + box.right());
    }
    return widest;
}

int Headline::cardHeight(int level) const
{
    int tallest = 0;
    for (int i = 0; i < FigureCount; ++i) {
        const int value = valueSize(i, level).height();
        const int name = m_names[i]->sizeHint().height();
        const int delta = m_deltas[i]->isHidden() ? 0 : m_deltas[i]->sizeHint().height();
        const int badge =
            i == StepTime && !m_calibration->isHidden() ? m_calibration->sizeHint().height() : 0;
        int h = 0;
        switch (level) {
        case 0:
            h = name + value + delta + badge;
            break;
        case 1:
            h = std::max(name, badge) + std::max(value, delta);
            break;
        default:
            h = std::max({name, value, delta, badge});
            break;
        }
        const QMargins frame = m_cards[i]->contentsMargins();
        const QMargins box = cardMargins(level);
        tallest = std::max(tallest, h + frame.top() + frame.bottom() + box.top() + box.bottom());
    }
    return tallest;
}

int Headline::heightAtLevel(int level) const
{
    const QMargins m = m_grid->contentsMargins();
    const int rows = rowsFor(m_columns);
    const int spacing = rowSpacing(level);
    int height = rows * cardHeight(level) + (rows - 1) * spacing;
    if (!m_accuracy->isHidden())
        height = std::max(height, m_accuracy->heightForWidth(m_accuracy->maximumWidth()));
    return height + m.top() + m.bottom();
}

QSize Headline::sizeHint() const
{
    const QMargins m = m_grid->contentsMargins();
    const int spacing = std::max(0, m_grid->horizontalSpacing());
    const int columns = std::max(1, m_columns);
    int width = columns * widestCard() + (columns - 1) * spacing + m.left() + m.right();
    if (!m_accuracy->isHidden())
        width += spacing + m_accuracy->maximumWidth();
    return {width, heightAtLevel(0)};
}

QSize Headline::minimumSizeHint() const
{
    // Two figures per row at the least, so a narrow window (a projector in presentation's
    // large font, a dock beside) never has to be wider than the screen; as high as the
    // tightest level needs for the rows the width makes.
    const QMargins m = m_grid->contentsMargins();
    const int spacing = std::max(0, m_grid->horizontalSpacing());
    int width = 2 * cardWidthAtLevel(kLevels - 1) + spacing + m.left() + m.right();
    if (!m_accuracy->isHidden())
        width += spacing + m_accuracy->maximumWidth();
    return {width, heightAtLevel(kLevels - 1)};
}

bool Headline::hasHeightForWidth() const
{
    // The rows follow from the width, and sizeHint() counts them at the current width; a
    // height-for-width would also make the column treat the preferred height as the least.
    return false;
}

void Headline::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    ++m_resizes;
    if (m_inResize)
        return;
    m_inResize = true;
    const int columns = m_columns;
    reflow(event->size().width());
    chooseLevel(event->size());
    m_inResize = false;
    if (columns != m_columns)
        hintsChanged(); // more or fewer rows: the width, never the height, changed them
}

void Headline::chooseLevel(const QSize& size)
{
    // Levels 0 and 1 show the values in the large type, which must fit a card's width as well.
    const QMargins m = m_grid->contentsMargins();
    const int spacing = std::max(0, m_grid->horizontalSpacing());
    const int columns = std::max(1, m_columns);
    int room = size.width() - m.left() - m.right();
    if (!m_accuracy->isHidden())
        room -= spacing + m_accuracy->maximumWidth();
    const int card = (room - (columns - 1) * spacing) / columns;
    int level = 0;
    while (level < kLevels - 1 &&
           (heightAtLevel(level) > size.height() || cardWidthAtLevel(level) > card))
        ++level;
    setLevel(level);
}

int Headline::cardWidthAtLevel(int level) const
{
    // The values whole; names, deltas and the badge may end in "…" (their least width).
    const int gap = fontMetrics().horizontalAdvance(QLatin1Char(' ')) * 2;
    auto least = [](const QLabel* l) {
        return l && !l->isHidden() ? l->minimumSizeHint().width() : -1;
    };
    // A line of labels: their widths and the gaps between the shown ones.
    auto line = [gap](std::initializer_list<int> widths) {
        int sum = 0, shown = 0;
        for (int w : widths)
            if (w >= 0) {
                sum += w;
                ++shown;
            }
        return sum + std::max(0, shown - 1) * gap;
    };
    int widest = 0;
    for (int i = 0; i < FigureCount; ++i) {
        const int name = level >= 2 ? textWidth(m_names[i], shortName(static_cast<Figure>(i)))
                                    : least(m_names[i]);
        const int value = valueSize(i, level).width();
        const int delta = least(m_deltas[i]);
        const int badge = least(i == StepTime ? m_calibration : nullptr);
        int w = 0;
        switch (level) {
        case 0:
            w = std::max({name, value, delta, badge});
            break;
        case 1:
            w = std::max(line({name, badge}), line({value, delta}));
            break;
        default:
            w = line({name, value, delta, badge});
            break;
        }
        const QMargins frame = m_cards[i]->contentsMargins();
        const QMargins box = cardMargins(level);
        widest = std::max(widest, w + frame.left() + frame.right() + box.left() + box.right());
    }
    return widest;
}

void Headline::contentChanged()
{
    // New text or lines: the columns for the width, the level for the height the strip has,
    // and the hints for the layout (only when they changed).
    const int columns = m_columns;
    reflow(width());
    chooseLevel(size());
    if (columns != m_columns || sizeHint() != m_hint || minimumSizeHint() != m_minimumHint)
        hintsChanged();
}

void Headline::hintsChanged()
{
    m_hint = sizeHint();
    m_minimumHint = minimumSizeHint();
    updateGeometry();
}

void Headline::reflow(int width)
{
    const QMargins m = m_grid->contentsMargins();
    const int spacing = std::max(0, m_grid->horizontalSpacing());
    const int widest = widestCard();
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
    contentChanged();
    hintsChanged();
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
    contentChanged();
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
    contentChanged();
}

void Headline::setDelta(Figure f, const QString& text, const QString& compact)
{
    m_deltas[f]->setText(text);
    static_cast<ElidedLabel*>(m_deltas[f])->setCompactText(compact);
    m_deltas[f]->setVisible(!text.isEmpty());
    contentChanged();
}

QString Headline::deltaText(Figure f) const
{
    return m_deltas[f]->text();
}

QString Headline::shownDeltaText(Figure f) const
{
    return static_cast<const ElidedLabel*>(m_deltas[f])->shownText();
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
        m_figurePoints = std::max(text, 1.5 * std::min(text, QApplication::font().pointSizeF()));
        applyValueFonts();
        for (int i = 0; i < FigureCount; ++i)
            arrangeCard(i); // the gaps between a line's labels follow the text
        contentChanged();
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
