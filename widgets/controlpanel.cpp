// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/controlpanel.h"

namespace paralens {

ControlPanel::ControlPanel(QWidget* parent) : QWidget(parent) {}

} // namespace paralens
