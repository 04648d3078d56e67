// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/calibrationview.h"
#include "core/spec_io.h"
#include "widgets/palette.h"
#include "widgets/qt_text.h"
#include "widgets/units.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QToolTip>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace paralens {
namespace {

/// Log ticks in powers of two, labelled in binary byte units.
class ByteTicker : public QCPAxisTickerLog
{
public:
    ByteTicker()
    {
        setLogBase(2);
        setSubTickCount(1);
        setTickCount(6);
    }

protected:
    QString getTickLabel(double tick, const QLocale&, QChar, int) override
    {
        return units::sizeBytes(tick);
    }
};

QString curveLabel(const CollectiveCurve& c)
{
    QString s = qText(toString(c.collective)) + CalibrationView::tr(" · %1 GPUs").arg(c.ranks);
    s += c.span == Span::ScaleUp ? CalibrationView::tr(" · intra-node")
                                 : CalibrationView::tr(" · inter-node (%1 nodes)").arg(c.nodes);
    if (!c.dtype.empty())
        s += QStringLiteral(" · ") + QString::fromStdString(c.dtype);
    // Two tables of one log can measure the same group (e.g. NCCL_ALGO variants): name the
    // table so they can be told apart.
    const QString source = QString::fromStdString(c.source).section(QLatin1Char('/'), -1);
    if (!source.isEmpty())
        s += QStringLiteral(" — ") + source;
    return s;
}

QVector<double> vec(const std::vector<double>& v)
{
    return QVector<double>(v.begin(), v.end());
}

} // namespace

CalibrationView::CalibrationView(QWidget* parent) : ChartView(parent)
{
    setObjectName(QStringLiteral("calibrationView"));
    m_curveCombo = new QComboBox(this);
    m_curveCombo->setObjectName(QStringLiteral("calibrationCurveCombo"));
    m_curveCombo->setAccessibleName(tr("Measured curve"));
    m_curveCombo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_curveCombo->setMinimumContentsLength(24); // long names elide: the dock fits 1024 px
    auto* pick = new QLabel(tr("&Curve:"), this);
    pick->setBuddy(m_curveCombo);
    m_fitLabel = new QLabel(this);
    m_fitLabel->setObjectName(QStringLiteral("calibrationFitLabel"));
    m_fitLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_fitLabel->setWordWrap(true);

    // One plot, two axis rects: bandwidth above, residuals below, left edges aligned.
    QCustomPlot* p = plot();
    p->setObjectName(QStringLiteral("calibrationPlot"));
    p->setAccessibleName(tr("Bus bandwidth against message size, and fit residuals"));
    p->setAttribute(Qt::WA_OpaquePaintEvent, false);
    p->setMinimumHeight(340);
    p->setMouseTracking(true);
    connect(p, &QCustomPlot::mouseMove, this, &CalibrationView::hover);

    QCPAxisRect* top = p->axisRect();
    m_residualRect = new QCPAxisRect(p);
    p->plotLayout()->addElement(1, 0, m_residualRect);
    p->plotLayout()->setRowStretchFactors({3, 1});
    auto* group = new QCPMarginGroup(p);
    top->setMarginGroup(QCP::msLeft | QCP::msRight, group);
    m_residualRect->setMarginGroup(QCP::msLeft | QCP::msRight, group);
    for (auto* rect : {top, m_residualRect}) {
        rect->axis(QCPAxis::atBottom)->setScaleType(QCPAxis::stLogarithmic);
        rect->axis(QCPAxis::atBottom)->setTicker(QSharedPointer<QCPAxisTicker>(new ByteTicker));
    }
    top->axis(QCPAxis::atBottom)->setLabel(tr("message size"));
    m_residualRect->axis(QCPAxis::atBottom)->setLabel(tr("message size"));
    QCPAxis* y = top->axis(QCPAxis::atLeft);
    y->setScaleType(QCPAxis::stLogarithmic);
    auto yTicker = QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog);
    yTicker->setSubTickCount(8);
    y->setTicker(yTicker);
    y->setNumberFormat(QStringLiteral("g"));
    y->setLabel(tr("bus bandwidth (GB/s)"));
    QCPAxis* ry = m_residualRect->axis(QCPAxis::atLeft);
    ry->setLabel(tr("time: fit − measured (%)"));
    ry->ticker()->setTickCount(4);

    m_datasheet = p->addGraph();
    m_datasheet->setName(tr("datasheet model (before calibration)"));
    m_fitted = p->addGraph();
    m_fitted->setName(tr("fitted α-β (after calibration)"));
    m_measured = p->addGraph();
    m_measured->setName(tr("measured"));
    m_measured->setLineStyle(QCPGraph::lsNone);
    m_residuals = p->addGraph(m_residualRect->axis(QCPAxis::atBottom), ry);
    m_residuals->setName(tr("residual"));
    m_residuals->setLineStyle(QCPGraph::lsNone);
    m_residuals->removeFromLegend();
    m_zeroLine = new QCPItemStraightLine(p);
    m_zeroLine->setClipAxisRect(m_residualRect);
    for (auto* pos : {m_zeroLine->point1, m_zeroLine->point2})
        pos->setAxes(m_residualRect->axis(QCPAxis::atBottom), ry);
    m_zeroLine->point1->setCoords(1, 0);
    m_zeroLine->point2->setCoords(2, 0);
    m_zeroLine->setSelectable(false);
    p->legend->setVisible(true);
    top->insetLayout()->setInsetAlignment(0, Qt::AlignRight | Qt::AlignBottom);

    // The residual panel shares the size axis with the bandwidth plot.
    connect(top->axis(QCPAxis::atBottom), qOverload<const QCPRange&>(&QCPAxis::rangeChanged),
            m_residualRect->axis(QCPAxis::atBottom),
            qOverload<const QCPRange&>(&QCPAxis::setRange));

    auto* bar = new QHBoxLayout;
    bar->addWidget(pick);
    bar->addWidget(m_curveCombo);
    bar->addSpacing(12);
    bar->addWidget(m_fitLabel, 1);
    layoutBox()->insertLayout(0, bar);

    connect(m_curveCombo, &QComboBox::currentIndexChanged, this, [this](int row) {
        const int index = row < 0 ? -1 : m_curveCombo->itemData(row).toInt();
        if (index == m_current)
            return;
        m_current = index;
        rebuild();
        emit currentCurveChanged(m_current);
    });
    applyColors();
    rebuild();
}

