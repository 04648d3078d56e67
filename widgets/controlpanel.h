// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include <QWidget>

namespace paralens {

/// The scenario controls: model, hardware, GPUs, parallel degrees, schedule, batch.
class ControlPanel : public QWidget
{
    Q_OBJECT
public:
    explicit ControlPanel(QWidget* parent = nullptr);
};

} // namespace paralens
