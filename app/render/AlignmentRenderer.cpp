#include "app/render/AlignmentRenderer.h"

#include "app/render/DisplayText.h"
#include "app/render/HeadViewRenderer.h"
#include "app/render/HeatmapRenderer.h"

#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace attnscope {

namespace {

constexpr double kMarginX = 6, kMarginY = 4;
// Between a label band and the anchors where the lines end.
constexpr double kGap = 6;
// A rotated label band takes at most this part of the height.
constexpr double kMaxBandShare = 0.3;

QRectF inner(const QRectF &target)
{
    return target.adjusted(kMarginX, kMarginY, -kMarginX, -kMarginY);
}

// A label shown among every step-th: with its position when some are left out (a row of every
// fifth word would read as if consecutive).
QString thinnedLabel(const QString &token, int index, int step)
{
    return step > 1 ? QStringLiteral("%1 %2").arg(index).arg(token) : token;
}

QColor highlight()
{
    return HeadViewRenderer::headColor(0);
}

} // namespace

AlignmentRenderer::AlignmentRenderer(const std::vector<MatrixF> &heads, const QStringList &sourceLabels,
                                     const QStringList &targetLabels, int sourceEos, const AlignmentOptions &options)
    : m_options(options)
{
    if (heads.empty())
        return;
    m_error = [&]() -> QString {
        const Eigen::Index t = heads.front().rows(), s = heads.front().cols();
        for (size_t h = 0; h < heads.size(); ++h)
            if (heads[h].rows() != t || heads[h].cols() != s)
                return tr("Cross-attention: head %1 is %2 x %3, head 0 is %4 x %5")
                    .arg(h)
                    .arg(heads[h].rows())
                    .arg(heads[h].cols())
                    .arg(t)
                    .arg(s);
        if (t == 0 || s == 0)
            return tr("Cross-attention: the heads are %1 x %2, with no target or no source token").arg(t).arg(s);
        if (sourceLabels.size() != s)
            return tr("Cross-attention: %1 source labels for %2 source tokens").arg(sourceLabels.size()).arg(s);
        if (targetLabels.size() != t)
            return tr("Cross-attention: %1 target labels for %2 target rows").arg(targetLabels.size()).arg(t);
        if (sourceEos < -1 || sourceEos >= s)
            return tr("Cross-attention: end-of-sentence column %1 is not one of the %2 source tokens")
                .arg(sourceEos)
                .arg(s);
        return {};
    }();
    if (!m_error.isEmpty())
        return;

    for (const QString &label : sourceLabels)
        m_sourceLabels << displayText(label);
    for (const QString &label : targetLabels)
        m_targetLabels << displayText(label);

    const int h = m_options.head < 0 ? -1 : std::min(m_options.head, int(heads.size()) - 1);
    m_options.head = h;
    MatrixF w;
    if (h >= 0) {
        w = heads[size_t(h)];
    } else {
        w = MatrixF::Zero(heads.front().rows(), heads.front().cols());
        for (const MatrixF &head : heads)
            w += head;
        w /= float(heads.size());
    }
    // Decoder row T-1 follows </s>: with the shift it predicts nothing shown.
    const Eigen::Index rowCount = m_options.shiftByOne ? w.rows() - 1 : w.rows();
    const bool hide = m_options.hideEndOfSentence && sourceEos >= 0;
    for (int j = 0; j < int(w.cols()); ++j)
        if (!(hide && j == sourceEos))
            m_columns.push_back(j);
    m_shown.resize(rowCount, Eigen::Index(m_columns.size()));
    for (Eigen::Index i = 0; i < rowCount; ++i) {
        double sum = 0;
        for (size_t c = 0; c < m_columns.size(); ++c) {
            m_shown(i, Eigen::Index(c)) = w(i, m_columns[c]);
            sum += w(i, m_columns[c]);
        }
        if (hide && sum > 0)
            m_shown.row(i) /= float(sum);
    }
}

void AlignmentRenderer::setHover(int target, int source)
{
    m_options.hoverTarget = target;
    m_options.hoverSource = source;
}

QString AlignmentRenderer::targetLabel(int row) const
{
    const int t = m_options.shiftByOne ? row + 1 : row;
    return row >= 0 && row < rows() && t < m_targetLabels.size() ? m_targetLabels[t] : QString();
}

QString AlignmentRenderer::sourceLabel(int source) const
{
    return source >= 0 && source < m_sourceLabels.size() ? m_sourceLabels[source] : QString();
}

int AlignmentRenderer::shownColumn(int source) const
{
    const auto it = std::find(m_columns.begin(), m_columns.end(), source);
    return it == m_columns.end() ? -1 : int(it - m_columns.begin());
}

