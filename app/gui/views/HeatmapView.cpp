#include "app/gui/views/HeatmapView.h"

#include "app/gui/views/PlainText.h"
#include "app/render/LayerMarks.h"
#include "core/attention/AttentionRules.h"
#include "core/attention/HeadLayout.h"
#include "core/attention/Mask.h"
#include "core/attention/TraceCheck.h"

#include <QKeyEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace attnscope {

namespace {

// A number of the hover text: NaN and an overflow to ±Inf each said as such.
QString number(double v)
{
    if (std::isnan(v))
        return QStringLiteral("NaN");
    if (std::isinf(v))
        return v > 0 ? QStringLiteral("+Inf") : QStringLiteral("-Inf");
    return QString::number(v, 'g', 5);
}

// A difference with its sign, "+0.012" or "-0.034".
QString signedNumber(double v)
{
    return v > 0 && std::isfinite(v) ? QLatin1Char('+') + number(v) : number(v);
}

} // namespace

HeatmapView::HeatmapView(QWidget *parent)
    : QWidget(parent), m_warning(plainLabel({}, this)), m_valuesNote(plainLabel({}, this))
{
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setFocusPolicy(Qt::StrongFocus); // the arrow keys move the selected cell
    m_warning->setObjectName(QStringLiteral("nonFiniteWarning"));
    m_warning->setWordWrap(true);
    m_warning->setMargin(4);
    m_warning->setStyleSheet(QStringLiteral("background: #ffe3fb; color: #6d004f; border: 1px solid #ff00ff"));
    m_warning->hide();
    m_valuesNote->setObjectName(QStringLiteral("valuesHiddenNote"));
    m_valuesNote->setWordWrap(true);
    m_valuesNote->setStyleSheet(QStringLiteral("color: #555"));
    m_valuesNote->hide();
}

QRectF HeatmapView::heatmapRect() const
{
    QRectF r(rect());
    if (!m_warning->isHidden())
        r.setTop(m_warning->geometry().bottom() + 1);
    if (!m_valuesNote->isHidden())
        r.setBottom(m_valuesNote->geometry().top() - 1);
    return r;
}

void HeatmapView::updateNotes()
{
    if (!isVisible())
        return; // a hidden view costs nothing; showEvent() catches up
    const int w = width();
    // The banner: an overflow made the result NaN or Inf somewhere.
    // Scanned once per result (every tensor of a large trace is megabytes), not per repaint.
    // (A weak pointer, not an address: a new result may be allocated where a freed one was.)
    const LayerTensors *tensors = m_shown.shownTensors();
    const std::shared_ptr<const void> layer =
        tensors ? std::shared_ptr<const void>(m_shown.tensors) : std::shared_ptr<const void>(m_shown.maps);
    if (!layer) {
        m_nonFinite = {};
    } else if (m_scanned.lock() != layer) {
        m_scanned = layer;
        m_nonFinite = tensors ? findNonFinite(tensors->trace) : findNonFinite(m_shown.maps->weights, "weights");
    }
    const NonFiniteReport &bad = m_nonFinite;
    if (bad.any()) {
        const QString where = bad.head >= 0 ? tr("%1 of head %2").arg(QString::fromStdString(bad.tensor)).arg(bad.head)
                                            : QString::fromStdString(bad.tensor);
        m_warning->setText(tr("The result is not finite: %1 NaN values (magenta cells) and %2 infinite values, "
                              "+Inf or -Inf (cyan cells); the first in %3. The inputs are finite, so the "
                              "arithmetic overflowed float32: make the inputs, weights or scale smaller.")
                               .arg(bad.nanCount)
                               .arg(bad.count - bad.nanCount)
                               .arg(where));
        m_warning->setGeometry(0, 0, w, m_warning->heightForWidth(w));
        m_warning->show();
    } else {
        m_warning->hide();
    }
    // The note: values were asked for, but the cells are too small to hold them.
    m_valuesNote->hide();
    if (data().values && m_settings.showValues) {
        QRectF area(rect());
        if (!m_warning->isHidden())
            area.setTop(m_warning->geometry().bottom() + 1);
        const HeatmapLayout l = HeatmapRenderer(shownData(), options()).layout(area);
        if (l.valuesHidden) {
            m_valuesNote->setText(tr("Values hidden: cells are smaller than %1 px. Zoom in with the wheel or "
                                     "enlarge the view to read them, or hover a cell for its numbers.")
                                      .arg(int(std::ceil(l.valueCellSize))));
            const int h = m_valuesNote->heightForWidth(w - 8);
            m_valuesNote->setGeometry(4, height() - h - 2, w - 8, h);
            m_valuesNote->show();
        }
    }
}

