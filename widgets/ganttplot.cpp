// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/ganttplot.h"
#include "widgets/palette.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace paralens {
namespace {

constexpr double kMinRectPx = 3.0;  // narrower ops go into the coverage
constexpr double kLinkMinPx = 18.0; // p2p links once ops are at least this wide
constexpr double kRowHalf = 0.38;   // half a row's bar height, in rows
constexpr int kMaxLabels = 4000;

int kindIndex(OpKind k)
{
    return static_cast<int>(k);
}

} // namespace

GanttPlottable::GanttPlottable(QCPAxis* keyAxis, QCPAxis* valueAxis)
    : QCPAbstractPlottable(keyAxis, valueAxis)
{
    setAntialiased(false);
}

QColor GanttPlottable::kindColor(OpKind kind)
{
    switch (kind) {
    case OpKind::F:
        return QColor(palette::kForward);
    case OpKind::B:
        return QColor(palette::kBackward);
    case OpKind::W:
        return QColor(palette::kWeightGradient);
    }
    return Qt::gray;
}

QColor GanttPlottable::commColor()
{
    return QColor(palette::kCommunication);
}

QColor GanttPlottable::opColor(const PipelineOp& op)
{
    QColor c = kindColor(op.kind);
    if (op.chunk > 0)
        c = c.darker(100 + 60 * op.chunk);
    if (op.microbatch % 2 == 1)
        c = c.lighter(108);
    return c;
}

QString GanttPlottable::opLabel(const PipelineOp& op)
{
    static const char kNames[] = {'F', 'B', 'W'};
    return QStringLiteral("%1%2")
        .arg(QLatin1Char(kNames[kindIndex(op.kind)]))
        .arg(op.microbatch + 1);
}

void GanttPlottable::setTimeline(std::shared_ptr<const PipelineTimeline> timeline,
                                 bool expandChunks)
{
    m_timeline = std::move(timeline);
    m_expanded = expandChunks;
    m_rowOps.clear();
    m_rowDevice.clear();
    m_rowChunk.clear();
    m_opIndex.clear();
    if (!m_timeline || !m_timeline->simulated)
        return;
    const PipelineSchedule& s = m_timeline->schedule;
    const int chunks = expandChunks ? s.chunks : 1;
    m_rowOps.resize(static_cast<std::size_t>(s.stages) * chunks);
    for (int d = 0; d < s.stages; ++d)
        for (int c = 0; c < chunks; ++c) {
            m_rowDevice.push_back(d);
            m_rowChunk.push_back(expandChunks ? c : -1);
        }
    const std::int64_t keys = 3LL * s.modelStages() * s.microbatches;
    m_opIndex.assign(static_cast<std::size_t>(keys), -1);
    for (std::size_t i = 0; i < s.ops.size(); ++i) {
        const PipelineOp& op = s.ops[i];
        m_rowOps[rowOf(op)].push_back(static_cast<std::int32_t>(i));
        const std::int64_t key = (std::int64_t{kindIndex(op.kind)} * s.modelStages() +
                                  s.modelStage(op.device, op.chunk)) *
                                     s.microbatches +
                                 op.microbatch;
        m_opIndex[static_cast<std::size_t>(key)] = static_cast<std::int32_t>(i);
    }
    // With expanded chunks a device's ops interleave over its rows; each row stays in time
    // order because the device runs one op at a time.
}

int GanttPlottable::rowOf(const PipelineOp& op) const
{
    if (!m_timeline)
        return 0;
    return m_expanded ? op.device * m_timeline->schedule.chunks + op.chunk : op.device;
}

double GanttPlottable::spanMs() const
{
    return m_timeline && m_timeline->simulated ? m_timeline->result.step_seconds * 1e3 : 0.0;
}