CalibrationView::~CalibrationView() = default;

QString CalibrationView::chartTitle() const
{
    return tr("Calibration: bus bandwidth and fit residuals");
}

void CalibrationView::setProfile(const CalibrationProfile& profile)
{
    const CollectiveCurve* old = nullptr;
    CollectiveCurve keep;
    if (m_current >= 0 && m_current < curveCount()) {
        keep = m_profile.collectives[size_t(m_current)];
        old = &keep;
    }
    m_profile = profile;
    int select = curveCount() > 0 ? 0 : -1;
    if (old)
        for (int i = 0; i < curveCount(); ++i) {
            const auto& c = m_profile.collectives[size_t(i)];
            if (c.collective == old->collective && c.ranks == old->ranks && c.span == old->span &&
                c.dtype == old->dtype) {
                select = i;
                break;
            }
        }
    m_current = select;
    rebuildCombo();
    rebuild();
    emit currentCurveChanged(m_current);
}

void CalibrationView::clearProfile()
{
    setProfile(CalibrationProfile{});
}

void CalibrationView::setCluster(const ClusterSpec& cluster)
{
    if (m_cluster && *m_cluster == cluster)
        return; // every slider tick passes the cluster; the curves change only with it
    m_cluster = cluster;
    rebuild();
}

void CalibrationView::clearCluster()
{
    m_cluster.reset();
    rebuild();
}

int CalibrationView::curveCount() const
{
    return int(m_profile.collectives.size());
}

int CalibrationView::currentCurve() const
{
    return m_current;
}

void CalibrationView::setCurrentCurve(int index)
{
    const int row = m_curveCombo->findData(index);
    if (row >= 0)
        m_curveCombo->setCurrentIndex(row);
}

void CalibrationView::rebuildCombo()
{
    const QSignalBlocker block(m_curveCombo);
    m_curveCombo->clear();
    for (int i = 0; i < curveCount(); ++i) {
        const auto& c = m_profile.collectives[size_t(i)];
        m_curveCombo->addItem(curveLabel(c), i);
        m_curveCombo->setItemData(m_curveCombo->count() - 1, QString::fromStdString(c.source),
                                  Qt::ToolTipRole);
    }
    m_curveCombo->setCurrentIndex(m_curveCombo->findData(m_current));
    m_curveCombo->setEnabled(curveCount() > 0);
}