void HeatmapView::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    updateNotes();
}

void HeatmapView::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    updateNotes();
}

void HeatmapView::setAttention(ShownAttention shown)
{
    m_shown = std::move(shown);
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
    if (m_selected && (m_selected->y() >= m_shown.shownQueries() || m_selected->x() >= m_shown.shownKeys()))
        m_selected.reset();
    m_zoom.setMapSize(int(m_shown.shownQueries()), int(m_shown.shownKeys()));
    updateNotes();
    update();
}

const HeatmapData &HeatmapView::data() const
{
    if (m_dirty) {
        m_dirty = false;
        m_data = HeatmapData();
        const int heads = m_shown.heads();
        if (heads > 0)
            // A difference (a signed set): the map on its own scale, ±max|value| around 0.
            m_data = HeatmapData::of(m_shown, m_head >= heads ? heads - 1 : m_head, m_settings.quantity,
                                     m_shown.set.isSigned() ? ScaleScope::PerHead : m_settings.scope);
    }
    return m_data;
}

HeatmapOptions HeatmapView::options() const
{
    HeatmapOptions o;
    o.colorMap = m_settings.colorMap;
    o.colorScale = m_settings.colorScale;
    o.showValues = m_settings.showValues;
    o.font = font();
    const QRect visible = visibleCells();
    if (m_selected && visible.contains(*m_selected))
        o.highlight = *m_selected - visible.topLeft();
    if (m_shown.shownNewRow() >= visible.top() && m_shown.shownNewRow() <= visible.bottom())
        o.highlightRow = m_shown.shownNewRow() - visible.top();
    o.axisTitles = true;
    return o;
}

QRect HeatmapView::visibleCells() const
{
    return m_zoom.visible();
}

const HeatmapData &HeatmapView::shownData() const
{
    return m_zoom.shown(data(), m_settings.colorScale);
}

void HeatmapView::zoomChanged()
{
    updateNotes();
    update();
}

void HeatmapView::zoomBy(double factor, QPointF aroundCell)
{
    m_zoom.zoomBy(factor, aroundCell);
    zoomChanged();
}

void HeatmapView::resetZoom()
{
    m_zoom.reset();
    zoomChanged();
}

std::optional<QPoint> HeatmapView::cellAt(const QPointF &pos) const
{
    if (!data().values)
        return std::nullopt;
    const auto cell = HeatmapRenderer(shownData(), options()).cellAt(heatmapRect(), pos);
    if (!cell)
        return std::nullopt;
    return *cell + visibleCells().topLeft();
}

QRectF HeatmapView::cellRect(int query, int key) const
{
    const HeatmapLayout l = HeatmapRenderer(shownData(), options()).layout(heatmapRect());
    const QPoint origin = visibleCells().topLeft();
    return QRectF(l.grid.left() + (key - origin.x()) * l.cellWidth, l.grid.top() + (query - origin.y()) * l.cellHeight,
                  l.cellWidth, l.cellHeight);
}