std::optional<std::int32_t> GanttPlottable::opAt(int row, double ms) const
{
    if (!m_timeline || row < 0 || row >= rowCount())
        return std::nullopt;
    const auto& ops = m_rowOps[row];
    const auto& timing = m_timeline->result.timing;
    const double t = ms * 1e-3;
    auto it = std::upper_bound(ops.begin(), ops.end(), t,
                               [&](double v, std::int32_t i) { return v < timing[i].start; });
    if (it == ops.begin())
        return std::nullopt;
    const std::int32_t i = *std::prev(it);
    if (t <= timing[i].end)
        return i;
    return std::nullopt;
}

double GanttPlottable::selectTest(const QPointF& pos, bool onlySelectable, QVariant*) const
{
    if (onlySelectable && !mSelectable)
        return -1;
    return clipRect().contains(pos.toPoint()) ? 0.0 : -1;
}

QCPRange GanttPlottable::getKeyRange(bool& foundRange, QCP::SignDomain) const
{
    foundRange = m_timeline && m_timeline->simulated;
    return QCPRange(0, std::max(spanMs(), 1e-9));
}

QCPRange GanttPlottable::getValueRange(bool& foundRange, QCP::SignDomain, const QCPRange&) const
{
    foundRange = rowCount() > 0;
    return QCPRange(-0.5, std::max(rowCount(), 1) - 0.5);
}

void GanttPlottable::drawLegendIcon(QCPPainter* painter, const QRectF& rect) const
{
    painter->fillRect(rect, kindColor(OpKind::F));
}

