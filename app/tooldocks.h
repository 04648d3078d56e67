// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include <QList>
#include <QObject>
#include <QRect>
#include <QStringList>

class QDockWidget;

class QMainWindow;
class QMenu;

namespace paralens {

class AccuracyPanel;
class ChartView;
class Document;
class SearchView;
class CalibrationPanel;

/// The Search, Calibration and Accuracy tools, as docks on the right of the main window that the
/// Tools menu shows and hides. Both follow the document: the search explores the current
/// model, cluster, GPU count and batch; the calibration panel draws the current cluster's
/// datasheet curves; the accuracy panel notes how close the model is on measured runs like the
/// current scenario, with the calibration profile's fitted constants. A plan chosen in the
/// search, a profile loaded in the panel and a run opened from the accuracy chart change the
/// document through its undo stack.
class ToolDocks : public QObject
{
    Q_OBJECT
public:
    ToolDocks(QMainWindow* window, Document* doc, QMenu* toolsMenu);

    SearchView* searchView() const { return m_search; }
    CalibrationPanel* calibrationPanel() const { return m_calibration; }
    AccuracyPanel* accuracyPanel() const { return m_accuracy; }
    /// Shows the Accuracy dock and loads `files` (CSV rows on `hardware`, when given); a
    /// non-empty `floating` rectangle floats the dock there.
    void openAccuracy(const QStringList& files, const QString& hardware = {},
                      const QRect& floating = {});
    /// The docks' charts (the search scatter, the calibration curves, the accuracy scatter),
    /// exported like the explorer's views.
    QList<ChartView*> charts() const;

private:
    void followDocument();

    Document* m_doc;
    SearchView* m_search;
    CalibrationPanel* m_calibration;
    AccuracyPanel* m_accuracy;
    QDockWidget* m_accuracyDock = nullptr;
};

} // namespace paralens
