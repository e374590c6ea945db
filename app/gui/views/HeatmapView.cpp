#include "app/gui/views/HeatmapView.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <cmath>

namespace attnscope {

HeatmapView::HeatmapView(QWidget *parent) : QWidget(parent)
{
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setFocusPolicy(Qt::ClickFocus);
}

void HeatmapView::setResult(ComputedTracePtr result)
{
    m_result = std::move(result);
    rebuild();
}

void HeatmapView::setHead(int head)
{
    m_head = head;
    rebuild();
}

void HeatmapView::setSettings(const HeatmapViewSettings &settings)
{
    m_settings = settings;
    rebuild();
}

void HeatmapView::setSelectedCell(std::optional<QPoint> cell)
{
    m_selected = cell;
    update();
}

void HeatmapView::rebuild()
{
    m_dirty = true;
    if (m_selected && m_result &&
        (m_selected->y() >= m_result->project.problem.tq() || m_selected->x() >= m_result->project.problem.tk()))
        m_selected.reset();
    update();
}

const HeatmapData &HeatmapView::data() const
{
    if (m_dirty) {
        m_dirty = false;
        m_data = HeatmapData();
        if (m_result) {
            const int heads = m_result->trace.heads();
            const int head = m_head >= heads ? heads - 1 : m_head;
            m_data = HeatmapData::fromTrace(m_result->project, m_result->trace, head, m_settings.quantity,
                                            m_settings.scope, &m_result->ranges);
        }
    }
    return m_data;
}

HeatmapOptions HeatmapView::options() const
{
    HeatmapOptions o;
    o.colorMap = m_settings.colorMap;
    o.showValues = m_settings.showValues;
    o.font = font();
    o.highlight = m_selected;
    return o;
}

std::optional<QPoint> HeatmapView::cellAt(const QPointF &pos) const
{
    if (!data().values)
        return std::nullopt;
    return HeatmapRenderer(data(), options()).cellAt(QRectF(rect()), pos);
}

QRectF HeatmapView::cellRect(int query, int key) const
{
    const HeatmapLayout l = HeatmapRenderer(data(), options()).layout(QRectF(rect()));
    return QRectF(l.grid.left() + key * l.cellWidth, l.grid.top() + query * l.cellHeight, l.cellWidth, l.cellHeight);
}

QString HeatmapView::cellDescription(int query, int key) const
{
    data();
    if (!m_result || !m_data.values || query < 0 || key < 0 || query >= m_data.rows() || key >= m_data.cols())
        return {};
    const AttentionTrace &t = m_result->trace;
    const QString q = m_data.rowLabels.value(query), k = m_data.columnLabels.value(key);
    QString text = tr("Query %1 \"%2\" \u2192 key %3 \"%4\"").arg(query).arg(q).arg(key).arg(k);
    if (m_head < 0 || m_head >= t.heads()) {
        return text + QLatin1Char('\n') +
               tr("mean weight over heads: %1").arg(double((*m_data.values)(query, key)), 0, 'g', 5);
    }
    const double scale = m_result->project.problem.spec.scale();
    const double score = t.scores[size_t(m_head)](query, key);
    const bool allowed = m_data.isAllowed(query, key);
    text += QLatin1Char('\n') + tr("q\u00b7k = %1").arg(score / scale, 0, 'g', 5);
    text += QLatin1Char('\n') + tr("scaled score = %1 (\u00d7 %2)").arg(score, 0, 'g', 5).arg(scale, 0, 'g', 5);
    text +=
        QLatin1Char('\n') + (allowed ? tr("weight = %1").arg(double(t.weights[size_t(m_head)](query, key)), 0, 'g', 5)
                                     : tr("masked: weight = 0"));
    if (size_t(query) < t.emptyRows.size() && t.emptyRows[size_t(query)])
        text += QLatin1Char('\n') + tr("this query has no allowed key");
    return text;
}

void HeatmapView::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.fillRect(rect(), Qt::white);
    if (!data().values) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter, m_result ? tr("No heads") : tr("Computing\u2026"));
        return;
    }
    HeatmapRenderer(m_data, options()).paint(p, QRectF(rect()));
}

