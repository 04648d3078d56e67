// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include <QMainWindow>

namespace paralens {

class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    /// Opens a scenario file; shows the error and keeps the current document on failure.
    bool openFile(const QString& path);
};

} // namespace paralens