void GanttPlottable::draw(QCPPainter* painter)
{
    m_stats = DrawStats{};
    m_stats.busy_ms.assign(rowCount(), 0.0);
    if (!m_timeline || !m_timeline->simulated || rowCount() == 0)
        return;
    QCPAxis* kAxis = keyAxis();
    QCPAxis* vAxis = valueAxis();
    const QRect area = clipRect();
    const int columns = std::max(1, area.width());
    const int rows = rowCount();
    const double k0 = kAxis->range().lower, k1 = kAxis->range().upper;
    const double pxPerMs = columns / std::max(k1 - k0, 1e-12);
    const auto& sched = m_timeline->schedule;
    const auto& timing = m_timeline->result.timing;
    const bool vector = painter->modes().testFlag(QCPPainter::pmVectorized);
    const int alpha = m_ghost ? 110 : 255;

    m_coverage.assign(static_cast<std::size_t>(rows) * columns * 3, 0.0f);
    bool anyCoverage = false;
    QFont font = painter->font();
    font.setPointSizeF(std::max(6.0, 8.0 * m_fontScale));
    const QFontMetricsF fm(font);

    struct Drawn
    {
        QRectF rect;
        std::int32_t op;
    };
    std::vector<Drawn> drawn;
    const QPen noPen(Qt::NoPen);
    painter->setPen(noPen);

    for (int r = 0; r < rows; ++r) {
        const double yc = vAxis->coordToPixel(r);
        const double half = std::abs(vAxis->coordToPixel(r + kRowHalf) - yc);
        if (r == m_selectedRow) {
            QColor sel = palette::categorical(5);
            sel.setAlpha(40);
            painter->fillRect(QRectF(area.left(), yc - half * 1.3, area.width(), half * 2.6), sel);
        }
        const auto& ops = m_rowOps[r];
        const double t0 = k0 * 1e-3;
        auto it = std::lower_bound(ops.begin(), ops.end(), t0,
                                   [&](std::int32_t i, double v) { return timing[i].end < v; });
        float* cov = m_coverage.data() + static_cast<std::size_t>(r) * columns * 3;
        for (; it != ops.end(); ++it) {
            const std::int32_t i = *it;
            const double s = timing[i].start * 1e3, e = timing[i].end * 1e3;
            if (s > k1)
                break;
            const double x0 = area.left() + (std::max(s, k0) - k0) * pxPerMs;
            const double x1 = area.left() + (std::min(e, k1) - k0) * pxPerMs;
            m_stats.busy_ms[r] += std::min(e, k1) - std::max(s, k0);
            if (x1 - x0 >= kMinRectPx) {
                drawn.push_back({QRectF(QPointF(x0, yc - half), QPointF(x1, yc + half)), i});
                continue;
            }
            ++m_stats.aggregated;
            anyCoverage = true;
            const int kind = kindIndex(sched.ops[i].kind);
            const double a = x0 - area.left(), b = x1 - area.left();
            const int c0 = std::clamp(static_cast<int>(a), 0, columns - 1);
            const int c1 = std::clamp(static_cast<int>(b), 0, columns - 1);
            for (int c = c0; c <= c1; ++c) {
                const double share = std::min(b, c + 1.0) - std::max(a, double(c));
                if (share > 0)
                    cov[c * 3 + kind] += static_cast<float>(share);
            }
        }
    }

    if (anyCoverage) {
        // One pixel per column and row, scaled to the row's bar: busy share as opacity,
        // the mix of kinds as colour.
        if (m_image.width() != columns || m_image.height() != rows)
            m_image = QImage(columns, rows, QImage::Format_ARGB32);
        const QColor kc[3] = {kindColor(OpKind::F), kindColor(OpKind::B), kindColor(OpKind::W)};
        for (int r = 0; r < rows; ++r) {
            auto* line = reinterpret_cast<QRgb*>(m_image.scanLine(r));
            const float* cov = m_coverage.data() + static_cast<std::size_t>(r) * columns * 3;
            for (int c = 0; c < columns; ++c) {
                const float f = cov[c * 3], b = cov[c * 3 + 1], w = cov[c * 3 + 2];
                const float sum = f + b + w;
                if (sum <= 0) {
                    line[c] = 0;
                    continue;
                }
                const double red = (f * kc[0].red() + b * kc[1].red() + w * kc[2].red()) / sum;
                const double grn =
                    (f * kc[0].green() + b * kc[1].green() + w * kc[2].green()) / sum;
                const double blu = (f * kc[0].blue() + b * kc[1].blue() + w * kc[2].blue()) / sum;
                const int op = static_cast<int>(std::min(1.0f, sum) * alpha);
                line[c] = qRgba(int(red), int(grn), int(blu), op);
            }
        }
        painter->setRenderHint(QPainter::SmoothPixmapTransform, false);
        for (int r = 0; r < rows; ++r) {
            const double yc = vAxis->coordToPixel(r);
            const double half = std::abs(vAxis->coordToPixel(r + kRowHalf) - yc);
            painter->drawImage(QRectF(area.left(), yc - half, columns, 2 * half), m_image,
                               QRectF(0, r, columns, 1));
        }
    }

    // Exposed DP synchronisation after each device's last op: communication.
    {
        QColor comm = commColor();
        comm.setAlpha(alpha);
        for (int r = 0; r < rows; ++r) {
            if (m_rowChunk[r] > 0)
                continue;
            const StageStats& st = m_timeline->result.stages.at(m_rowDevice[r]);
            if (st.dp_exposed_seconds <= 0)
                continue;
            const double s = (st.finish_seconds - st.dp_exposed_seconds) * 1e3;
            const double e = st.finish_seconds * 1e3;
            if (e < k0 || s > k1)
                continue;
            const double yc = vAxis->coordToPixel(r);
            const double half = std::abs(vAxis->coordToPixel(r + kRowHalf) - yc);
            const double x0 = area.left() + (std::max(s, k0) - k0) * pxPerMs;
            const double x1 = area.left() + (std::min(e, k1) - k0) * pxPerMs;
            painter->fillRect(QRectF(x0, yc - half * 0.5, std::max(1.0, x1 - x0), half), comm);
        }
    }

    double widthSum = 0;
    for (const Drawn& d : drawn) {
        QColor c = opColor(sched.ops[d.op]);
        c.setAlpha(alpha);
        painter->fillRect(d.rect, c);
        widthSum += d.rect.width();
    }
    m_stats.rectangles = static_cast<int>(drawn.size());
    if (drawn.empty())
        return;

    // Borders separate neighbouring ops of the same colour.
    if (!vector || drawn.size() < 20000) {
        QPen border(palette::isDark(parentPlot()->palette()) ? QColor(20, 20, 20, alpha)
                                                             : QColor(255, 255, 255, alpha));
        border.setWidthF(1.0);
        painter->setPen(border);
        painter->setBrush(Qt::NoBrush);
        for (const Drawn& d : drawn)
            if (d.rect.width() >= 6)
                painter->drawRect(d.rect);
    }

    // p2p links: the activation (F) or its gradient (B) from the previous model stage.
    if (widthSum / drawn.size() >= kLinkMinPx && !m_ghost) {
        QPen link(commColor());
        link.setWidthF(1.2);
        painter->setPen(link);
        painter->setRenderHint(QPainter::Antialiasing, true);
        const int S = sched.modelStages();
        for (const Drawn& d : drawn) {
            const PipelineOp& op = sched.ops[d.op];
            if (op.kind == OpKind::W)
                continue;
            const int ms = sched.modelStage(op.device, op.chunk);
            const int prevMs = op.kind == OpKind::F ? ms - 1 : ms + 1;
            if (prevMs < 0 || prevMs >= S)
                continue;
            const std::int64_t key =
                (std::int64_t{kindIndex(op.kind)} * S + prevMs) * sched.microbatches +
                op.microbatch;
            const std::int32_t prev = m_opIndex[static_cast<std::size_t>(key)];
            if (prev < 0)
                continue;
            const int prow = rowOf(sched.ops[prev]);
            const int row = rowOf(op);
            if (prow == row)
                continue;
            const double pe = timing[prev].end * 1e3;
            if (pe < k0 || pe > k1)
                continue;
            // Only links that set the op's start: an input that waited while the device was
            // busy is not what the eye needs to follow.
            const double dur = (timing[d.op].end - timing[d.op].start) * 1e3;
            if (timing[d.op].start * 1e3 - pe > 0.25 * dur)
                continue;
            const double px = area.left() + (pe - k0) * pxPerMs;
            const double pyc = vAxis->coordToPixel(prow);
            const double half = std::abs(vAxis->coordToPixel(prow + kRowHalf) - pyc);
            const bool down = vAxis->coordToPixel(row) > pyc;
            const QPointF from(px, pyc + (down ? half : -half));
            const QPointF to(d.rect.left(), down ? d.rect.top() : d.rect.bottom());
            painter->drawLine(from, to);
            const QPointF dir = to - from;
            const double len = std::hypot(dir.x(), dir.y());
            if (len > 6) {
                const QPointF u = dir / len, n(-u.y(), u.x());
                painter->drawLine(to, to - u * 5 + n * 3);
                painter->drawLine(to, to - u * 5 - n * 3);
            }
            ++m_stats.links;
        }
        painter->setRenderHint(QPainter::Antialiasing, false);
    }

    // Labels where they fit.
    painter->setFont(font);
    const QColor text = m_ghost ? QColor(255, 255, 255, 160) : QColor(Qt::white);
    painter->setPen(text);
    // The shortest label ("F1", "B1", "W1") bounds every other: thousands of blocks a few
    // pixels wide are skipped without formatting and measuring their labels.
    double narrowest = std::numeric_limits<double>::max();
    for (const char* shortest : {"F1", "B1", "W1"})
        narrowest = std::min(narrowest, fm.horizontalAdvance(QLatin1String(shortest)));
    for (const Drawn& d : drawn) {
        if (m_stats.labels >= kMaxLabels)
            break;
        if (d.rect.width() < narrowest + 4 || d.rect.height() < fm.height())
            continue;
        const QString label = opLabel(sched.ops[d.op]);
        if (d.rect.width() < fm.horizontalAdvance(label) + 4)
            continue;
        painter->drawText(d.rect, Qt::AlignCenter, label);
        ++m_stats.labels;
    }
}

} // namespace paralens