double AlignmentRenderer::weight(int row, int source) const
{
    const int c = shownColumn(source);
    return row >= 0 && row < rows() && c >= 0 ? double(m_shown(row, c)) : 0.0;
}

QString AlignmentRenderer::describe(int row, int source) const
{
    return tr("%1 → %2: %3").arg(targetLabel(row), sourceLabel(source), QString::number(weight(row, source), 'f', 2));
}

QStringList AlignmentRenderer::shownSourceLabels() const
{
    QStringList labels;
    for (int j : m_columns)
        labels << m_sourceLabels[j];
    return labels;
}

QStringList AlignmentRenderer::shownTargetLabels() const
{
    QStringList labels;
    for (int i = 0; i < rows(); ++i)
        labels << targetLabel(i);
    return labels;
}

// Side by side where every label fits its slot; otherwise turned upright, one font height
// across, and where even that does not fit, every step-th label.
AlignmentRenderer::Band AlignmentRenderer::band(const QRectF &target, const QStringList &labels, int count) const
{
    const QFontMetricsF fm(m_options.font);
    const QRectF in = inner(target);
    Band b;
    b.slot = in.width() / std::max(count, 1);
    double widest = 0;
    for (const QString &label : labels)
        widest = std::max(widest, fm.horizontalAdvance(label));
    if (widest + 4 <= b.slot) {
        b.height = fm.height() + 2;
        return b;
    }
    b.rotated = true;
    b.thickness = fm.height();
    b.step = HeatmapRenderer::roundStep(int(std::ceil(b.thickness / std::max(b.slot, 1e-3))));
    if (b.step > 1) {
        widest = 0;
        for (int i = 0; i < labels.size(); i += b.step)
            widest = std::max(widest, fm.horizontalAdvance(thinnedLabel(labels[i], i, b.step)));
    }
    b.height = std::min(widest + 4, std::max(fm.height(), in.height() * kMaxBandShare));
    return b;
}

AlignmentRenderer::Band AlignmentRenderer::sourceBand(const QRectF &target) const
{
    return band(target, shownSourceLabels(), int(m_columns.size()));
}

AlignmentRenderer::Band AlignmentRenderer::targetBand(const QRectF &target) const
{
    return band(target, shownTargetLabels(), rows());
}

QPointF AlignmentRenderer::sourceAnchor(const QRectF &target, int source) const
{
    const int c = shownColumn(source);
    if (c < 0)
        return {};
    const Band b = sourceBand(target);
    const QRectF in = inner(target);
    return {in.left() + (c + 0.5) * b.slot, in.top() + b.height + kGap};
}

QPointF AlignmentRenderer::targetAnchor(const QRectF &target, int row) const
{
    if (row < 0 || row >= rows())
        return {};
    const Band b = targetBand(target);
    const QRectF in = inner(target);
    return {in.left() + (row + 0.5) * b.slot, in.bottom() - b.height - kGap};
}

int AlignmentRenderer::sourceAt(const QRectF &target, const QPointF &pos) const
{
    if (m_columns.empty())
        return -1;
    const Band b = sourceBand(target);
    const QRectF in = inner(target);
    if (pos.y() < in.top() || pos.y() > in.top() + b.height + 2 * kGap)
        return -1;
    const double c = std::floor((pos.x() - in.left()) / std::max(b.slot, 1e-9));
    return c >= 0 && c < double(m_columns.size()) ? m_columns[size_t(c)] : -1;
}

int AlignmentRenderer::targetAt(const QRectF &target, const QPointF &pos) const
{
    if (rows() == 0)
        return -1;
    const Band b = targetBand(target);
    const QRectF in = inner(target);
    if (pos.y() > in.bottom() || pos.y() < in.bottom() - b.height - 2 * kGap)
        return -1;
    const double r = std::floor((pos.x() - in.left()) / std::max(b.slot, 1e-9));
    return r >= 0 && r < double(rows()) ? int(r) : -1;
}

QRectF AlignmentRenderer::labelRect(const QRectF &target, const Band &b, const QPointF &anchor, bool above) const
{
    const QRectF in = inner(target);
    const double top = above ? in.top() : in.bottom() - b.height;
    const double width = b.rotated ? b.thickness : b.slot;
    return {anchor.x() - width / 2, top, width, b.height};
}

QRectF AlignmentRenderer::sourceLabelRect(const QRectF &target, int source) const
{
    const int c = shownColumn(source);
    const Band b = sourceBand(target);
    if (c < 0 || c % b.step != 0)
        return {};
    return labelRect(target, b, sourceAnchor(target, source), true);
}

