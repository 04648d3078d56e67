// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/export.h"
#include "app/evaluator.h"
#include "core/trace.h"
#include "widgets/breakdownview.h"
#include "widgets/chartview.h"
#include "widgets/ganttview.h"
#include "widgets/memoryview.h"
#include "widgets/qt_text.h"
#include "widgets/topologyview.h"

#include <QFileInfo>
#include <QImage>
#include <QPageSize>
#include <QPdfWriter>
#include <QPicture>
#include <QSaveFile>
#include <QSvgGenerator>
#include <qcustomplot.h>

namespace paralens {
namespace {

constexpr int kDpi = 96;
constexpr double kDotsPerMeter = kDpi / 0.0254;

} // namespace

void paintChart(ChartView* view, QCPPainter* painter, const QRect& target, const QString& stamp,
                const QPalette& palette)
{
    QCustomPlot* plot = view->plot();
    QFont stampFont = plot->font();
    stampFont.setPointSizeF(stampFont.pointSizeF() * 0.85);
    const int stampHeight = stamp.isEmpty() ? 0 : QFontMetrics(stampFont).height() + 8;
    const QSize plotSize(target.width(), target.height() - stampHeight);
    view->setExporting(true);
    view->adaptLayout(plotSize);
    {
        // A first pass lays the plot out at the export size, so views that fit their ranges
        // to the area (topology) settle before the real drawing.
        QPicture scratch;
        QCPPainter scratchPainter(&scratch);
        plot->toPainter(&scratchPainter, plotSize.width(), plotSize.height());
    }
    painter->save();
    painter->fillRect(target, palette.color(QPalette::Base));
    painter->translate(target.topLeft());
    plot->toPainter(painter, plotSize.width(), plotSize.height());
    painter->restore();
    view->setExporting(false);
    plot->replot(QCustomPlot::rpQueuedReplot); // back to the on-screen layout
    if (stampHeight > 0) {
        painter->save();
        painter->setFont(stampFont);
        painter->setPen(palette.color(QPalette::Text));
        const QRect line(target.left() + 8, target.bottom() - stampHeight + 2, target.width() - 16,
                         stampHeight - 4);
        const QString version = QStringLiteral("ParaLens " PARALENS_VERSION);
        const int versionWidth = QFontMetrics(stampFont).horizontalAdvance(version) + 16;
        painter->drawText(
            line.adjusted(0, 0, -versionWidth, 0), Qt::AlignLeft | Qt::AlignVCenter,
            QFontMetrics(stampFont).elidedText(stamp, Qt::ElideRight, line.width() - versionWidth));
        painter->drawText(line, Qt::AlignRight | Qt::AlignVCenter, version);
        painter->restore();
    }
}

namespace {

void vectorMode(QCPPainter& painter)
{
    painter.setMode(QCPPainter::pmVectorized);
    painter.setMode(QCPPainter::pmNoCaching);
}

} // namespace

std::optional<ExportFormat> exportFormatFor(const QString& path)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("png"))
        return ExportFormat::Png;
    if (suffix == QLatin1String("svg"))
        return ExportFormat::Svg;
    if (suffix == QLatin1String("pdf"))
        return ExportFormat::Pdf;
    return std::nullopt;
}

QString scenarioStamp(const Scenario& s)
{
    const ParallelPlan& p = s.parallel;
    const QString model = QString::fromStdString(s.model_id.empty() ? s.model.name : s.model_id);
    const QString hw =
        QString::fromStdString(s.hardware_id.empty() ? s.cluster.name : s.hardware_id);
    QString plan =
        QStringLiteral("TP %1 · PP %2 · DP %3 · CP %4").arg(p.tp).arg(p.pp).arg(p.dp).arg(p.cp);
    if (s.model.isMoe())
        plan += QStringLiteral(" · EP %1").arg(p.ep);
    plan += QStringLiteral(" · %1").arg(qText(toString(p.schedule)));
    if (p.virtual_stages > 1)
        plan += QStringLiteral(" v%1").arg(p.virtual_stages);
    if (p.zero > 0)
        plan += QStringLiteral(" · ZeRO-%1").arg(p.zero);
    if (p.sequence_parallel)
        plan += QStringLiteral(" · SP");
    QString recompute = qText(toString(s.training.recompute));
    if (s.training.recomputedPerChunk() > 0)
        recompute += QStringLiteral(" (%1 layers a chunk)").arg(s.training.recompute_num_layers);
    return QStringLiteral("%1 · %2 × %3 · %4 · s %5 · b %6 · B %7 · recompute %8")
        .arg(model)
        .arg(s.gpus)
        .arg(hw, plan)
        .arg(s.training.seq_len)
        .arg(s.training.micro_batch)
        .arg(s.training.global_batch)
        .arg(recompute);
}

