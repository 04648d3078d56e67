// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include <QList>
#include <QObject>

class QMainWindow;
class QMenu;

namespace paralens {

class ChartView;
class Document;
class SearchView;
class CalibrationPanel;

/// The Search and Calibration tools, as docks on the right of the main window that the
/// Tools menu shows and hides. Both follow the document: the search explores the current
/// model, cluster, GPU count and batch; the calibration panel draws the current cluster's
/// datasheet curves. A plan chosen in the search and a profile loaded in the panel change the
/// document through its undo stack.
class ToolDocks : public QObject
{
    Q_OBJECT
public:
    ToolDocks(QMainWindow* window, Document* doc, QMenu* toolsMenu);

    SearchView* searchView() const { return m_search; }
    CalibrationPanel* calibrationPanel() const { return m_calibration; }
    /// The docks' charts (the search scatter, the calibration curves), exported like the
    /// explorer's views.
    QList<ChartView*> charts() const;

private:
    void followDocument();

    Document* m_doc;
    SearchView* m_search;
    CalibrationPanel* m_calibration;
};

} // namespace paralens