QString HeatmapView::cellDescription(int query, int key) const
{
    data();
    if (!m_data.values || query < 0 || key < 0 || query >= m_data.rows() || key >= m_data.cols())
        return {};
    const QString q = m_data.rowLabels.value(query), k = m_data.columnLabels.value(key);
    QString text = tr("Query %1 \"%2\" \u2192 key %3 \"%4\"").arg(query).arg(q).arg(key).arg(k);
    if (m_shown.set.isSigned()) // a comparison's B − A, with its sign
        return text + QLatin1Char('\n') +
               (m_head < 0 || m_head >= m_shown.heads()
                    ? tr("mean difference over heads (B \u2212 A): %1").arg(signedNumber((*m_data.values)(query, key)))
                    : tr("difference B \u2212 A = %1")
                          .arg(signedNumber((*m_shown.weights())[size_t(m_head)](query, key))));
    if (m_head < 0 || m_head >= m_shown.heads()) {
        return text + QLatin1Char('\n') + tr("mean weight over heads: %1").arg(number((*m_data.values)(query, key)));
    }
    const LayerTensors *tensors = m_shown.shownTensors();
    if (!tensors || !m_shown.scores()) // a file (or a model run's layer not computed again): weights only
        return text + QLatin1Char('\n') +
               tr("weight = %1").arg(number((*m_shown.weights())[size_t(m_head)](query, key)));
    const AttentionTrace &t = tensors->trace;
    const AttentionProblem &p = tensors->project.problem;
    const double scale = p.spec.scale();
    const HeadLayout layout = HeadLayout::of(p.spec);
    const int g = layout.kvHeadOf(m_head);
    const double score = t.scores[size_t(m_head)](query, key);
    const double weight = t.weights[size_t(m_head)](query, key);
    const bool allowed = m_data.isAllowed(query, key);
    const bool empty = m_data.isEmptyRow(query);
    const StructuralMask structure(p);
    // Each term of the cell, in the order they are applied (design.md, "Modern attention").
    if (layout.grouped())
        text += QLatin1Char('\n') + tr("keys and values of key/value head %1 (shared by query heads %2\u2013%3)")
                                        .arg(g)
                                        .arg(layout.firstQueryHead(g))
                                        .arg(layout.firstQueryHead(g) + layout.groupSize() - 1);
    if (p.spec.rope)
        text += QLatin1Char('\n') + tr("RoPE: query at position %1, key at %2 (distance %3)")
                                        .arg(structure.queryPosition(query))
                                        .arg(structure.keyPosition(key))
                                        .arg(structure.queryPosition(query) - structure.keyPosition(key));
    const double dot = double(t.q[size_t(m_head)].row(query).dot(t.k[size_t(g)].row(key)));
    text += QLatin1Char('\n') + tr("q\u00b7k = %1").arg(number(dot));
    if (p.spec.softcap)
        text +=
            QLatin1Char('\n') + tr("scaled = %1 (\u00d7 %2), soft-capped: %3\u00b7tanh(scaled/%3) = %4")
                                    .arg(number(dot * scale), number(scale), number(*p.spec.softcap), number(score));
    else
        text += QLatin1Char('\n') + tr("scaled score = %1 (\u00d7 %2)").arg(number(score), number(scale));
    // Why the weight is what it is: the rules of core/attention/AttentionRules, phrased here.
    const WeightRule rule = weightRule(p.spec.maskFill, allowed, empty, p.tk());
    const QString fill = QString::fromLatin1(maskFillText(p.spec.maskFill));
    QString why;
    if (!std::isfinite(weight)) {
        why = tr("weight = %1: not finite (the scores overflowed float32)").arg(number(weight));
    } else {
        switch (rule.kind) {
        case WeightCase::Softmax:
            why = tr("weight = %1").arg(weight, 0, 'g', 5);
            break;
        case WeightCase::Masked:
            switch (structure.reason(query, key)) {
            case MaskReason::Causal:
                why = tr("masked (causal: the key comes after the query): weight = 0");
                break;
            case MaskReason::Window:
                why = p.mask.window == 1
                          ? tr("masked (outside the sliding window of 1 key): weight = 0")
                          : tr("masked (outside the sliding window of %1 keys): weight = 0").arg(p.mask.window);
                break;
            case MaskReason::Padding:
                why = tr("masked (the key is padding): weight = 0");
                break;
            default:
                why = tr("masked: weight = 0");
                break;
            }
            break;
        case WeightCase::EmptyRowZero:
            why = tr("masked, and this query has no allowed key: with the fill %1 the whole row has weight = 0 "
                     "(PyTorch gives NaN)")
                      .arg(fill);
            break;
        case WeightCase::EmptyRowUniform:
            why = tr("masked, but this query has no allowed key: every logit is the fill %1, so the weights are "
                     "uniform, 1/%2 = %3")
                      .arg(fill)
                      .arg(p.tk())
                      .arg(weight, 0, 'g', 5);
            break;
        }
    }
    text += QLatin1Char('\n') + why;
    if (empty && rule.kind == WeightCase::Softmax)
        text += QLatin1Char('\n') + tr("this query has no allowed key");
    if (p.weights.sinks)
        text += QLatin1Char('\n') + tr("the sink (%1) takes %2 of this row")
                                        .arg(number((*p.weights.sinks)[m_head]),
                                             number(1.0 - double(t.weights[size_t(m_head)].row(query).sum())));
    return text;
}