void CalibrationView::rebuild()
{
    const bool have = m_current >= 0 && m_current < curveCount();
    m_chart = have ? calibrationChart(m_profile.collectives[size_t(m_current)],
                                      m_cluster ? &*m_cluster : nullptr)
                   : CalibrationChart{};
    m_measured->setData(vec(m_chart.size_bytes), vec(m_chart.measured_busbw_gbps), true);
    m_datasheet->setData(m_chart.datasheet_busbw_gbps.empty() ? QVector<double>{}
                                                              : vec(m_chart.model_size_bytes),
                         vec(m_chart.datasheet_busbw_gbps), true);
    m_fitted->setData(m_chart.fitted_busbw_gbps.empty() ? QVector<double>{}
                                                        : vec(m_chart.model_size_bytes),
                      vec(m_chart.fitted_busbw_gbps), true);
    m_residuals->setData(m_chart.residual_pct.empty() ? QVector<double>{} : vec(m_chart.size_bytes),
                         vec(m_chart.residual_pct), true);
    m_datasheet->setVisible(!m_chart.datasheet_busbw_gbps.empty());
    m_fitted->setVisible(!m_chart.fitted_busbw_gbps.empty());
    // Hidden graphs leave the legend too.
    for (auto* g : {m_datasheet, m_fitted})
        if (g->visible())
            g->addToLegend();
        else
            g->removeFromLegend();
    plot()->legend->setVisible(have);
    if (have)
        markValid();
    else
        showMessage(curveCount() == 0 && m_profile.gemm.empty()
                        ? tr("No calibration profile.\nImport an nccl-tests log or load a "
                             "profile.")
                        : tr("This profile has no collective measurements."));

    if (have) {
        const auto& c = m_profile.collectives[size_t(m_current)];
        QString text;
        if (c.fit.valid)
            text = tr("fit: α = %1 µs, B<sub>bus</sub> = %2 GB/s; residual RMS %3 %, max %4 % "
                      "(%5 points)")
                       .arg(c.fit.alpha_seconds * 1e6, 0, 'f', 1)
                       .arg(c.fit.busbw_gbps, 0, 'f', 1)
                       .arg(c.fit.rms_residual_pct, 0, 'f', 2)
                       .arg(c.fit.max_abs_residual_pct, 0, 'f', 2)
                       .arg(c.fit.points_used);
        else
            text = tr("no valid fit (no point with a positive size and time)");
        if (!m_cluster)
            text += tr("<br>no cluster: datasheet curve hidden");
        m_fitLabel->setText(text);
    } else {
        m_fitLabel->clear();
    }

    // Ranges: every drawn series, with a margin in log space.
    double xlo = 0, xhi = 0, ylo = 0, yhi = 0;
    bool first = true;
    auto take = [&](const std::vector<double>& xs, const std::vector<double>& ys) {
        for (size_t i = 0; i < xs.size() && i < ys.size(); ++i) {
            if (!(xs[i] > 0) || !(ys[i] > 0))
                continue;
            if (first) {
                xlo = xhi = xs[i];
                ylo = yhi = ys[i];
                first = false;
            }
            xlo = std::min(xlo, xs[i]);
            xhi = std::max(xhi, xs[i]);
            ylo = std::min(ylo, ys[i]);
            yhi = std::max(yhi, ys[i]);
        }
    };
    take(m_chart.size_bytes, m_chart.measured_busbw_gbps);
    take(m_chart.model_size_bytes, m_chart.datasheet_busbw_gbps);
    take(m_chart.model_size_bytes, m_chart.fitted_busbw_gbps);
    if (first) {
        xlo = units::kKiB, xhi = units::kGiB, ylo = 1, yhi = 1000;
    }
    plot()->xAxis->setRange(xlo / 1.4, xhi * 1.4);
    plot()->yAxis->setRange(ylo / 1.2, yhi * 1.25);
    double r = 1.0;
    for (double v : m_chart.residual_pct)
        r = std::max(r, std::abs(v));
    m_residualRect->axis(QCPAxis::atLeft)->setRange(-1.25 * r, 1.25 * r);
    m_residualRect->axis(QCPAxis::atBottom)->setRange(plot()->xAxis->range());
    plot()->replot();
}