QRectF AlignmentRenderer::targetLabelRect(const QRectF &target, int row) const
{
    const Band b = targetBand(target);
    if (row < 0 || row >= rows() || row % b.step != 0)
        return {};
    return labelRect(target, b, targetAnchor(target, row), false);
}

void AlignmentRenderer::paint(QPainter &p, const QRectF &target) const
{
    const QFont &font = m_options.font;
    const QFontMetricsF fm(font);
    p.save();
    p.setFont(font);
    if (!m_error.isEmpty()) {
        p.setPen(Qt::black);
        p.drawText(inner(target), Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, m_error);
        p.restore();
        return;
    }
    if (rows() == 0 || m_columns.empty()) {
        p.restore();
        return;
    }
    p.setRenderHint(QPainter::Antialiasing);
    const int hover = m_options.hoverTarget >= 0 && m_options.hoverTarget < rows() ? m_options.hoverTarget : -1;
    const int hoverSource = hover >= 0 ? -1 : m_options.hoverSource;
    const int hoverColumn = hoverSource >= 0 ? shownColumn(hoverSource) : -1;
    const bool hovering = hover >= 0 || hoverColumn >= 0;

    const Band sb = sourceBand(target), tb = targetBand(target);
    const QRectF in = inner(target);
    const double sourceY = in.top() + sb.height + kGap, targetY = in.bottom() - tb.height - kGap;
    const auto sourceX = [&](int c) { return in.left() + (c + 0.5) * sb.slot; };
    const auto targetX = [&](int r) { return in.left() + (r + 0.5) * tb.slot; };

    QColor c = highlight();
    for (int i = 0; i < rows(); ++i) {
        if (hover >= 0 && i != hover)
            continue;
        for (int col = 0; col < int(m_columns.size()); ++col) {
            if (hoverColumn >= 0 && col != hoverColumn)
                continue;
            const float a = m_shown(i, col);
            if (!(a >= 0.005f)) // NaN draws nothing
                continue;
            // Hovered lines are drawn stronger: fewer lines, each worth reading.
            c.setAlphaF(std::clamp(double(a), hovering ? 0.2 : 0.05, 1.0));
            p.setPen(QPen(c, (hovering ? 1.5 : 1.0) + 4.0 * a, Qt::SolidLine, Qt::RoundCap));
            p.drawLine(QPointF(targetX(i), targetY), QPointF(sourceX(col), sourceY));
        }
    }
    p.setPen(Qt::NoPen);
    p.setBrush(QColor(0x55, 0x55, 0x55));
    for (int col = 0; col < int(m_columns.size()); ++col)
        p.drawEllipse(QPointF(sourceX(col), sourceY), 1.8, 1.8);
    for (int i = 0; i < rows(); ++i)
        p.drawEllipse(QPointF(targetX(i), targetY), 1.8, 1.8);
    p.setBrush(Qt::NoBrush);

    // A label is coloured when it is hovered, or when the hovered token gives it a tenth or more.
    const auto drawLabel = [&](const Band &b, double x, bool above, const QString &text, int index, bool marked) {
        const QString label = thinnedLabel(text, index, b.step);
        QFont f = font;
        f.setBold(marked);
        p.setFont(f);
        p.setPen(marked ? highlight() : QColor(Qt::black));
        const QFontMetricsF m(f);
        if (!b.rotated) {
            const double top = above ? in.top() : in.bottom() - b.height;
            p.drawText(QRectF(x - b.slot / 2, top, b.slot, b.height), Qt::AlignHCenter | Qt::AlignVCenter,
                       m.elidedText(label, Qt::ElideRight, b.slot - 2));
            return;
        }
        // Upright, read from the bottom: a source label starts at the lines, a target label ends there.
        p.save();
        p.translate(x, above ? in.top() + b.height : in.bottom());
        p.rotate(-90);
        p.drawText(QRectF(0, -b.thickness / 2, b.height, b.thickness),
                   (above ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignVCenter,
                   m.elidedText(label, Qt::ElideRight, b.height - 2));
        p.restore();
    };
    for (int col = 0; col < int(m_columns.size()); col += sb.step) {
        const bool marked = col == hoverColumn || (hover >= 0 && m_shown(hover, col) >= 0.1f);
        drawLabel(sb, sourceX(col), true, m_sourceLabels[m_columns[size_t(col)]], col, marked);
    }
    for (int i = 0; i < rows(); i += tb.step) {
        const bool marked = i == hover || (hoverColumn >= 0 && m_shown(i, hoverColumn) >= 0.1f);
        drawLabel(tb, targetX(i), false, targetLabel(i), i, marked);
    }
    p.restore();
}

} // namespace attnscope
