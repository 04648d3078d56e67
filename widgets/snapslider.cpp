// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/snapslider.h"
#include "widgets/palette.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSlider>

#include <algorithm>

namespace paralens {

namespace {
int g_nextDragId = 1; // unique across sliders, so drags of different sliders never merge
}

SnapSlider::SnapSlider(const QString& name, const QString& toolTip, QWidget* parent)
    : QWidget(parent), m_toolTip(toolTip)
{
    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(0, 0, 0, 0);
    m_name = new QLabel(name, this);
    m_name->setMinimumWidth(fontMetrics().horizontalAdvance(QStringLiteral("WWW ")));
    m_slider = new QSlider(Qt::Horizontal, this);
    m_slider->setTickPosition(QSlider::TicksBelow);
    m_slider->setPageStep(1);
    m_slider->setAccessibleName(name);
    m_slider->setAccessibleDescription(toolTip);
    m_value = new QLabel(this);
    m_value->setMinimumWidth(fontMetrics().horizontalAdvance(QStringLiteral("⚠ 00000")));
    m_value->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    m_name->setBuddy(m_slider);
    row->addWidget(m_name);
    row->addWidget(m_slider, 1);
    row->addWidget(m_value);
    setToolTip(toolTip);
    setFocusProxy(m_slider);

    connect(m_slider, &QSlider::sliderPressed, this, [this] { m_dragId = g_nextDragId++; });
    connect(m_slider, &QSlider::sliderReleased, this, [this] { m_dragId = 0; });
    connect(m_slider, &QSlider::valueChanged, this, [this] {
        updateLabel();
        emit valueEdited(value(), m_slider->isSliderDown() ? m_dragId : 0);
    });
    setValues({1}, 1);
}

void SnapSlider::setValues(std::vector<int> values, int current)
{
    if (std::find(values.begin(), values.end(), current) == values.end())
        values.push_back(current);
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    const QSignalBlocker block(m_slider);
    if (values != m_values) {
        m_values = std::move(values);
        m_slider->setRange(0, static_cast<int>(m_values.size()) - 1);
    }
    const auto it = std::find(m_values.begin(), m_values.end(), current);
    m_slider->setValue(static_cast<int>(it - m_values.begin()));
    m_slider->setEnabled(m_values.size() > 1);
    updateLabel();
}

int SnapSlider::value() const
{
    const int i = m_slider->value();
    return (i >= 0 && i < static_cast<int>(m_values.size())) ? m_values[static_cast<std::size_t>(i)]
                                                             : 1;
}

void SnapSlider::setError(const QString& message)
{
    if (message == m_error)
        return;
    m_error = message;
    setToolTip(message.isEmpty() ? m_toolTip : m_toolTip + QStringLiteral("\n⚠ ") + message);
    QPalette p = palette();
    if (!message.isEmpty())
        p.setColor(QPalette::WindowText, palette::warning(palette()));
    m_value->setPalette(message.isEmpty() ? palette() : p);
    updateLabel();
}

void SnapSlider::updateLabel()
{
    m_value->setText((m_error.isEmpty() ? QString() : QStringLiteral("⚠ ")) +
                     QString::number(value()));
    m_slider->setAccessibleDescription(m_error.isEmpty() ? m_toolTip : m_error);
}

} // namespace paralens