void HeatmapView::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.fillRect(rect(), Qt::white);
    if (!data().values) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter, m_shown.weights() ? tr("No heads") : tr("Computing\u2026"));
        return;
    }
    HeatmapRenderer(shownData(), options()).paint(p, heatmapRect());
}

void HeatmapView::mouseMoveEvent(QMouseEvent *event)
{
    if (m_zoom.isDragging() && (event->buttons() & Qt::LeftButton)) {
        const QPointF moved = event->position() - m_pressAt;
        const HeatmapLayout l = HeatmapRenderer(shownData(), options()).layout(heatmapRect());
        if (moved.manhattanLength() > 4 && l.cellWidth > 0) {
            m_zoom.moveBy(QPointF(moved.x() / l.cellWidth, moved.y() / l.cellHeight));
            zoomChanged();
            setCursor(Qt::ClosedHandCursor);
            QToolTip::hideText();
            return;
        }
    }
    const auto cell = cellAt(event->position());
    if (cell)
        QToolTip::showText(event->globalPosition().toPoint(), plainToolTip(cellDescription(cell->y(), cell->x())),
                           this);
    else
        QToolTip::hideText();
}

void HeatmapView::mousePressEvent(QMouseEvent *event)
{
    m_pressAt = event->position();
    if (m_zoom.isZoomed())
        m_zoom.beginDrag();
    const auto cell = cellAt(event->position());
    if (!cell)
        return;
    setSelectedCell(cell);
    emit cellSelected(m_head, cell->y(), cell->x());
}

void HeatmapView::mouseReleaseEvent(QMouseEvent *event)
{
    m_zoom.endDrag();
    unsetCursor();
    QWidget::mouseReleaseEvent(event);
}

void HeatmapView::mouseDoubleClickEvent(QMouseEvent *event)
{
    resetZoom();
    event->accept();
}

void HeatmapView::wheelEvent(QWheelEvent *event)
{
    if (!data().values || event->angleDelta().y() == 0) {
        event->ignore();
        return;
    }
    // The fractional cell under the cursor, kept where it is.
    const HeatmapLayout l = HeatmapRenderer(shownData(), options()).layout(heatmapRect());
    zoomBy(std::pow(1.25, event->angleDelta().y() / 120.0), m_zoom.cellAt(l, event->position()));
    event->accept();
}

