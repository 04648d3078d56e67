// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/mainwindow.h"

namespace paralens {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent)
{
    setWindowTitle("ParaLens");
    resize(1600, 1000);
}

bool MainWindow::openFile(const QString&)
{
    return false;
}

} // namespace paralens
