// What the pooled view says about its cells: the caption (what a cell is), the hover text
// (the query and key ranges under the cursor and the value), and the colour scale with its bar.

#include "app/gui/views/ElidedLabel.h"
#include "app/gui/views/PooledHeatmapView.h"

#include <QPainter>

#include <algorithm>
#include <cmath>

namespace attnscope {

namespace {

const QRgb kEmptyCell = qRgb(0xd4, 0xd4, 0xd4);
constexpr int kRightMarginText = 48; // the colour bar's tick labels

// A plain loop: Eigen's vectorised maxCoeff() trips GCC 12's maybe-uninitialized warning here.
double largest(const MatrixF &m)
{
    float top = 0.0f;
    for (Eigen::Index i = 0; i < m.size(); ++i)
        top = std::max(top, m.data()[i]);
    return double(top);
}

QString formatWeight(float v)
{
    return v == 0.0f ? QStringLiteral("0") : QString::number(double(v), 'g', 4);
}

} // namespace

PooledHeatmapView::PooledFigure PooledHeatmapView::pooledFigure(const QString &documentName) const
{
    PooledFigure out;
    const PooledTilePtr tile = visibleTile();
    if (!tile || !m_source || tile->heads.empty())
        return out;
    const PooledBlock &b = tile->block;
    std::vector<const MatrixF *> maps;
    if (m_head < 0) {
        maps.push_back(&tile->mean);
        out.view = FigureView::Mean;
    } else {
        for (const MatrixF &m : tile->heads)
            maps.push_back(&m);
        out.head = std::clamp<int>(m_head, 0, int(maps.size()) - 1);
    }
    const Eigen::Index nq = maps.front()->rows(), nk = maps.front()->cols();
    std::vector<float> values;
    values.reserve(size_t(maps.size()) * size_t(nq) * size_t(nk));
    for (const MatrixF *m : maps)
        for (Eigen::Index i = 0; i < nq; ++i)
            for (Eigen::Index j = 0; j < nk; ++j)
                values.push_back((*m)(i, j));
    auto set = AttentionSet::fromFloats(std::move(values), 1, 1, int(maps.size()), nq, nk);
    if (!set)
        return out;
    // A cell of one token is named by its token; a wider one by its first and last token.
    auto labels = [](const std::vector<std::string> &tokens, std::int64_t first, std::int64_t count, Eigen::Index n) {
        std::vector<std::string> out;
        for (Eigen::Index a = 0; a < n; ++a) {
            const std::int64_t lo = first + binStart(a, count, n), hi = first + binStart(a + 1, count, n) - 1;
            if (hi <= lo)
                out.push_back(size_t(lo) < tokens.size() ? tokens[size_t(lo)] : std::to_string(lo));
            else
                out.push_back(std::to_string(lo) + "\u2013" + std::to_string(hi));
        }
        return out;
    };
    if (!set->setTokens(labels(m_source->shape().queryLabels, b.q0, b.rows(), nq),
                        labels(m_source->shape().keyLabels, b.k0, b.keys(), nk)))
        return out;
    out.set = std::move(*set);
    const MatrixF &drawn = *maps[size_t(out.head)];
    auto allowed = std::make_shared<MaskMatrix>(nq, nk);
    for (Eigen::Index i = 0; i < nq; ++i)
        for (Eigen::Index j = 0; j < nk; ++j)
            (*allowed)(i, j) = drawn(i, j) > 0.0f ? 1 : 0;
    out.allowed = std::move(allowed);
    const bool exact = nq == b.rows() && nk == b.keys();
    const QString where =
        tr("%1: queries %2–%3, keys %4–%5").arg(documentName).arg(b.q0).arg(b.q1 - 1).arg(b.k0).arg(b.k1 - 1);
    out.name = exact ? where : tr("%1, each cell the maximum over its block").arg(where);
    out.title = m_head < 0 ? tr("%1 — mean over heads").arg(out.name) : tr("%1 — head %2").arg(out.name).arg(out.head);
    return out;
}

const MatrixF &PooledHeatmapView::shownMatrix(const PooledTile &tile) const
{
    return m_head < 0 ? tile.mean : tile.heads[size_t(std::clamp<int>(m_head, 0, int(tile.heads.size()) - 1))];
}

void PooledHeatmapView::updateCaption()
{
    if (!m_source) {
        m_caption->clear();
        return;
    }
    const PooledBlock b = visibleBlock();
    const bool exact = b.rows() <= b.bins && b.keys() <= b.bins;
    if (m_head < 0)
        m_caption->setText(exact ? tr("Each cell: one attention weight averaged over heads (exact).")
                                 : tr("Each cell: the maximum over its block of the attention weights averaged over "
                                      "heads."));
    else
        m_caption->setText(
            exact ? tr("Each cell: one attention weight of head %1 (exact).").arg(m_head)
                  : tr("Each cell: the maximum over its block of head %1's attention weights.").arg(m_head));
}

bool PooledHeatmapView::refreshScale() const
{
    // The whole problem's tile: max-pooling keeps every maximum, so its range is the range of
    // every zoom, and all tiles share one colour bar. Until it is there, the newest tile.
    PooledTilePtr source;
    if (m_source) {
        const std::int64_t tq = m_source->shape().queries, tk = m_source->shape().keys;
        for (const CachedTile &t : m_tiles) {
            const PooledBlock &b = t.tile->block;
            if (b.q0 == 0 && b.k0 == 0 && b.q1 == tq && b.k1 == tk)
                source = t.tile;
        }
        if (!source && !m_tiles.empty())
            source = m_tiles.front().tile;
    }
    if (source == m_scaleTile && m_scaleHead == m_head)
        return false;
    HeatmapData d;
    d.rangeMin = 0.0;
    d.rangeMax = 1.0;
    if (source) {
        d.values = &shownMatrix(*source);
        double top = 0.0;
        if (m_scope == ScaleScope::Shared) {
            for (const MatrixF &m : source->heads)
                top = std::max(top, largest(m));
            top = std::max(top, largest(source->mean));
        } else if (m_scope == ScaleScope::PerHead) {
            top = largest(*d.values);
        }
        if (m_scope != ScaleScope::Absolute && top > 0.0)
            d.rangeMax = top;
    }
    m_scale = ColorScale::build(m_colorScaleKind, {&d});
    m_scaleTile = source;
    m_scaleHead = m_head;
    return true;
}

QRgb PooledHeatmapView::colorOf(float value) const
{
    refreshScale();
    return value > 0.0f ? m_colorMap.at(m_scale.position(double(value))) : kEmptyCell;
}

const PooledTile *PooledHeatmapView::tileAt(const QPointF &tokens) const
{
    // The finest tile there: the one painted last, on top.
    const PooledTile *best = nullptr;
    double bestCoarseness = 0.0;
    for (const CachedTile &t : m_tiles) {
        const PooledBlock &b = t.tile->block;
        if (tokens.x() < double(b.k0) || tokens.x() >= double(b.k1) || tokens.y() < double(b.q0) ||
            tokens.y() >= double(b.q1))
            continue;
        const double coarseness =
            std::max(double(b.rows()) / double(t.tile->mean.rows()), double(b.keys()) / double(t.tile->mean.cols()));
        if (!best || coarseness < bestCoarseness) {
            best = t.tile.get();
            bestCoarseness = coarseness;
        }
    }
    return best;
}

QString PooledHeatmapView::hoverText(const QPointF &pos) const
{
    const QRectF plot = plotRect();
    if (!m_source || !plot.contains(pos))
        return {};
    const QPointF tokens(m_view.left() + (pos.x() - plot.left()) / plot.width() * m_view.width(),
                         m_view.top() + (pos.y() - plot.top()) / plot.height() * m_view.height());
    const PooledTile *tile = tileAt(tokens);
    if (!tile)
        return {};
    const MatrixF &m = shownMatrix(*tile);
    const PooledBlock &b = tile->block;
    const std::int64_t i = std::clamp<std::int64_t>(std::int64_t(std::floor(tokens.y())), b.q0, b.q1 - 1);
    const std::int64_t j = std::clamp<std::int64_t>(std::int64_t(std::floor(tokens.x())), b.k0, b.k1 - 1);
    const std::int64_t a = binOf(i - b.q0, b.rows(), m.rows()), c = binOf(j - b.k0, b.keys(), m.cols());
    const std::int64_t qa = b.q0 + binStart(a, b.rows(), m.rows()), qb = b.q0 + binStart(a + 1, b.rows(), m.rows());
    const std::int64_t ka = b.k0 + binStart(c, b.keys(), m.cols()), kb = b.k0 + binStart(c + 1, b.keys(), m.cols());
    const auto &queries = m_source->shape().queryLabels;
    const auto &keys = m_source->shape().keyLabels;
    QStringList lines;
    if (qb - qa == 1)
        lines << (size_t(qa) < queries.size()
                      ? tr("Query %1: “%2”").arg(qa).arg(QString::fromStdString(queries[size_t(qa)]))
                      : tr("Query %1").arg(qa));
    else
        lines << tr("Queries %1–%2 (%3 tokens)").arg(qa).arg(qb - 1).arg(qb - qa);
    if (kb - ka == 1)
        lines << (size_t(ka) < keys.size() ? tr("Key %1: “%2”").arg(ka).arg(QString::fromStdString(keys[size_t(ka)]))
                                           : tr("Key %1").arg(ka));
    else
        lines << tr("Keys %1–%2 (%3 tokens)").arg(ka).arg(kb - 1).arg(kb - ka);
    const QString value = formatWeight(m(a, c));
    const bool exact = qb - qa == 1 && kb - ka == 1;
    if (m_head < 0)
        lines << (exact ? tr("Weight averaged over heads: %1").arg(value)
                        : tr("Largest weight averaged over heads in this block: %1").arg(value));
    else
        lines << (exact ? tr("Weight of head %1: %2").arg(m_head).arg(value)
                        : tr("Largest weight of head %1 in this block: %2").arg(m_head).arg(value));
    return lines.join(QLatin1Char('\n'));
}

void PooledHeatmapView::paintColorBar(QPainter &painter, const QRectF &bar) const
{
    refreshScale();
    const int steps = std::max(2, int(bar.height()));
    for (int s = 0; s < steps; ++s) {
        const double t = 1.0 - (double(s) + 0.5) / double(steps);
        painter.fillRect(
            QRectF(bar.left(), bar.top() + bar.height() * s / steps, bar.width(), bar.height() / steps + 0.5),
            QColor::fromRgb(m_colorMap.at(t)));
    }
    painter.setPen(palette().color(QPalette::Mid));
    painter.drawRect(bar);
    painter.setPen(palette().color(QPalette::Text));
    const QFontMetrics fm(font());
    for (const ColorScaleTick &tick : m_scale.ticks()) {
        const double y = bar.bottom() - tick.position * bar.height();
        painter.drawLine(QPointF(bar.right(), y), QPointF(bar.right() + 4, y));
        painter.drawText(QRectF(bar.right() + 6, y - 8, kRightMarginText, 16), Qt::AlignLeft | Qt::AlignVCenter,
                         fm.elidedText(tick.label, Qt::ElideRight, kRightMarginText));
    }
}

} // namespace attnscope
