// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include <QWidget>

#include <vector>

class QLabel;
class QSlider;

namespace paralens {

/// A slider over a list of allowed integer values (e.g. the divisors that keep a plan
/// runnable): it moves by index, so every position is a valid value.
class SnapSlider : public QWidget
{
    Q_OBJECT
public:
    SnapSlider(const QString& name, const QString& toolTip, QWidget* parent = nullptr);

    /// Sets the allowed values (sorted, unique); `current` is added when not among them so a
    /// loaded plan is always shown as it is. Emits nothing.
    void setValues(std::vector<int> values, int current);
    int value() const;
    const std::vector<int>& values() const { return m_values; }
    QSlider* slider() const { return m_slider; }
    /// Marks the control as part of a broken rule (empty message clears it).
    void setError(const QString& message);
    bool hasError() const { return !m_error.isEmpty(); }

signals:
    /// The user picked a new value; `dragId` is > 0 while one mouse drag lasts (one undo
    /// step per drag) and 0 for single steps.
    void valueEdited(int value, int dragId);

private:
    void updateLabel();

    QLabel* m_name = nullptr;
    QSlider* m_slider = nullptr;
    QLabel* m_value = nullptr;
    std::vector<int> m_values;
    QString m_toolTip;
    QString m_error;
    int m_dragId = 0;
};

} // namespace paralens