void HeatmapView::keyPressEvent(QKeyEvent *event)
{
    const int rows = int(m_shown.shownQueries()), cols = int(m_shown.shownKeys());
    if (rows <= 0 || cols <= 0) {
        QWidget::keyPressEvent(event);
        return;
    }
    const QRect v = visibleCells();
    const QPointF centre = m_selected ? QPointF(m_selected->x() + 0.5, m_selected->y() + 0.5)
                                      : QPointF(v.center().x() + 0.5, v.center().y() + 0.5);
    QPoint move;
    switch (event->key()) {
    case Qt::Key_Left:
        move = {-1, 0};
        break;
    case Qt::Key_Right:
        move = {1, 0};
        break;
    case Qt::Key_Up:
        move = {0, -1};
        break;
    case Qt::Key_Down:
        move = {0, 1};
        break;
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        zoomBy(1.5, centre);
        return;
    case Qt::Key_Minus:
        zoomBy(1 / 1.5, centre);
        return;
    case Qt::Key_Home:
        resetZoom();
        return;
    default:
        QWidget::keyPressEvent(event);
        return;
    }
    // The arrows move the selected cell (the first in view when none is), as a click would.
    const QPoint cell = m_selected ? QPoint(std::clamp(m_selected->x() + move.x(), 0, cols - 1),
                                            std::clamp(m_selected->y() + move.y(), 0, rows - 1))
                                   : v.topLeft();
    m_zoom.ensureVisible(cell);
    zoomChanged();
    setSelectedCell(cell);
    emit cellSelected(m_head, cell.y(), cell.x());
}

HeadsGridView::HeadsGridView(QWidget *parent) : QAbstractScrollArea(parent)
{
    setFrameShape(QFrame::NoFrame); // the viewport starts at the widget's corner
    viewport()->setAttribute(Qt::WA_OpaquePaintEvent);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
}

void HeadsGridView::setAttention(ShownAttention shown)
{
    m_shown = std::move(shown);
    setSettings(m_settings);
    updateScrollRange();
}

void HeadsGridView::setSettings(const HeatmapViewSettings &settings)
{
    m_settings = settings;
    m_dirty = true;
    viewport()->update();
}

void HeadsGridView::ensureData() const
{
    if (!m_dirty)
        return;
    m_dirty = false;
    m_data.clear();
    for (int h = 0; h < m_shown.heads(); ++h)
        // The ranges come computed from the worker: no pass over every head per tile.
        // A difference: every tile on the layer's ±max|value|, so that tiles compare.
        m_data.push_back(HeatmapData::of(m_shown, h, m_settings.quantity,
                                         m_shown.set.isSigned() ? ScaleScope::Shared : m_settings.scope));
}

void HeadsGridView::setCurrentHead(int head)
{
    m_current = head;
    ensureHeadVisible(head);
    viewport()->update();
}

int HeadsGridView::heads() const
{
    return m_shown.heads();
}

int HeadsGridView::groupSize() const
{
    return keyValueGroupSize(m_shown.set.facts(m_shown.layer), heads());
}

int HeadsGridView::columns() const
{
    const int n = heads();
    const QSize size = viewport()->size();
    if (n <= 0 || size.isEmpty())
        return 1;
    // Heads sharing keys and values stay together: a row holds whole groups, or a group whole rows.
    const int group = groupSize();
    auto keepsGroups = [group](int c) { return c % group == 0 || group % c == 0; };
    // As square a grid as the view's aspect allows, every head in view...
    int best = 1;
    double bestCell = 0;
    for (int c = 1; c <= n; ++c) {
        if (!keepsGroups(c))
            continue;
        const int r = (n + c - 1) / c;
        const double cell = std::min(double(size.width()) / c, double(size.height()) / r);
        if (cell > bestCell) {
            bestCell = cell;
            best = c;
        }
    }
    if (bestCell >= kMinTileSize)
        return best;
    // ...unless that makes tiles too small to read: then as many readable tiles per row as
    // fit, and the rows scroll.
    int c = std::clamp(size.width() / kMinTileSize, 1, n);
    while (c > 1 && !keepsGroups(c))
        --c;
    return c;
}

QSizeF HeadsGridView::tileSize() const
{
    const int c = columns(), r = (heads() + c - 1) / std::max(c, 1);
    const QSize size = viewport()->size();
    const double w = double(size.width()) / c;
    const double h = double(size.height()) / std::max(r, 1);
    if (std::min(w, h) >= kMinTileSize)
        return {w, h};
    return {std::max(w, double(kMinTileSize)), std::max(std::min(w, double(kMinTileSize) * 1.2), double(kMinTileSize))};
}