void HeatmapView::mouseMoveEvent(QMouseEvent *event)
{
    const auto cell = cellAt(event->position());
    if (cell)
        QToolTip::showText(event->globalPosition().toPoint(), cellDescription(cell->y(), cell->x()), this);
    else
        QToolTip::hideText();
}

void HeatmapView::mousePressEvent(QMouseEvent *event)
{
    const auto cell = cellAt(event->position());
    if (!cell)
        return;
    setSelectedCell(cell);
    emit cellSelected(m_head, cell->y(), cell->x());
}

HeadsGridView::HeadsGridView(QWidget *parent) : QWidget(parent)
{
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void HeadsGridView::setResult(ComputedTracePtr result)
{
    m_result = std::move(result);
    setSettings(m_settings);
}

void HeadsGridView::setSettings(const HeatmapViewSettings &settings)
{
    m_settings = settings;
    m_dirty = true;
    update();
}

void HeadsGridView::ensureData() const
{
    if (!m_dirty)
        return;
    m_dirty = false;
    m_data.clear();
    if (m_result)
        for (int h = 0; h < m_result->trace.heads(); ++h)
            // The ranges come computed from the worker: no pass over every head per tile.
            m_data.push_back(HeatmapData::fromTrace(m_result->project, m_result->trace, h, m_settings.quantity,
                                                    m_settings.scope, &m_result->ranges));
}

void HeadsGridView::setCurrentHead(int head)
{
    m_current = head;
    update();
}

int HeadsGridView::heads() const
{
    return m_result ? m_result->trace.heads() : 0;
}

int HeadsGridView::columns() const
{
    const int n = heads();
    if (n <= 0)
        return 1;
    // As square a grid as the widget's aspect allows.
    const double aspect = double(width()) / std::max(1, height());
    int best = 1;
    double bestCell = 0;
    for (int c = 1; c <= n; ++c) {
        const int r = (n + c - 1) / c;
        const double cell = std::min(double(width()) / c, double(height()) / r / std::max(aspect, 0.01) * aspect);
        if (cell > bestCell) {
            bestCell = cell;
            best = c;
        }
    }
    return best;
}

QRectF HeadsGridView::tileRect(int head) const
{
    const int c = columns(), r = (heads() + c - 1) / std::max(c, 1);
    const double w = double(width()) / c, h = double(height()) / std::max(r, 1);
    return QRectF((head % c) * w, (head / c) * h, w, h);
}

int HeadsGridView::headAt(const QPointF &pos) const
{
    for (int h = 0; h < heads(); ++h)
        if (tileRect(h).contains(pos))
            return h;
    return -1;
}

void HeadsGridView::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.fillRect(rect(), Qt::white);
    ensureData();
    if (m_data.empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter, tr("Computing\u2026"));
        return;
    }
    HeatmapOptions o;
    o.colorMap = m_settings.colorMap;
    o.showValues = m_settings.showValues;
    o.showColorBar = false;
    QFont small = font();
    small.setPointSizeF(std::max(6.0, small.pointSizeF() * 0.85));
    o.font = small;
    for (int h = 0; h < heads(); ++h) {
        const QRectF tile = tileRect(h);
        HeatmapRenderer(m_data[size_t(h)], o).paint(p, tile.adjusted(2, 2, -2, -2));
        if (h == m_current) {
            p.setPen(QPen(palette().color(QPalette::Highlight), 2));
            p.setBrush(Qt::NoBrush);
            p.drawRect(tile.adjusted(1, 1, -1, -1));
        }
    }
}

void HeadsGridView::mousePressEvent(QMouseEvent *event)
{
    const int h = headAt(event->position());
    if (h < 0)
        return;
    setCurrentHead(h);
    emit headActivated(h);
}

} // namespace attnscope