bool exportChart(ChartView* view, const QString& path, const ExportOptions& options,
                 const QString& stamp, QString* error)
{
    auto fail = [&](const QString& message) {
        if (error)
            *error = message;
        return false;
    };
    const auto format = exportFormatFor(path);
    if (!format)
        return fail(QObject::tr("%1: the file name must end in .png, .svg or .pdf").arg(path));
    const QSize size = options.size;
    if (size.width() < 16 || size.height() < 16 || size.width() > 20000 || size.height() > 20000)
        return fail(QObject::tr("size %1x%2 is outside 16..20000 pixels")
                        .arg(size.width())
                        .arg(size.height()));
    if (!(options.scale >= 0.25 && options.scale <= 8))
        return fail(QObject::tr("scale %1 is outside 0.25..8").arg(options.scale));
    const QRect target(QPoint(0, 0), size);

    switch (*format) {
    case ExportFormat::Png: {
        // The image keeps the screen's logical dpi while it is painted: QCustomPlot lays
        // text out with screen font metrics, so text drawn at a higher dpi would outgrow its
        // layout. The painter's scale alone makes it sharper (as QCustomPlot::toPixmap does).
        QImage image(
            QSize(qRound(size.width() * options.scale), qRound(size.height() * options.scale)),
            QImage::Format_ARGB32_Premultiplied);
        image.fill(view->palette().color(QPalette::Base));
        {
            QCPPainter painter(&image);
            painter.setRenderHint(QPainter::Antialiasing);
            painter.setMode(QCPPainter::pmNoCaching);
            if (options.scale > 1.0)
                painter.setMode(QCPPainter::pmNonCosmetic); // hairlines grow with the scale
            painter.scale(options.scale, options.scale);
            paintChart(view, &painter, target, stamp, view->palette());
        }
        // Recorded resolution: the same physical size at every scale.
        image.setDotsPerMeterX(qRound(kDotsPerMeter * options.scale));
        image.setDotsPerMeterY(qRound(kDotsPerMeter * options.scale));
        if (!image.save(path, "PNG"))
            return fail(QObject::tr("Cannot write %1").arg(path));
        return true;
    }
    case ExportFormat::Svg: {
        QSvgGenerator svg;
        svg.setFileName(path);
        svg.setSize(size);
        svg.setViewBox(target);
        svg.setResolution(kDpi);
        svg.setTitle(view->chartTitle());
        svg.setDescription(stamp);
        QCPPainter painter;
        if (!painter.begin(&svg))
            return fail(QObject::tr("Cannot write %1").arg(path));
        vectorMode(painter);
        paintChart(view, &painter, target, stamp, view->palette());
        painter.end();
        break;
    }
    case ExportFormat::Pdf: {
        QPdfWriter pdf(path);
        pdf.setResolution(kDpi);
        pdf.setTitle(view->chartTitle());
        pdf.setCreator(QStringLiteral("ParaLens " PARALENS_VERSION));
        pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
        pdf.setPageSize(QPageSize(QSizeF(size) * 72.0 / kDpi, QPageSize::Point, QString(),
                                  QPageSize::ExactMatch));
        QCPPainter painter;
        if (!painter.begin(&pdf))
            return fail(QObject::tr("Cannot write %1").arg(path));
        vectorMode(painter);
        paintChart(view, &painter, target, stamp, view->palette());
        painter.end();
        break;
    }
    }
    if (!QFileInfo(path).isFile() || QFileInfo(path).size() == 0)
        return fail(QObject::tr("Cannot write %1").arg(path));
    return true;
}

bool exportTrace(const PipelineTimeline& timeline, const QString& path, QString* error)
{
    auto fail = [&](const QString& message) {
        if (error)
            *error = message;
        return false;
    };
    if (!timeline.simulated)
        return fail(QObject::tr("The schedule has more ops than the simulator runs; no trace"));
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return fail(QObject::tr("Cannot write %1: %2").arg(path, file.errorString()));
    const std::string text = chromeTrace(timeline.schedule, timeline.result).dump();
    file.write(text.data(), static_cast<qint64>(text.size()));
    if (!file.commit())
        return fail(QObject::tr("Cannot write %1: %2").arg(path, file.errorString()));
    return true;
}

QStringList chartIds()
{
    return {QStringLiteral("memory"), QStringLiteral("breakdown"), QStringLiteral("topology"),
            QStringLiteral("gantt")};
}

std::unique_ptr<ChartView> makeChart(const QString& id, const Evaluation& evaluation,
                                     QString* error)
{
    std::unique_ptr<ChartView> view;
    if (id == QLatin1String("memory")) {
        auto v = std::make_unique<MemoryView>();
        v->setEstimate(evaluation.estimate, evaluation.scenario);
        view = std::move(v);
    } else if (id == QLatin1String("breakdown")) {
        auto v = std::make_unique<BreakdownView>();
        v->setEstimate(evaluation.estimate);
        view = std::move(v);
    } else if (id == QLatin1String("topology")) {
        auto v = std::make_unique<TopologyView>();
        v->setScenario(evaluation.scenario);
        view = std::move(v);
    } else if (id == QLatin1String("gantt")) {
        auto v = std::make_unique<GanttView>();
        v->resize(1200, 800);
        v->setTimeline(evaluation.timeline);
        view = std::move(v);
    } else {
        if (error)
            *error = QObject::tr("--chart must be one of memory, breakdown, topology, gantt "
                                 "(got '%1')")
                         .arg(id);
        return nullptr;
    }
    if (!evaluation.ok())
        view->setInvalid(evaluation.reason());
    return view;
}

} // namespace paralens
