// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/tour_handout.h"

#include "app/evaluator.h"
#include "app/export.h"
#include "core/tour_caption.h"
#include "widgets/chartview.h"
#include "widgets/planmapview.h"
#include "widgets/topologyview.h"

#include <QDir>
#include <QEventLoop>
#include <QImage>
#include <QPageLayout>
#include <QPageSize>
#include <QPdfWriter>
#include <QSaveFile>
#include <qcustomplot.h>

#include <memory>

namespace paralens {
namespace {

constexpr int kDpi = 96;
const QSize kChartSize(1200, 800);

QString stepPrefix(std::size_t i)
{
    return QStringLiteral("step-%1").arg(i + 1, 2, 10, QChar('0'));
}

/// A4 landscape with 12 mm margins, in 96-dpi pixels: the PDF's pages and the page images.
QPageLayout pageLayout()
{
    return QPageLayout(QPageSize(QPageSize::A4), QPageLayout::Landscape, QMarginsF(12, 12, 12, 12),
                       QPageLayout::Millimeter);
}

/// The plan map (docs/plan-map.md): the best plan of each TP × PP of the step's problem as a
/// heat map, the step's plan outlined, searched here and now (seconds for 64 GPUs).
std::unique_ptr<ChartView> planMap(const Scenario& s, unsigned threads, QString* error)
{
    auto view = std::make_unique<PlanMapView>();
    view->setThreads(threads);
    view->resize(kChartSize);
    QEventLoop loop;
    QObject::connect(view.get(), &PlanMapView::mapReady, &loop, &QEventLoop::quit);
    view->setScenario(s, true);
    if (view->isComputing())
        loop.exec();
    if (view->isInvalid() || view->map().cells.empty()) {
        *error =
            QObject::tr("the plan map cannot be drawn: %1")
                .arg(view->isInvalid() ? view->invalidReason() : QObject::tr("no TP × PP cell"));
        return nullptr;
    }
    return view;
}

std::unique_ptr<ChartView> chartFor(const QString& id, const Evaluation& evaluation,
                                    unsigned threads, QString* error)
{
    if (id == QLatin1String("plan-map"))
        return planMap(evaluation.scenario, threads, error);
    auto view = makeChart(id, evaluation, error);
    if (!view)
        return view;
    view->resize(kChartSize);
    // A lesson about CP or EP wants those groups in colour; TP groups otherwise.
    if (auto* topology = qobject_cast<TopologyView*>(view.get())) {
        const ParallelPlan& p = evaluation.scenario.parallel;
        topology->setColorBy(p.cp > 1   ? TopologyView::ByCpChunk
                             : p.ep > 1 ? TopologyView::ByEpShard
                                        : TopologyView::ByTpGroup);
    }
    return view;
}

struct Fonts
{
    QFont small, title, caption, figureName, figureValue;
};

Fonts fonts(const QFont& base)
{
    Fonts f{base, base, base, base, base};
    f.small.setPointSizeF(9);
    f.title.setPointSizeF(20);
    f.title.setBold(true);
    f.caption.setPointSizeF(12.5);
    f.figureName.setPointSizeF(9);
    f.figureValue.setPointSizeF(14);
    f.figureValue.setBold(true);
    return f;
}

/// Draws `text` wrapped in the width of `area` from y down; returns the y under it.
int drawWrapped(QPainter& p, const QFont& font, const QRect& area, int y, const QString& text)
{
    p.setFont(font);
    const QRect box(area.left(), y, area.width(), area.bottom() - y);
    const QRect used = p.boundingRect(box, Qt::AlignLeft | Qt::TextWordWrap, text);
    p.drawText(box, Qt::AlignLeft | Qt::TextWordWrap, text);
    return used.bottom() + 1;
}

void titlePage(QPainter& p, const Fonts& f, const QRect& area, const Tour& tour)
{
    p.setPen(Qt::black);
    int y = drawWrapped(p, f.title, area, area.top(), QString::fromStdString(tour.title));
    if (!tour.description.empty())
        y = drawWrapped(p, f.caption, area, y + 12, QString::fromStdString(tour.description));
    y += 18;
    for (std::size_t i = 0; i < tour.steps.size(); ++i)
        y = drawWrapped(
            p, f.caption, area, y + 4,
            QStringLiteral("%1. %2").arg(i + 1).arg(QString::fromStdString(tour.steps[i].title)));
    p.setPen(Qt::darkGray);
    drawWrapped(p, f.small, area, area.bottom() - 20,
                QObject::tr("Figures are the ParaLens model's (datasheet constants, no "
                            "calibration), computed when this handout was written."));
}

/// The row of headline figures under the caption; returns the y under it.
int figureRow(QPainter& p, const Fonts& f, const QRect& area, int y, const Scenario& s,
              const Estimate& e)
{
    const tour::StepFigures step{&s, &e};
    auto text = [&](const char* name) {
        return QString::fromStdString(tour::figureText(name, step));
    };
    const QList<QPair<QString, QString>> cells{
        {QObject::tr("Peak per GPU, of %1").arg(text("capacity_gib")), text("peak_gib")},
        {QObject::tr("Fits"), e.fits ? QObject::tr("yes") : QObject::tr("no")},
        {QObject::tr("Step time"), text("step_s")},
        {QObject::tr("Tokens/s"), text("tokens_per_s")},
        {QObject::tr("MFU"), text("mfu")},
        {QObject::tr("Bubble"), text("bubble")},
    };
    const int nameH = QFontMetrics(f.figureName, p.device()).height();
    const int valueH = QFontMetrics(f.figureValue, p.device()).height();
    // The first cell (peak of capacity) gets one and a half shares of the width.
    const int share = area.width() * 2 / (2 * static_cast<int>(cells.size()) + 1);
    int x = area.left();
    for (int c = 0; c < cells.size(); ++c) {
        const int w = c == 0 ? share * 3 / 2 : share;
        const QRect cell(x, y, w - 8, nameH + valueH + 10);
        x += w;
        p.fillRect(cell, QColor(0xf2, 0xf2, 0xf2));
        p.setPen(Qt::darkGray);
        p.setFont(f.figureName);
        p.drawText(cell.adjusted(6, 4, -4, 0), Qt::AlignLeft | Qt::AlignTop, cells[c].first);
        p.setPen(c == 1 && !e.fits ? QColor(0xb0, 0x1c, 0x1c) : QColor(Qt::black));
        p.setFont(f.figureValue);
        p.drawText(cell.adjusted(6, nameH + 4, -4, 0), Qt::AlignLeft | Qt::AlignTop,
                   cells[c].second);
    }
    return y + nameH + valueH + 18;
}

/// What the pages show: the tour, its results and each step's emphasised chart.
struct Pages
{
    const Tour& tour;
    const std::vector<TourStepResult>& results;
    std::vector<std::unique_ptr<ChartView>> charts; ///< per step, its view's
    int count() const { return static_cast<int>(tour.steps.size()) + 1; }
};

/// Page `page` (0: the title page, i: step i) in `area` (the page's printable rectangle, in
/// 96-dpi pixels from its top-left): the one drawing of the PDF page and of its image.
void paintPage(QCPPainter& painter, const QRect& area, const Pages& pages, int page)
{
    // From the application's font, not the painter's: that is whatever the last page set.
    const Fonts f = fonts(QFont());
    const Tour& tour = pages.tour;
    if (page == 0) {
        titlePage(painter, f, area, tour);
        return;
    }
    const auto i = static_cast<std::size_t>(page - 1);
    const TourStep& step = tour.steps[i];
    const TourStepResult& r = pages.results[i];
    painter.setPen(Qt::darkGray);
    int y = drawWrapped(painter, f.small, area, area.top(),
                        QObject::tr("%1 · step %2 of %3")
                            .arg(QString::fromStdString(tour.title))
                            .arg(page)
                            .arg(tour.steps.size()));
    painter.setPen(Qt::black);
    y = drawWrapped(painter, f.title, area, y + 4, QString::fromStdString(step.title));
    y = drawWrapped(painter, f.caption, area, y + 8, QString::fromStdString(r.caption));
    y = figureRow(painter, f, area, y + 12, step.scenario, r.estimate);
    // The chart keeps its 3:2 shape in what is left of the page.
    QRect target(area.left(), y, area.width(), area.bottom() + 1 - y);
    if (target.width() > target.height() * 3 / 2)
        target.setWidth(target.height() * 3 / 2);
    target.moveLeft(area.left() + (area.width() - target.width()) / 2);
    const QPalette palette; // printed: the default light palette
    paintChart(pages.charts[i].get(), &painter, target, scenarioStamp(step.scenario), palette);
}

bool writePdf(const Pages& pages, const QString& path, QString* error)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        *error = QObject::tr("Cannot write %1: %2").arg(path, file.errorString());
        return false;
    }
    QPdfWriter pdf(&file);
    pdf.setResolution(kDpi);
    pdf.setTitle(QString::fromStdString(pages.tour.title));
    pdf.setCreator(QStringLiteral("ParaLens " PARALENS_VERSION));
    pdf.setPageLayout(pageLayout());
    QCPPainter painter;
    if (!painter.begin(&pdf)) {
        *error = QObject::tr("Cannot write %1").arg(path);
        return false;
    }
    painter.setMode(QCPPainter::pmVectorized);
    painter.setMode(QCPPainter::pmNoCaching);
    const QRect area(QPoint(0, 0), pdf.pageLayout().paintRectPixels(kDpi).size());
    for (int page = 0; page < pages.count(); ++page) {
        if (page > 0)
            pdf.newPage();
        paintPage(painter, area, pages, page);
    }
    painter.end();
    if (!file.commit()) {
        *error = QObject::tr("Cannot write %1: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

QString pageImageName(int page)
{
    return page == 0 ? QStringLiteral("handout-title.png")
                     : QStringLiteral("handout-step-%1.png").arg(page, 2, 10, QChar('0'));
}

/// The page as the PDF has it (white paper, the margins included), at twice 96 dpi.
bool writePageImage(const Pages& pages, int page, const QString& path, QString* error)
{
    constexpr double kScale = 2;
    const QPageLayout layout = pageLayout();
    const QRect full = layout.fullRectPixels(kDpi);
    const QRect paint = layout.paintRectPixels(kDpi);
    QImage image(full.size() * kScale, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    {
        // As the chart PNGs (app/export.cpp): the screen's logical dpi, sharper by the
        // painter's scale, so text keeps the metrics the layout measured.
        QCPPainter painter(&image);
        painter.setRenderHint(QPainter::Antialiasing);
        painter.setRenderHint(QPainter::TextAntialiasing);
        painter.setMode(QCPPainter::pmNoCaching);
        painter.setMode(QCPPainter::pmNonCosmetic);
        painter.scale(kScale, kScale);
        painter.translate(paint.topLeft());
        paintPage(painter, QRect(QPoint(0, 0), paint.size()), pages, page);
    }
    constexpr double kDotsPerMeter = kDpi / 0.0254;
    image.setDotsPerMeterX(qRound(kDotsPerMeter * kScale));
    image.setDotsPerMeterY(qRound(kDotsPerMeter * kScale));
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || !image.save(&file, "PNG") || !file.commit()) {
        *error = QObject::tr("Cannot write %1: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

} // namespace

bool exportTourHandout(const Tour& tour, const std::vector<TourStepResult>& results,
                       const QString& dir, QStringList* written, QString* error,
                       const TourHandoutOptions& options)
{
    QString ignored;
    if (!error)
        error = &ignored;
    if (!QDir().mkpath(dir)) {
        *error = QObject::tr("Cannot create the folder %1").arg(dir);
        return false;
    }
    const QDir out(dir);
    ExportOptions png;
    png.size = kChartSize;
    Pages pages{tour, results, {}};
    for (std::size_t i = 0; i < tour.steps.size(); ++i) {
        const TourStep& step = tour.steps[i];
        const Evaluation evaluation = Evaluator::evaluateScenario(step.scenario);
        const QString shown = QString::fromStdString(std::string(toString(step.view)));
        QStringList ids = chartIds();
        if (step.view == TourView::PlanMap)
            ids << shown;
        for (const QString& id : ids) {
            auto chart = chartFor(id, evaluation, options.planMapThreads, error);
            if (!chart) {
                *error = QObject::tr("%1: step %2 ('%3'): %4")
                             .arg(QString::fromStdString(tour.source))
                             .arg(i + 1)
                             .arg(QString::fromStdString(step.title), *error);
                return false;
            }
            const QString path = out.filePath(stepPrefix(i) + "-" + id + ".png");
            if (!exportChart(chart.get(), path, png, scenarioStamp(step.scenario), error))
                return false;
            if (written)
                *written << path;
            if (id == shown)
                pages.charts.push_back(std::move(chart)); // drawn again on the step's page
        }
    }
    const QString pdf = out.filePath(QStringLiteral("handout.pdf"));
    if (!writePdf(pages, pdf, error))
        return false;
    if (written)
        *written << pdf;
    if (options.pageImages)
        for (int page = 0; page < pages.count(); ++page) {
            const QString path = out.filePath(pageImageName(page));
            if (!writePageImage(pages, page, path, error))
                return false;
            if (written)
                *written << path;
        }
    return true;
}

} // namespace paralens