void CalibrationView::applyColors()
{
    const QPalette pal = palette();
    const QColor text = pal.color(QPalette::WindowText);
    const QColor window = pal.color(QPalette::Window);
    // Okabe-Ito blue is too dark on a dark background: sky blue replaces it there.
    const QColor measured(palette::isDark(pal) ? palette::kSkyBlue : palette::kBlue);
    QColor grid = text;
    grid.setAlpha(40);
    for (auto* rect : {plot()->axisRect(), m_residualRect}) {
        for (auto* axis : {rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft)}) {
            axis->setBasePen(QPen(text));
            axis->setTickPen(QPen(text));
            axis->setSubTickPen(QPen(text));
            axis->setTickLabelColor(text);
            axis->setLabelColor(text);
            axis->grid()->setPen(QPen(grid, 0, Qt::DotLine));
            axis->grid()->setZeroLinePen(Qt::NoPen);
        }
    }
    // The plot sits on the panel's window colour, not on the base colour of the other charts.
    plot()->setBackground(Qt::transparent);
    plot()->legend->setBrush(window);
    plot()->legend->setBorderPen(QPen(grid));
    plot()->legend->setTextColor(text);

    QColor fill = measured;
    fill.setAlpha(70);
    m_measured->setPen(QPen(measured, 1.5));
    m_measured->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(measured, 1.5), QBrush(fill), 8));
    m_fitted->setPen(QPen(QColor(palette::kVermillion), 2));
    m_datasheet->setPen(QPen(QColor(palette::kBluishGreen), 2, Qt::DashLine));
    m_residuals->setPen(QPen(measured, 1.5));
    m_residuals->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssDiamond, QPen(measured, 1.5), QBrush(fill), 8));
    m_zeroLine->setPen(QPen(QColor(palette::kVermillion), 1.5));
}

void CalibrationView::adaptLayoutTo(const QSize& size)
{
    // As many size ticks as labels fit side by side ("512 KiB" wide, a label's width apart),
    // so narrow plots do not run "16 MiB64 MiB" together.
    const QFontMetrics fm(plot()->xAxis->tickLabelFont());
    const int label = fm.horizontalAdvance(QStringLiteral("512 KiB")) * 2;
    const int length = std::max(1, size.width() - 120);
    const int ticks = std::clamp(length / label, 2, 6);
    for (auto* rect : {plot()->axisRect(), m_residualRect})
        rect->axis(QCPAxis::atBottom)->ticker()->setTickCount(ticks);
}

void CalibrationView::clearData()
{
    for (QCPGraph* g : {m_measured, m_datasheet, m_fitted, m_residuals})
        g->data()->clear();
}

int CalibrationView::nearestPoint(const QPointF& pos) const
{
    const bool residual = m_residualRect->rect().contains(pos.toPoint());
    const auto& ys = residual ? m_chart.residual_pct : m_chart.measured_busbw_gbps;
    const QCPAxis* xa = residual ? m_residualRect->axis(QCPAxis::atBottom) : plot()->xAxis;
    const QCPAxis* ya = residual ? m_residualRect->axis(QCPAxis::atLeft) : plot()->yAxis;
    int best = -1;
    double bestD = 14.0 * 14.0; // pixels²: close enough to mean that point
    for (size_t i = 0; i < m_chart.size_bytes.size() && i < ys.size(); ++i) {
        const double px = xa->coordToPixel(m_chart.size_bytes[i]);
        const double py = ya->coordToPixel(ys[i]);
        const double d = (px - pos.x()) * (px - pos.x()) + (py - pos.y()) * (py - pos.y());
        if (d < bestD) {
            bestD = d;
            best = int(i);
        }
    }
    return best;
}

QString CalibrationView::pointToolTip(int i) const
{
    if (i < 0 || size_t(i) >= m_chart.size_bytes.size())
        return {};
    const size_t k = size_t(i);
    QString s = QStringLiteral("<b>%1</b> (%2 B)<br>")
                    .arg(units::sizeBytes(m_chart.size_bytes[k]))
                    .arg(m_chart.size_bytes[k], 0, 'f', 0);
    s += tr("measured: %1 GB/s, %2 µs")
             .arg(m_chart.measured_busbw_gbps[k], 0, 'f', 2)
             .arg(m_chart.measured_seconds[k] * 1e6, 0, 'f', 2);
    if (k < m_chart.fitted_at_points_gbps.size())
        s += tr("<br>fit: %1 GB/s").arg(m_chart.fitted_at_points_gbps[k], 0, 'f', 2);
    if (k < m_chart.residual_pct.size())
        s += tr("<br>residual: %1 %").arg(m_chart.residual_pct[k], 0, 'f', 2);
    if (k < m_chart.datasheet_at_points_gbps.size())
        s += tr("<br>datasheet: %1 GB/s").arg(m_chart.datasheet_at_points_gbps[k], 0, 'f', 2);
    return s;
}

void CalibrationView::hover(QMouseEvent* event)
{
    const int i = nearestPoint(event->position());
    if (i < 0) {
        QToolTip::hideText();
        return;
    }
    QToolTip::showText(event->globalPosition().toPoint(), pointToolTip(i), plot());
}

} // namespace paralens
