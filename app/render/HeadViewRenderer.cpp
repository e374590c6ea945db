#include "app/render/HeadViewRenderer.h"

#include "app/render/DisplayText.h"

#include "app/render/HeatmapRenderer.h"

#include <QCoreApplication>
#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace attnscope {

namespace {

QString tokenAt(const QStringList &tokens, Eigen::Index i)
{
    return i < tokens.size() ? displayText(tokens[qsizetype(i)]) : QString::number(i);
}

// A label shown among every step-th: with its position when some are left out.
QString thinnedLabel(const QString &token, Eigen::Index index, int step)
{
    return step > 1 ? QStringLiteral("%1 %2").arg(index).arg(token) : token;
}

} // namespace

HeadViewRenderer::HeadViewRenderer(const ShownAttention &shown, const HeadViewOptions &options)
    : m_shown(shown), m_weights(shown.weights()), m_queryLabels(shown.queryLabels()), m_keyLabels(shown.keyLabels()),
      m_options(options)
{
}

int HeadViewRenderer::heads() const
{
    return m_weights ? int(m_weights->size()) : 0;
}

QColor HeadViewRenderer::headColor(int head)
{
    static const QColor colors[] = {QColor(0x00, 0x72, 0xb2), QColor(0xe6, 0x9f, 0x00), QColor(0x00, 0x9e, 0x73),
                                    QColor(0xcc, 0x79, 0xa7), QColor(0xd5, 0x5e, 0x00), QColor(0x56, 0xb4, 0xe9),
                                    QColor(0xf0, 0xe4, 0x42), QColor(0x00, 0x00, 0x00)};
    return colors[head % 8];
}

double HeadViewRenderer::top(const QRectF &target) const
{
    // The "queries" / "keys" headings.
    return target.top() + QFontMetricsF(m_options.font).height() * 1.6 + 6;
}

double HeadViewRenderer::rowHeight(const QRectF &target, Eigen::Index n) const
{
    const double legend = QFontMetricsF(m_options.font).height() * 1.5;
    return std::max(0.0, target.bottom() - legend - top(target)) / double(std::max<Eigen::Index>(n, 1));
}

QPointF HeadViewRenderer::queryAnchor(const QRectF &target, int query) const
{
    return QPointF(target.left() + target.width() * 0.35,
                   top(target) + (query + 0.5) * rowHeight(target, m_shown.shownQueries()));
}

QPointF HeadViewRenderer::keyAnchor(const QRectF &target, int key) const
{
    return QPointF(target.left() + target.width() * 0.65,
                   top(target) + (key + 0.5) * rowHeight(target, m_shown.shownKeys()));
}

int HeadViewRenderer::queryAt(const QRectF &target, const QPointF &pos) const
{
    if (pos.x() >= target.left() + target.width() * 0.4)
        return -1;
    const Eigen::Index tq = m_shown.shownQueries();
    const double h = rowHeight(target, tq);
    if (h <= 0)
        return -1;
    const double y = (pos.y() - top(target)) / h;
    return y >= 0 && y < double(tq) ? int(y) : -1;
}

int HeadViewRenderer::keyAt(const QRectF &target, const QPointF &pos) const
{
    if (pos.x() <= target.left() + target.width() * 0.6)
        return -1;
    const Eigen::Index tk = m_shown.shownKeys();
    const double h = rowHeight(target, tk);
    if (h <= 0)
        return -1;
    const double y = (pos.y() - top(target)) / h;
    return y >= 0 && y < double(tk) ? int(y) : -1;
}

bool HeadViewRenderer::headHidden(int head) const
{
    return size_t(head) < m_options.hiddenHeads.size() && m_options.hiddenHeads[size_t(head)];
}

// The legend of an overlay: one entry per head, left to right, along the bottom.
std::vector<QRectF> HeadViewRenderer::legendEntries(const QRectF &target) const
{
    std::vector<QRectF> entries;
    const QFontMetricsF fm(m_options.font);
    const double legendY = target.bottom() - fm.height() * 1.2;
    const double box = fm.height() * 0.7;
    double x = target.left() + 6;
    for (int h = 0; h < heads(); ++h) {
        const double width = box + 3 + fm.horizontalAdvance(tr("head %1").arg(h)) + 2;
        entries.emplace_back(x, legendY, width, fm.height());
        x += width + 7;
    }
    return entries;
}

int HeadViewRenderer::legendHeadAt(const QRectF &target, const QPointF &pos) const
{
    if (!m_options.overlay)
        return -1;
    const std::vector<QRectF> entries = legendEntries(target);
    for (size_t h = 0; h < entries.size(); ++h)
        if (entries[h].contains(pos))
            return int(h);
    return -1;
}