void HeadsGridView::updateScrollRange()
{
    const int c = columns(), r = (heads() + c - 1) / std::max(c, 1);
    const int content = int(std::ceil(tileSize().height() * r));
    QScrollBar *bar = verticalScrollBar();
    bar->setPageStep(viewport()->height());
    bar->setSingleStep(std::max(1, int(tileSize().height() / 4)));
    bar->setRange(0, std::max(0, content - viewport()->height()));
}

void HeadsGridView::resizeEvent(QResizeEvent *event)
{
    QAbstractScrollArea::resizeEvent(event);
    updateScrollRange();
}

void HeadsGridView::scrollContentsBy(int, int)
{
    viewport()->update();
}

QRectF HeadsGridView::tileRect(int head) const
{
    const int c = columns();
    const QSizeF t = tileSize();
    return QRectF((head % c) * t.width(), (head / c) * t.height() - verticalScrollBar()->value(), t.width(),
                  t.height());
}

int HeadsGridView::headAt(const QPointF &pos) const
{
    for (int h = 0; h < heads(); ++h)
        if (tileRect(h).contains(pos))
            return h;
    return -1;
}

void HeadsGridView::ensureHeadVisible(int head)
{
    if (head < 0 || head >= heads())
        return;
    updateScrollRange();
    const QRectF tile = tileRect(head);
    QScrollBar *bar = verticalScrollBar();
    if (tile.top() < 0)
        bar->setValue(bar->value() + int(std::floor(tile.top())));
    else if (tile.bottom() > viewport()->height())
        bar->setValue(bar->value() + int(std::ceil(tile.bottom() - viewport()->height())));
}

void HeadsGridView::paintEvent(QPaintEvent *)
{
    QPainter p(viewport());
    p.fillRect(viewport()->rect(), Qt::white);
    ensureData();
    if (m_data.empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(viewport()->rect(), Qt::AlignCenter, tr("Computing\u2026"));
        return;
    }
    HeatmapOptions o;
    o.colorMap = m_settings.colorMap;
    o.colorScale = m_settings.colorScale;
    o.showValues = m_settings.showValues;
    o.showColorBar = false;
    if (m_shown.shownNewRow() >= 0)
        o.highlightRow = m_shown.shownNewRow();
    QFont small = font();
    small.setPointSizeF(std::max(6.0, small.pointSizeF() * 0.85));
    o.font = small;
    const QRectF visible(viewport()->rect());
    for (int h = 0; h < heads(); ++h) {
        const QRectF tile = tileRect(h);
        if (!tile.intersects(visible))
            continue; // 256 heads: only the tiles in view are painted
        HeatmapRenderer(m_data[size_t(h)], o).paint(p, tile.adjusted(2, 2, -2, -2));
        if (h == m_current) {
            p.setPen(QPen(palette().color(QPalette::Highlight), 2));
            p.setBrush(Qt::NoBrush);
            p.drawRect(tile.adjusted(1, 1, -1, -1));
        }
    }
    // Each key/value head's query heads framed together, named at the frame's top right.
    const int group = groupSize();
    if (group <= 1)
        return;
    for (int g = 0; g * group < heads(); ++g) {
        const QRectF frame = tileRect(g * group).united(tileRect((g + 1) * group - 1));
        if (frame.intersects(visible))
            paintKeyValueGroup(p, frame, g, tr("K/V head %1").arg(g), small);
    }
}

bool HeadsGridView::event(QEvent *event)
{
    // QAbstractScrollArea ignores mouse presses sent to itself rather than to its viewport;
    // a press on the grid (a test's, an accessibility tool's) still activates the head there.
    if (event->type() == QEvent::MouseButtonPress) {
        auto *press = static_cast<QMouseEvent *>(event);
        const int h = headAt(viewport()->mapFrom(this, press->position()));
        if (h >= 0 && press->button() == Qt::LeftButton) {
            setCurrentHead(h);
            emit headActivated(h);
            return true;
        }
    }
    return QAbstractScrollArea::event(event);
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
