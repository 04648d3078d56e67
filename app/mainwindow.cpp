// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/mainwindow.h"
#include "app/accuracypanel.h"
#include "app/autosave.h"
#include "app/compare.h"
#include "app/document.h"
#include "app/export.h"
#include "app/helpmenu.h"
#include "app/import_model_action.h"
#include "app/launchdock.h"
#include "app/plandocks.h"
#include "app/report.h"
#include "app/theme.h"
#include "app/tooldocks.h"
#include "app/tourcontroller.h"
#include "app/workshop.h"
#include "core/evaluate.h"
#include "core/presets.h"
#include "core/scenario_io.h"
#include "widgets/breakdownview.h"
#include "widgets/controlpanel.h"
#include "widgets/ganttview.h"
#include "widgets/headline.h"
#include "widgets/memoryview.h"
#include "widgets/planmapview.h"
#include "widgets/topologyview.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QSpinBox>
#include <QSplitter>
#include <QStatusBar>
#include <QStyle>
#include <QTimer>
#include <QToolBar>
#include <QUndoStack>
#include <QVBoxLayout>
#include <qcustomplot.h>

namespace paralens {
namespace {

const char kFileFilter[] =
    QT_TRANSLATE_NOOP("paralens::MainWindow", "ParaLens scenario (*.paralens.json);;JSON (*.json)");
constexpr int kMaxRecent = 8;

QStringList warningLines(const Estimate& e)
{
    QStringList out;
    for (const std::string& w : warningTexts(e))
        out << QString::fromStdString(w);
    return out;
}

} // namespace

MainWindow::MainWindow(const PresetLibrary* presets, QWidget* parent)
    : QMainWindow(parent), m_presets(presets ? *presets : PresetLibrary::builtin())
{
    setObjectName(QStringLiteral("MainWindow"));
    setAcceptDrops(true);
    resize(1600, 1000);
    skipLatinShaping();

    m_doc = new Document(defaultScenario(), m_presets, this);
    m_evaluator = new Evaluator(this);
    m_autosave = new Autosave(m_doc, m_presets, this);

    m_panel = new ControlPanel(m_presets, this);
    auto* scroll = new QScrollArea(this);
    scroll->setWidget(m_panel);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto* dock = new QDockWidget(tr("Scenario"), this);
    dock->setObjectName(QStringLiteral("ScenarioDock"));
    dock->setWidget(scroll);
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setMinimumWidth(m_panel->sizeHint().width() +
                            style()->pixelMetric(QStyle::PM_ScrollBarExtent) + 4);
    addDockWidget(Qt::LeftDockWidgetArea, dock);
    m_scenarioDock = dock;

    auto* central = new QWidget(this);
    auto* column = new QVBoxLayout(central);
    column->setContentsMargins(4, 4, 4, 4);
    m_headline = new Headline(central);
    column->addWidget(m_headline);

    m_memory = new MemoryView(central);
    m_breakdown = new BreakdownView(central);
    m_topology = new TopologyView(central);
    m_gantt = new GanttView(central);
    auto* gantt = m_gantt;
    connect(m_gantt, &GanttView::stageSelected, m_memory, &MemoryView::setHighlightedStage);
    m_compare = new Comparison(m_headline, m_memory, m_breakdown, m_gantt, this);
    m_workshop = new Workshop(this, m_doc, m_gantt);

    auto* top = new QSplitter(Qt::Horizontal, central);
    top->addWidget(m_memory);
    top->addWidget(m_topology);
    top->setStretchFactor(0, 3);
    top->setStretchFactor(1, 2);
    auto* rows = new QSplitter(Qt::Vertical, central);
    rows->addWidget(top);
    rows->addWidget(m_breakdown);
    rows->addWidget(gantt);
    rows->setStretchFactor(0, 4);
    rows->setStretchFactor(1, 2);
    rows->setStretchFactor(2, 4);
    rows->setChildrenCollapsible(false);
    m_workshop->setHiddenWhilePresenting({m_scenarioDock, m_topology, m_breakdown});
    column->addWidget(rows, 1);
    setCentralWidget(central);

    m_status = new QLabel(this);
    m_status->setAccessibleName(tr("Warnings"));
    // A long warning line is cut at the window's edge (the whole of it in the tool tip), never
    // widening the window past the screen.
    m_status->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_status->setMinimumWidth(1);
    statusBar()->addWidget(m_status, 1);

    createActions();

    // One direction per edit: the panel asks the document, the document's change updates the
    // panel like every view, and the one evaluation of it (validated once) reaches them all.
    connect(m_panel, &ControlPanel::edited, m_doc, &Document::edit);
    connect(m_doc, &Document::scenarioChanged, this, [this](const Scenario& s) {
        m_panel->setScenario(s);
        m_evaluator->request(s);
    });
    connect(m_doc, &Document::modifiedChanged, this, &MainWindow::updateTitle);
    connect(m_doc, &Document::filePathChanged, this, [this](const QString& path) {
        m_evaluator->setBaseDir(path.isEmpty() ? QString() : QFileInfo(path).absolutePath());
        updateTitle();
    });
    connect(m_evaluator, &Evaluator::finished, this,
            [this](const Evaluation& e) { showEvaluation(e, false); });
    for (ChartView* c : charts())
        connect(c, &ChartView::exportRequested, this, &MainWindow::exportChartDialog);

    m_panel->setScenario(m_doc->scenario());
    m_evaluator->request(m_doc->scenario());
    updateTitle();
    m_autosave->setOpenBeside(
        [this](const AutosaveRecord& record) { return openRecoveredBeside(record) != nullptr; });
    fillWhatsThis(this);
    m_defaultState = saveState();
    // A tool dock shown on a narrow window joins the Scenario dock's tabs.
    for (QDockWidget* d : findChildren<QDockWidget*>(Qt::FindDirectChildrenOnly))
        if (d != m_scenarioDock)
            connect(d, &QDockWidget::visibilityChanged, this, [this](bool on) {
                if (on)
                    scheduleArrange();
            });
}

QSize MainWindow::firstStartSize(const QSize& available)
{
    // Four fifths of a big screen; a small one (a laptop, a 1024 × 768 projector) gives the
    // window all of it: four fifths of 1024 left the headline's deltas elided.
    const auto side = [](int avail, int cap, int small) {
        const int fifths = avail * 4 / 5;
        return fifths < small ? avail : std::min(cap, fifths);
    };
    return QSize(side(available.width(), 1600, 1280), side(available.height(), 1000, 800));
}

double MainWindow::fontScaleFor(const QSize& size)
{
    const double f = std::min(size.width() / 1600.0, size.height() / 1000.0);
    return std::round(std::clamp(f, 0.85, 1.5) * 20) / 20;
}

void MainWindow::scheduleArrange()
{
    if (m_arrangePending)
        return;
    m_arrangePending = true;
    QTimer::singleShot(0, this, [this] {
        m_arrangePending = false;
        arrangeToolDocks();
        applyFontScale();
        keepOnScreen();
    });
}

// A dock or a font change that grew the window past the screen's edge moves it back in (only
// moves: a window larger than its screen is fitToScreen()'s business).
void MainWindow::keepOnScreen()
{
    const QScreen* screen = this->screen();
    if (!screen || !isVisible() || isMaximized() || isFullScreen())
        return;
    const QRect avail = screen->availableGeometry();
    QRect g = frameGeometry();
    if (g.width() > avail.width() || g.height() > avail.height() || avail.contains(g))
        return;
    g.moveLeft(std::clamp(g.left(), avail.left(), avail.right() - g.width() + 1));
    g.moveTop(std::clamp(g.top(), avail.top(), avail.bottom() - g.height() + 1));
    move(g.topLeft());
}

void MainWindow::arrangeToolDocks()
{
    if (width() >= kTabifyBelowWidth || !m_workshop || m_workshop->isPresenting())
        return;
    QDockWidget* front = nullptr;
    for (QDockWidget* d : findChildren<QDockWidget*>(Qt::FindDirectChildrenOnly)) {
        // Only the tool docks' own column: the tour's caption strip (top) keeps its place.
        if (d == m_scenarioDock || d->isFloating() || dockWidgetArea(d) != Qt::RightDockWidgetArea)
            continue;
        const bool visible = d->isVisible();
        tabifyDockWidget(m_scenarioDock, d);
        if (visible)
            front = d;
    }
    if (front)
        front->raise(); // the tool just opened, in front of the Scenario tab
}

// Kerning and ligatures are cosmetic in Latin script, and shaping every label, tick and legend
// entry again on each repaint was a quarter of a slider tick (harfbuzz under QTextEngine::shape).
// QFont::PreferNoShaping skips it only where a script does not need it (Qt's QFont docs).
void MainWindow::skipLatinShaping()
{
    QFont f = QApplication::font();
    if (f.styleStrategy() & QFont::PreferNoShaping)
        return;
    f.setStyleStrategy(QFont::StyleStrategy(f.styleStrategy() | QFont::PreferNoShaping));
    QApplication::setFont(f);
}

void MainWindow::applyFontScale()
{
    if (!m_workshop || m_workshop->isPresenting())
        return; // presentation mode sets its own font; the size's is applied when it ends
    const double scale = fontScaleFor(size());
    if (std::abs(scale - m_fontScale) < 0.01)
        return;
    m_fontScale = scale;
    if (scale == 1) {
        setFont(QFont());
        setAttribute(Qt::WA_SetFont, false);
        return;
    }
    QFont f = QApplication::font();
    f.setPointSizeF(f.pointSizeF() * scale);
    setFont(f);
}

void MainWindow::resizeEvent(QResizeEvent* event)
{
    QMainWindow::resizeEvent(event);
    scheduleArrange();
}

void MainWindow::showEvent(QShowEvent* event)
{
    QMainWindow::showEvent(event);
    scheduleArrange();
}

bool MainWindow::openBaseline(const QString& path)
{
    Scenario s;
    try {
        s = loadScenarioFile(path.toStdString(), m_presets);
    } catch (const std::exception& e) {
        showError(tr("Cannot open the baseline"), QString::fromStdString(e.what()));
        return false;
    }
    // A calibration path in the baseline is relative to its own folder.
    m_evaluator->setBaseDir(QFileInfo(path).absolutePath());
    const Evaluation e = m_evaluator->evaluateNow(s);
    m_evaluator->setBaseDir(
        m_doc->filePath().isEmpty() ? QString() : QFileInfo(m_doc->filePath()).absolutePath());
    if (!e.ok()) {
        showError(tr("Cannot compare"),
                  tr("The baseline %1 cannot run: %2").arg(QFileInfo(path).fileName(), e.reason()));
        return false;
    }
    m_compare->pin(e);
    // evaluateNow() superseded the document's evaluation in flight: ask for it again, and the
    // views show it beside the baseline when it arrives.
    m_evaluator->request(m_doc->scenario());
    return m_compare->isPinned();
}

void MainWindow::applyEnvironment()
{
    if (const QString base = qEnvironmentVariable("PARALENS_BASELINE"); !base.isEmpty())
        openBaseline(base);
    // Screenshots and demos: PARALENS_PLAN_MAP_FIXED=AXIS:VALUE holds the plan map's third axis
    // (AXIS as the Fixed: box names it, e.g. "micro-batch:4", "ZeRO stage:3", "CP:2").
    if (const QString fixed = qEnvironmentVariable("PARALENS_PLAN_MAP_FIXED"); !fixed.isEmpty())
        if (auto* map = findChild<PlanMapView*>()) {
            const QString axis = fixed.section(QLatin1Char(':'), 0, 0).trimmed();
            const QString value = fixed.section(QLatin1Char(':'), 1).trimmed();
            for (PlanMapAxis a : kPlanMapAxes)
                if (a != PlanMapAxis::None && axis == QString::fromStdString(planMapAxisName(a)))
                    for (int v : planMapAxisValues(m_doc->scenario(), a))
                        if (value == QString::fromStdString(planMapAxisValueText(a, v)))
                            map->setFixed({a, v});
        }
}

MainWindow::~MainWindow() = default;

QList<ChartView*> MainWindow::charts() const
{
    return {m_memory, m_breakdown, m_topology, m_gantt};
}

void MainWindow::createActions()
{
    // Built first, so that File ▸ Export Chart lists the docks' charts too.
    auto* toolsMenu = new QMenu(tr("&Tools"), this);
    m_tools = new ToolDocks(this, m_doc, toolsMenu);
    auto* planDocks = new PlanDocks(this, m_doc, toolsMenu); // Fit advice, Plan map

    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&New"), QKeySequence::New, this, &MainWindow::newDocument);
    file->addAction(tr("&Open…"), QKeySequence::Open, this, &MainWindow::openDialog);
    file->addAction((new TourController(this))->openAction()); // app/tourcontroller.cpp
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    file->addAction(tr("&Save"), QKeySequence::Save, this, &MainWindow::save);
    QAction* saveAs = file->addAction(tr("Save &As…"), this, &MainWindow::saveAs);
    // The platform's Save As key where it has one, and Ctrl+Shift+S everywhere.
    QList<QKeySequence> saveAsKeys = QKeySequence::keyBindings(QKeySequence::SaveAs);
    const QKeySequence ctrlShiftS(Qt::CTRL | Qt::SHIFT | Qt::Key_S);
    if (!saveAsKeys.contains(ctrlShiftS))
        saveAsKeys.prepend(ctrlShiftS);
    saveAs->setShortcuts(saveAsKeys);
    file->addSeparator();
    m_importModel = new ModelImportAction(this, m_doc, file);
    connect(m_importModel, &ModelImportAction::failed, this, &MainWindow::showError);
    file->addSeparator();
    QMenu* exportMenu = file->addMenu(tr("&Export Chart"));
    for (ChartView* c : charts() + m_tools->charts() + planDocks->charts())
        exportMenu->addAction(tr("%1…").arg(c->chartTitle()), this,
                              [this, c] { exportChartDialog(c); });
    file->addAction(tr("Export &Report (PDF)…"), this, &MainWindow::exportReportDialog);
    file->addAction(tr("Export Schedule &Trace (Perfetto)…"), this, &MainWindow::exportTraceDialog);
    // The Launch dock (app/launchdock.cpp): View ▸ Launch, File ▸ Import Launch Config….
    m_launch = new LaunchDock(this, m_doc);
    file->addAction(m_launch->importAction());
    connect(m_launch, &LaunchDock::failed, this,
            [this](const QString& message) { showError(tr("Launch config"), message); });
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* undo = m_doc->undoStack()->createUndoAction(this, tr("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    QAction* redo = m_doc->undoStack()->createRedoAction(this, tr("&Redo"));
    redo->setShortcut(QKeySequence::Redo);
    edit->addAction(undo);
    edit->addAction(redo);

    createViewMenu();
    QMenu* compare = menuBar()->addMenu(tr("&Compare"));
    QAction* pin =
        compare->addAction(tr("&Pin as Baseline"), this, [this] { m_compare->pin(m_shown); });
    pin->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_B));
    QAction* unpin = compare->addAction(tr("&Unpin Baseline"), m_compare, &Comparison::unpin);
    unpin->setEnabled(false);
    connect(m_compare, &Comparison::pinnedChanged, unpin, &QAction::setEnabled);
    menuBar()->addMenu(toolsMenu);
    m_help = new HelpMenu(this, menuBar()->addMenu(tr("&Help")));
    for (ChartView* c : planDocks->charts())
        connect(c, &ChartView::exportRequested, this, &MainWindow::exportChartDialog);
    connect(m_tools->accuracyPanel(), &AccuracyPanel::noteChanged, m_headline,
            &Headline::setAccuracyNote);
    for (ChartView* c : m_tools->charts())
        connect(c, &ChartView::exportRequested, this, &MainWindow::exportChartDialog);
    updateRecentMenu();
}

void MainWindow::createViewMenu()
{
    m_viewMenu = menuBar()->addMenu(tr("&View"));
    m_viewMenu->addAction(m_workshop->presentationAction());
    addAction(m_workshop->leaveAction()); // Esc works without the menu open
    m_viewMenu->addSeparator();
    m_viewDockEnd = m_viewMenu->addSeparator();
    createThemeMenu(m_viewMenu);
    m_viewMenu->addAction(tr("Reset &Layout"), this, &MainWindow::resetLayout);
    connect(m_viewMenu, &QMenu::aboutToShow, this, &MainWindow::refreshViewMenu);
    refreshViewMenu();
}

void MainWindow::refreshViewMenu()
{
    for (QAction* a : std::as_const(m_viewDockActions))
        m_viewMenu->removeAction(a);
    m_viewDockActions.clear();
    // Every dock and toolbar of this window, whoever added it.
    for (QDockWidget* dock : findChildren<QDockWidget*>(Qt::FindDirectChildrenOnly))
        m_viewDockActions << dock->toggleViewAction();
    for (QToolBar* bar : findChildren<QToolBar*>(Qt::FindDirectChildrenOnly))
        if (bar != m_workshop->toolBar()) // presentation mode owns the workshop bar
            m_viewDockActions << bar->toggleViewAction();
    m_viewMenu->insertActions(m_viewDockEnd, m_viewDockActions);
}

void MainWindow::createThemeMenu(QMenu* parent)
{
    QMenu* menu = parent->addMenu(tr("&Theme"));
    auto* group = new QActionGroup(menu);
    const std::pair<Theme, QString> themes[] = {
        {Theme::System, tr("&System")}, {Theme::Light, tr("&Light")}, {Theme::Dark, tr("&Dark")}};
    const Theme current = savedTheme();
    for (const auto& [theme, name] : themes) {
        QAction* a = menu->addAction(name);
        a->setCheckable(true);
        a->setChecked(theme == current);
        a->setObjectName(QStringLiteral("Theme_") + themeId(theme));
        group->addAction(a);
        const Theme t = theme;
        connect(a, &QAction::triggered, this, [t] { applyTheme(t); });
    }
    if (current != Theme::System)
        applyTheme(current);
}

void MainWindow::resetLayout()
{
    m_workshop->setPresentation(false);
    restoreState(m_defaultState);
}

MainWindow* MainWindow::openRecoveredBeside(const AutosaveRecord& record)
{
    auto* other = new MainWindow(&m_presets);
    other->setAttribute(Qt::WA_DeleteOnClose);
    other->setObjectName(QStringLiteral("RecoveredWindow"));
    other->autosave()->setDirectory(m_autosave->directory());
    other->document()->restore(record.scenario, record.originalPath);
    other->autosave()->writeNow();
    other->resize(size());
    other->show();
    other->fitToScreen();
    return other;
}

void MainWindow::showEvaluation(const Evaluation& e, bool immediate)
{
    m_shown = e;
    m_panel->setErrors(e.errors);
    if (e.ok()) {
        m_memory->setEstimate(e.estimate, e.scenario);
        m_breakdown->setEstimate(e.estimate);
        m_topology->setScenario(e.scenario);
        m_headline->setCalibrationSource(calibrationSource(e));
        m_headline->setEstimate(e.estimate);
        m_gantt->setTimeline(e.timeline);
        m_memory->setHighlightedStage(m_gantt->selectedStage());
        QStringList notes = warningLines(e.estimate);
        if (!e.calibration.isEmpty())
            notes.prepend(e.calibration);
        m_status->setText(notes.join(QStringLiteral(" · ")));
        m_status->setToolTip(notes.join(QLatin1Char('\n')));
    } else {
        const QString reason = e.reason();
        for (ChartView* c : charts())
            c->setInvalid(reason);
        m_headline->setInvalid(reason);
        m_status->setText(reason.section(QLatin1Char('\n'), 0, 0));
        m_status->setToolTip(reason);
    }
    m_compare->update(e);
    // Immediate: each chart is replotted into its buffer now and only marked for painting;
    // updateNow() then paints the window once (one backing-store sync for every view, where
    // an immediate refresh per chart would sync and flush the whole window once per chart).
    for (ChartView* c : charts())
        c->plot()->replot(immediate ? QCustomPlot::rpQueuedRefresh : QCustomPlot::rpQueuedReplot);
    emit viewsUpdated();
}

void MainWindow::updateNow()
{
    showEvaluation(m_evaluator->evaluateNow(m_doc->scenario()), true);
    // A synchronous repaint syncs every dirty region of the window: the charts replotted
    // above, the headline, the panel's edited controls.
    m_headline->repaint();
}

void MainWindow::updateTitle()
{
    setWindowTitle(m_doc->displayName() + QStringLiteral("[*]"));
    setWindowModified(m_doc->isModified());
}

void MainWindow::showError(const QString& title, const QString& message)
{
    // Window-modal and non-blocking: the document stays usable behind it.
    auto* box = new QMessageBox(QMessageBox::Critical, title, message, QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setObjectName(QStringLiteral("ErrorBox"));
    box->open();
    emit errorShown(message);
}

bool MainWindow::openFile(const QString& path)
{
    QString error;
    if (!m_doc->load(path, &error)) {
        showError(tr("Cannot open scenario"), error);
        return false;
    }
    addRecentFile(path);
    return true;
}

bool MainWindow::saveFile(const QString& path)
{
    QString error;
    if (!m_doc->save(path, &error)) {
        showError(tr("Cannot save scenario"), error);
        return false;
    }
    addRecentFile(path);
    return true;
}

bool MainWindow::maybeSave()
{
    if (!m_doc->isModified())
        return true;
    const auto answer = QMessageBox::warning(
        this, tr("Unsaved changes"), tr("%1 has unsaved changes.").arg(m_doc->displayName()),
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
    if (answer == QMessageBox::Save)
        return save();
    return answer == QMessageBox::Discard;
}

void MainWindow::newDocument()
{
    if (maybeSave())
        m_doc->reset(defaultScenario());
}

void MainWindow::openDialog()
{
    if (!maybeSave())
        return;
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open scenario"), QString(), tr(kFileFilter));
    if (!path.isEmpty())
        openFile(path);
}

bool MainWindow::save()
{
    return m_doc->filePath().isEmpty() ? saveAs() : saveFile(m_doc->filePath());
}

bool MainWindow::saveAs()
{
    QString path = QFileDialog::getSaveFileName(
        this, tr("Save scenario"),
        m_doc->filePath().isEmpty() ? QStringLiteral("scenario.paralens.json") : m_doc->filePath(),
        tr(kFileFilter));
    if (path.isEmpty())
        return false;
    if (!path.endsWith(QLatin1String(".json")))
        path += QStringLiteral(".paralens.json");
    return saveFile(path);
}

void MainWindow::addRecentFile(const QString& path)
{
    QSettings settings;
    QStringList files = settings.value(QStringLiteral("recentFiles")).toStringList();
    const QString abs = QFileInfo(path).absoluteFilePath();
    files.removeAll(abs);
    files.prepend(abs);
    while (files.size() > kMaxRecent)
        files.removeLast();
    settings.setValue(QStringLiteral("recentFiles"), files);
    updateRecentMenu();
}

void MainWindow::updateRecentMenu()
{
    m_recentMenu->clear();
    const QStringList files = QSettings().value(QStringLiteral("recentFiles")).toStringList();
    for (int i = 0; i < files.size(); ++i) {
        const QString path = files.at(i);
        m_recentMenu
            ->addAction(QStringLiteral("&%1 %2").arg(i + 1).arg(QFileInfo(path).fileName()), this,
                        [this, path] {
                            if (maybeSave())
                                openFile(path);
                        })
            ->setToolTip(path);
    }
    m_recentMenu->setEnabled(!files.isEmpty());
}

void MainWindow::exportChartDialog(ChartView* view)
{
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export %1").arg(view->chartTitle()), view->chartId() + QStringLiteral(".png"),
        tr("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)"));
    if (path.isEmpty())
        return;
    QDialog dialog(this);
    dialog.setWindowTitle(tr("Export size"));
    auto* form = new QFormLayout(&dialog);
    auto* width = new QSpinBox(&dialog);
    auto* height = new QSpinBox(&dialog);
    auto* scale = new QDoubleSpinBox(&dialog);
    width->setRange(16, 20000);
    height->setRange(16, 20000);
    width->setValue(std::max(640, view->width()));
    height->setValue(std::max(400, view->height()));
    scale->setRange(0.25, 8);
    scale->setValue(2);
    scale->setEnabled(exportFormatFor(path) == ExportFormat::Png);
    width->setSuffix(tr(" px"));
    height->setSuffix(tr(" px"));
    scale->setToolTip(tr("Pixels per unit of size in the PNG (2 for high-DPI screens)"));
    form->addRow(tr("&Width"), width);
    form->addRow(tr("&Height"), height);
    form->addRow(tr("&Scale (PNG)"), scale);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    if (dialog.exec() != QDialog::Accepted)
        return;
    QString error;
    ExportOptions options{QSize(width->value(), height->value()), scale->value()};
    if (!exportChart(view, path, options, scenarioStamp(m_shown.scenario), &error))
        showError(tr("Export failed"), error);
}

void MainWindow::exportReportDialog()
{
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export report"), QStringLiteral("paralens-report.pdf"), tr("PDF (*.pdf)"));
    if (path.isEmpty())
        return;
    QString error;
    ReportContent content{m_shown, std::nullopt, charts()};
    if (m_compare->isPinned())
        content.baseline = m_compare->baseline();
    if (!exportReport(path, content, &error))
        showError(tr("Export failed"), error);
}

void MainWindow::exportTraceDialog()
{
    if (!m_shown.timeline) {
        showError(tr("Export failed"), tr("No schedule to export: %1").arg(m_shown.reason()));
        return;
    }
    const QString path = QFileDialog::getSaveFileName(this, tr("Export schedule trace"),
                                                      QStringLiteral("schedule.trace.json"),
                                                      tr("Chrome trace JSON (*.json)"));
    if (path.isEmpty())
        return;
    QString error;
    if (!exportTrace(*m_shown.timeline, path, &error))
        showError(tr("Export failed"), error);
}

void MainWindow::restoreSession(bool restoreScenario)
{
    QSettings settings;
    const QByteArray geometry = settings.value(QStringLiteral("window/geometry")).toByteArray();
    if (geometry.isEmpty() || !restoreGeometry(geometry)) {
        // First start: a size that leaves room around the window, centred.
        if (const QScreen* screen = this->screen()) {
            const QRect avail = screen->availableGeometry();
            resize(firstStartSize(avail.size()));
            applyFontScale(); // the font for that size first: it sets the least size
            // Four fifths of a small screen (1024 × 768) is less than the explorer needs:
            // then its least size, as far as the screen has room.
            // (720 pixels high: the headline's two rows of figures and the three chart rows).
            resize(size()
                       .expandedTo(minimumSizeHint())
                       .expandedTo(QSize(0, 720))
                       .boundedTo(avail.size()));
            move(avail.center() - rect().center());
        }
    }
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    fitToScreen(); // saved on a larger display than this one (a projector)
    const QString last = settings.value(QStringLiteral("session/scenario")).toString();
    if (!restoreScenario || last.isEmpty())
        return;
    try {
        m_doc->reset(parseScenario(last.toStdString(), "last session", m_presets));
    } catch (const std::exception&) {
        // A scenario from an older version that no longer parses: start from the default.
    }
}

void MainWindow::fitToScreen()
{
    const QScreen* screen = this->screen();
    if (!screen)
        return;
    const QRect avail = screen->availableGeometry();
    if (isMaximized() || isFullScreen()) {
        if (width() <= avail.width() && height() <= avail.height())
            return;
        showNormal();
    }
    // The frame (title bar, borders) counts: a window of the screen's size still overhangs.
    const QSize frame = frameGeometry().size() - geometry().size();
    const QSize room = avail.size() - frame;
    const QSize fitted = size().boundedTo(room).expandedTo(minimumSize());
    if (fitted != size())
        resize(fitted);
    QRect g = frameGeometry();
    g.moveLeft(
        std::clamp(g.left(), avail.left(), std::max(avail.left(), avail.right() - g.width() + 1)));
    g.moveTop(
        std::clamp(g.top(), avail.top(), std::max(avail.top(), avail.bottom() - g.height() + 1)));
    if (g.topLeft() != frameGeometry().topLeft())
        move(g.topLeft());
}

void MainWindow::saveSession()
{
    m_workshop->setPresentation(false); // save the working layout, not the projector one
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    settings.setValue(QStringLiteral("session/scenario"),
                      QString::fromStdString(scenarioToText(m_doc->scenario())));
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    if (!maybeSave()) {
        event->ignore();
        return;
    }
    saveSession();
    m_autosave->discard(); // a clean close: saved or deliberately discarded
    event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    const QList<QUrl> urls = event->mimeData()->urls();
    if (!urls.isEmpty() && urls.first().isLocalFile() &&
        urls.first().toLocalFile().endsWith(QLatin1String(".json")))
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    const QList<QUrl> urls = event->mimeData()->urls();
    if (urls.isEmpty())
        return;
    // A Hugging Face config.json changes the model (one undoable edit); a scenario replaces
    // the document.
    if (ModelImportAction::isModelConfig(urls.first().toLocalFile())) {
        event->acceptProposedAction();
        m_importModel->importFile(urls.first().toLocalFile());
        return;
    }
    if (!maybeSave())
        return;
    event->acceptProposedAction();
    openFile(urls.first().toLocalFile());
}

} // namespace paralens