void HeadViewRenderer::paint(QPainter &p, const QRectF &target) const
{
    if (heads() == 0 || m_weights->front().size() == 0)
        return;
    const std::vector<MatrixF> &weights = *m_weights;
    const std::vector<bool> emptyRows = m_shown.emptyRows();
    const Eigen::Index tq = weights[0].rows(), tk = weights[0].cols();
    const QFont &font = m_options.font;
    const QFontMetricsF fm(font);
    p.save();
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(Qt::black);
    QFont bold = font;
    bold.setBold(true);
    p.setFont(bold);
    const double headH = fm.height() * 1.4;
    const double x0 = target.left(), w = target.width();
    p.drawText(QRectF(x0, target.top() + 4, w * 0.35, headH), Qt::AlignRight | Qt::AlignVCenter, tr("queries"));
    p.drawText(QRectF(x0 + w * 0.65, target.top() + 4, w * 0.35, headH), Qt::AlignLeft | Qt::AlignVCenter, tr("keys"));
    p.setFont(font);

    const int hover = m_options.hoverQuery;
    const int hoverKey = hover >= 0 ? -1 : m_options.hoverKey;
    const bool overlay = m_options.overlay;
    const int head = std::clamp(m_options.head, 0, heads() - 1);
    const int firstHead = overlay ? 0 : head, lastHead = overlay ? heads() - 1 : head;
    const bool dense = tq * tk > kDenseLines;
    for (int h = firstHead; h <= lastHead; ++h) {
        if (overlay && headHidden(h))
            continue;
        const MatrixF &wts = weights[size_t(h)];
        QColor c = overlay ? headColor(h) : QColor(0x00, 0x72, 0xb2);
        for (Eigen::Index i = 0; i < tq; ++i) {
            if ((hover >= 0 && i != hover) || (dense && hover < 0 && hoverKey < 0 && i != 0))
                continue;
            const QPointF from = queryAnchor(target, int(i)) + QPointF(4, 0);
            for (Eigen::Index j = 0; j < tk; ++j) {
                if (hoverKey >= 0 && j != hoverKey)
                    continue;
                const float a = wts(i, j);
                if (a < 0.005f)
                    continue;
                c.setAlphaF(std::clamp(double(a), 0.05, 1.0) * (overlay ? 0.8 : 1.0));
                p.setPen(QPen(c, 1.0 + 4.0 * a));
                p.drawLine(from, keyAnchor(target, int(j)) - QPointF(4, 0));
            }
        }
    }
    // Labels: every n-th where rows are lower than the text, then with their positions ("40 cat"):
    // a column of every tenth word would read as if consecutive.
    const double qh = rowHeight(target, tq), kh = rowHeight(target, tk);
    const int qStep = HeatmapRenderer::roundStep(int(std::ceil(fm.height() * 0.9 / std::max(qh, 1e-3))));
    const int kStep = HeatmapRenderer::roundStep(int(std::ceil(fm.height() * 0.9 / std::max(kh, 1e-3))));
    for (Eigen::Index i = 0; i < tq; i += qStep) {
        const bool empty = size_t(i) < emptyRows.size() && emptyRows[size_t(i)];
        p.setPen(empty ? HeatmapRenderer::emptyRowColor()
                       : (i == hover ? QColor(0x00, 0x72, 0xb2) : QColor(Qt::black)));
        const QPointF a = queryAnchor(target, int(i));
        const double h = qh * qStep;
        p.drawText(QRectF(x0, a.y() - h / 2, a.x() - x0 - 4, h), Qt::AlignRight | Qt::AlignVCenter,
                   fm.elidedText(thinnedLabel(tokenAt(m_queryLabels, i), i, qStep), Qt::ElideRight, a.x() - x0 - 8));
    }
    for (Eigen::Index j = 0; j < tk; j += kStep) {
        p.setPen(j == hoverKey ? QColor(0x00, 0x72, 0xb2) : QColor(Qt::black));
        const QPointF a = keyAnchor(target, int(j));
        const double h = kh * kStep;
        p.drawText(
            QRectF(a.x() + 4, a.y() - h / 2, target.right() - a.x() - 4, h), Qt::AlignLeft | Qt::AlignVCenter,
            fm.elidedText(thinnedLabel(tokenAt(m_keyLabels, j), j, kStep), Qt::ElideRight, target.right() - a.x() - 8));
    }
    const double legendY = target.bottom() - fm.height() * 1.2;
    if (overlay) {
        const double box = fm.height() * 0.7;
        const std::vector<QRectF> entries = legendEntries(target);
        for (int h = 0; h < heads(); ++h) {
            const QRectF e = entries[size_t(h)];
            const QRectF swatch(e.left(), e.top() + (fm.height() - box) / 2, box, box);
            // A switched-off head keeps its entry, hollow and grey, so it can be switched on again.
            if (headHidden(h)) {
                p.setPen(QPen(headColor(h), 1.0));
                p.drawRect(swatch.adjusted(0.5, 0.5, -0.5, -0.5));
                p.setPen(QColor(0x99, 0x99, 0x99));
            } else {
                p.fillRect(swatch, headColor(h));
                p.setPen(Qt::black);
            }
            p.drawText(QRectF(e.left() + box + 3, e.top(), e.width() - box - 3, fm.height()),
                       Qt::AlignLeft | Qt::AlignVCenter, tr("head %1").arg(h));
        }
    } else if (dense && hover < 0 && hoverKey < 0) {
        p.setPen(QColor(0x55, 0x55, 0x55));
        p.drawText(QRectF(x0 + 6, legendY, w - 12, fm.height()), Qt::AlignLeft | Qt::AlignVCenter,
                   tr("%1 x %2 pairs: the lines of the first query only").arg(tq).arg(tk));
    }
    p.restore();
}

} // namespace attnscope
