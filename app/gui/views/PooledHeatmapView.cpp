#include "app/gui/views/PooledHeatmapView.h"

#include "app/gui/document/MemoryBudget.h"
#include "app/gui/views/ElidedLabel.h"
#include "app/gui/views/PlainText.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QProgressBar>
#include <QTimer>
#include <QToolTip>
#include <QVBoxLayout>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace attnscope {

namespace {

// Room for the head selector and the caption above, for the token labels left of and above
// the map, and for the colour bar right of it.
constexpr int kBarHeight = 58, kLeftMargin = 76, kTopMargin = 70, kEdge = 8, kRightMargin = 78;
constexpr double kMinTokens = 4.0; // the deepest zoom: 4 tokens across

// The largest "nice" step (1, 2, 5 x 10^n) that leaves at least `minPixels` between ticks.
double tickStep(double tokens, double pixels, double minPixels)
{
    const double raw = tokens * minPixels / std::max(pixels, 1.0);
    double step = std::pow(10.0, std::floor(std::log10(std::max(raw, 1.0))));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (step * m >= raw)
            return std::max(1.0, step * m);
    return std::max(1.0, step * 10.0);
}

// The positions labelled along an axis that shows [lo, hi): with a label per token, every
// token whose middle shows (the first one too when its edge is just outside); else the
// multiples of `step`.
std::vector<std::int64_t> labelPositions(double lo, double hi, bool perToken, double step)
{
    std::vector<std::int64_t> out;
    if (perToken) {
        for (double t = std::floor(lo); t < hi; t += 1.0)
            if (t + 0.5 >= lo && t + 0.5 < hi)
                out.push_back(std::int64_t(t));
        return out;
    }
    for (double t = std::ceil(lo / step) * step; t < hi; t += step)
        out.push_back(std::int64_t(t));
    return out;
}

} // namespace

PooledHeatmapView::PooledHeatmapView(QWidget *parent)
    : QWidget(parent), m_jobs(new PooledJobs(this)), m_settle(new QTimer(this)), m_progressTimer(new QTimer(this)),
      m_headBox(new QComboBox), m_info(plainLabel()), m_progress(new QProgressBar), m_caption(new ElidedLabel),
      m_quantityNotice(new ElidedLabel)
{
    setObjectName(QStringLiteral("pooledView"));
    setMinimumSize(320, 240);
    setMouseTracking(true); // hover text
    setFocusPolicy(Qt::WheelFocus);
    auto *bar = new QHBoxLayout;
    bar->setContentsMargins(kEdge, 4, kEdge, 4);
    bar->addWidget(m_headBox);
    bar->addWidget(m_info, 1);
    m_progress->setRange(0, 100);
    m_progress->setMaximumWidth(220);
    m_progress->setFormat(tr("Computing %p%"));
    m_progress->hide();
    bar->addWidget(m_progress);
    m_caption->setObjectName(QStringLiteral("pooledCaption"));
    m_quantityNotice->setObjectName(QStringLiteral("pooledQuantityNotice"));
    m_quantityNotice->setStyleSheet(QStringLiteral("color: #b35900"));
    m_quantityNotice->setText(
        tr("Only attention weights are pooled: scores are not computed for long sequences, so the map shows weights."));
    m_quantityNotice->hide();
    auto *captionRow = new QHBoxLayout;
    captionRow->setContentsMargins(kEdge, 0, kEdge, 0);
    captionRow->addWidget(m_caption, 1);
    captionRow->addWidget(m_quantityNotice, 1);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addLayout(bar);
    layout->addLayout(captionRow);
    layout->addStretch(1);
    m_info->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_info->setObjectName(QStringLiteral("pooledInfo"));

    // One computation per resting view: the zoom and pan steps of a gesture are coalesced.
    m_settle->setSingleShot(true);
    m_settle->setInterval(kSettleMs);
    connect(m_settle, &QTimer::timeout, this, &PooledHeatmapView::settled);
    m_progressTimer->setInterval(100);
    connect(m_progressTimer, &QTimer::timeout, this, &PooledHeatmapView::updateProgress);
    connect(m_jobs, &PooledJobs::busyChanged, this, [this](bool busy) {
        if (busy)
            m_progressTimer->start();
        else
            m_progressTimer->stop();
        updateProgress();
    });
    connect(m_jobs, &PooledJobs::tileReady, this, [this](PooledTilePtr tile) { tileArrived(std::move(tile)); });
    connect(m_jobs, &PooledJobs::failed, this, [this](const QString &message) {
        m_error = message;
        m_info->setText(message.section(QLatin1Char('\n'), 0, 0));
        update();
    });
    connect(m_headBox, &QComboBox::activated, this, [this] { setHead(m_headBox->currentData().toInt()); });
}

void PooledHeatmapView::setSource(std::shared_ptr<const PooledTileSource> source)
{
    // Another version of the same set (an edit of a long project) keeps the view and the head.
    const bool sameShape = source && m_source && source->shape().queries == m_source->shape().queries &&
                           source->shape().keys == m_source->shape().keys &&
                           source->shape().heads == m_source->shape().heads;
    m_source = source;
    m_tiles.clear(); // another set (or version of it): every tile is stale
    m_error.clear();
    m_jobs->setSource(source);
    if (!sameShape && source)
        m_view = QRectF(0, 0, double(source->shape().keys), double(source->shape().queries));
    if (!sameShape)
        m_head = source && source->shape().heads > 1 ? -1 : 0;
    fillHeadBox();
    invalidateImages();
    updateCaption();
    if (source)
        m_settle->start();
    update();
}

void PooledHeatmapView::fillHeadBox()
{
    m_headBox->clear();
    const int heads = m_source ? m_source->shape().heads : 0;
    if (heads > 1)
        m_headBox->addItem(tr("Mean over heads"), -1);
    for (int h = 0; h < heads; ++h)
        m_headBox->addItem(tr("Head %1").arg(h), h);
    m_headBox->setCurrentIndex(std::max(0, m_headBox->findData(m_head)));
}

void PooledHeatmapView::setHead(int head)
{
    if (head == m_head)
        return;
    m_head = head;
    m_headBox->setCurrentIndex(std::max(0, m_headBox->findData(head)));
    updateCaption();
    update(); // every tile holds every head: nothing to compute
}

void PooledHeatmapView::setColorMap(ColorMapKind kind)
{
    m_colorMap = ColorMap(kind);
    invalidateImages();
}

void PooledHeatmapView::setColorScale(ColorScaleKind kind)
{
    if (kind == m_colorScaleKind)
        return;
    m_colorScaleKind = kind;
    invalidateImages();
}

void PooledHeatmapView::setScope(ScaleScope scope)
{
    if (scope == m_scope)
        return;
    m_scope = scope;
    invalidateImages();
}

void PooledHeatmapView::setQuantity(HeatmapQuantity quantity)
{
    m_quantity = quantity;
    m_quantityNotice->setVisible(quantity != HeatmapQuantity::Weights);
}

void PooledHeatmapView::invalidateImages()
{
    for (CachedTile &t : m_tiles)
        t.imageHead = -2;
    m_scaleTile.reset();
    m_scaleHead = -2;
    update();
}

QRectF PooledHeatmapView::plotRect() const
{
    return QRectF(kLeftMargin, kBarHeight + kTopMargin, std::max(16, width() - kLeftMargin - kRightMargin),
                  std::max(16, height() - kBarHeight - kTopMargin - kEdge));
}

QRectF PooledHeatmapView::clamped(QRectF v) const
{
    if (!m_source)
        return v;
    const double tk = double(m_source->shape().keys), tq = double(m_source->shape().queries);
    v.setWidth(std::clamp(v.width(), std::min(kMinTokens, tk), tk));
    v.setHeight(std::clamp(v.height(), std::min(kMinTokens, tq), tq));
    v.moveLeft(std::clamp(v.left(), 0.0, tk - v.width()));
    v.moveTop(std::clamp(v.top(), 0.0, tq - v.height()));
    return v;
}

void PooledHeatmapView::setViewRect(const QRectF &view)
{
    const QRectF v = clamped(view);
    if (v == m_view)
        return;
    m_view = v;
    m_settle->start(); // restarts: a gesture computes once, when it rests
    updateCaption();
    update();
}

PooledBlock PooledHeatmapView::visibleBlock() const
{
    PooledBlock b;
    if (!m_source || m_source->shape().queries < 1 || m_source->shape().keys < 1)
        return b; // nothing to show: an empty block
    const std::int64_t tq = m_source->shape().queries, tk = m_source->shape().keys;
    b.q0 = std::clamp<std::int64_t>(std::int64_t(std::floor(m_view.top() + 1e-9)), 0, tq - 1);
    b.q1 = std::clamp<std::int64_t>(std::int64_t(std::ceil(m_view.bottom() - 1e-9)), b.q0 + 1, tq);
    b.k0 = std::clamp<std::int64_t>(std::int64_t(std::floor(m_view.left() + 1e-9)), 0, tk - 1);
    b.k1 = std::clamp<std::int64_t>(std::int64_t(std::ceil(m_view.right() - 1e-9)), b.k0 + 1, tk);
    // About one cell per pixel: finer would not show, coarser would blur.
    const QRectF plot = plotRect();
    b.bins = std::clamp<std::int64_t>(std::int64_t(std::max(plot.width(), plot.height())), 16, kPooledViewBins);
    return b;
}

PooledHeatmapView::CachedTile *PooledHeatmapView::find(const PooledBlock &block)
{
    for (CachedTile &t : m_tiles)
        if (t.tile->block == block)
            return &t;
    return nullptr;
}

PooledTilePtr PooledHeatmapView::visibleTile() const
{
    const PooledBlock block = visibleBlock();
    for (const CachedTile &t : m_tiles)
        if (t.tile->block == block)
            return t.tile;
    return nullptr;
}

void PooledHeatmapView::settled()
{
    const PooledBlock block = visibleBlock();
    if (!m_source || block.rows() < 1 || block.keys() < 1)
        return;
    for (auto it = m_tiles.begin(); it != m_tiles.end(); ++it)
        if (it->tile->block == block) {
            m_tiles.splice(m_tiles.begin(), m_tiles, it); // used again: to the front
            emit visibleTileReady(it->tile);
            return;
        }
    m_jobs->request(block);
}

void PooledHeatmapView::tileArrived(PooledTilePtr tile)
{
    if (!m_source || tile->source != m_jobs->sourceGeneration())
        return;
    m_error.clear();
    m_tiles.push_front(CachedTile{tile, QImage(), -2});
    // Least recently used out first; the whole problem's tile stays, the view falls back on it.
    const std::int64_t tq = m_source->shape().queries, tk = m_source->shape().keys;
    for (auto it = std::prev(m_tiles.end()); int(m_tiles.size()) > kMaxTiles && it != m_tiles.begin();) {
        const PooledBlock &b = it->tile->block;
        const bool whole = b.q0 == 0 && b.k0 == 0 && b.q1 == tq && b.k1 == tk;
        it = whole ? std::prev(it) : std::prev(m_tiles.erase(it));
    }
    const PooledBlock &b = tile->block; // first and last token shown, as labels and hover say
    if (b.rows() <= b.bins && b.keys() <= b.bins)
        m_info->setText(tr("Queries %1–%2 × keys %3–%4, exact (one cell per token), computed in %5 ms")
                            .arg(b.q0)
                            .arg(b.q1 - 1)
                            .arg(b.k0)
                            .arg(b.k1 - 1)
                            .arg(tile->milliseconds, 0, 'f', 0));
    else
        m_info->setText(tr("Queries %1–%2 × keys %3–%4, max-pooled to %5 × %6 cells, computed in %7 ms")
                            .arg(b.q0)
                            .arg(b.q1 - 1)
                            .arg(b.k0)
                            .arg(b.k1 - 1)
                            .arg(tile->heads.front().rows())
                            .arg(tile->heads.front().cols())
                            .arg(tile->milliseconds, 0, 'f', 0));
    if (b == visibleBlock())
        emit visibleTileReady(tile);
    update();
}

void PooledHeatmapView::updateProgress()
{
    // Only computations that take a while get a bar: short ones would flicker.
    const bool show = m_jobs->isBusy() && m_jobs->runningMilliseconds() > kProgressAfterMs;
    if (show)
        m_progress->setValue(int(std::lround(100.0 * m_jobs->progress())));
    m_progress->setVisible(show);
}

QImage PooledHeatmapView::imageOf(const PooledTile &tile) const
{
    const MatrixF &m = shownMatrix(tile);
    QImage image(int(m.cols()), int(m.rows()), QImage::Format_RGB32);
    for (Eigen::Index a = 0; a < m.rows(); ++a) {
        auto *line = reinterpret_cast<QRgb *>(image.scanLine(int(a)));
        for (Eigen::Index b = 0; b < m.cols(); ++b)
            line[b] = colorOf(m(a, b));
    }
    return image;
}

void PooledHeatmapView::paintEvent(QPaintEvent *)
{
    QPainter painter(this);
    painter.fillRect(rect(), palette().color(QPalette::Base));
    if (!m_source)
        return;
    const QRectF plot = plotRect();
    const double sx = plot.width() / m_view.width(), sy = plot.height() / m_view.height();
    // Coarse tiles first, finer ones over them: the best picture computed so far shows.
    std::vector<CachedTile *> order;
    for (CachedTile &t : m_tiles) {
        const PooledBlock &b = t.tile->block;
        if (QRectF(double(b.k0), double(b.q0), double(b.keys()), double(b.rows())).intersects(m_view))
            order.push_back(&t);
    }
    auto coarseness = [](const CachedTile *t) {
        const PooledBlock &b = t->tile->block;
        return std::max(double(b.rows()) / double(t->tile->mean.rows()),
                        double(b.keys()) / double(t->tile->mean.cols()));
    };
    std::stable_sort(order.begin(), order.end(),
                     [&](const CachedTile *a, const CachedTile *b) { return coarseness(a) > coarseness(b); });
    if (refreshScale()) // a new colour range: every image of the old one is stale
        for (CachedTile &t : m_tiles)
            t.imageHead = -2;
    painter.save();
    painter.setClipRect(plot);
    painter.setRenderHint(QPainter::SmoothPixmapTransform, false);
    for (CachedTile *t : order) {
        if (t->imageHead != m_head) {
            t->image = imageOf(*t->tile);
            t->imageHead = m_head;
        }
        const PooledBlock &b = t->tile->block;
        const QRectF target(plot.left() + (double(b.k0) - m_view.left()) * sx,
                            plot.top() + (double(b.q0) - m_view.top()) * sy, double(b.keys()) * sx,
                            double(b.rows()) * sy);
        painter.drawImage(target, t->image);
    }
    painter.restore();
    painter.setPen(palette().color(QPalette::Mid));
    painter.drawRect(plot.adjusted(-0.5, -0.5, 0.5, 0.5));
    if (order.empty()) {
        painter.setPen(palette().color(QPalette::Text));
        painter.drawText(plot.adjusted(12, 12, -12, -12), Qt::AlignCenter | Qt::TextWordWrap,
                         m_error.isEmpty() ? tr("Computing the pooled attention…") : m_error);
    }
    paintLabels(painter, plot);
    if (!order.empty())
        paintColorBar(painter, QRectF(plot.right() + 10, plot.top(), 14, std::min(plot.height(), 320.0)));
}

std::vector<std::int64_t> PooledHeatmapView::queryLabelTokens() const
{
    const QRectF plot = plotRect();
    const bool perToken = plot.height() / m_view.height() >= kLabelPixels;
    return labelPositions(m_view.top(), m_view.bottom(), perToken,
                          perToken ? 1.0 : tickStep(m_view.height(), plot.height(), 40.0));
}

std::vector<std::int64_t> PooledHeatmapView::keyLabelTokens() const
{
    const QRectF plot = plotRect();
    const bool perToken = plot.width() / m_view.width() >= kLabelPixels;
    return labelPositions(m_view.left(), m_view.right(), perToken,
                          perToken ? 1.0 : tickStep(m_view.width(), plot.width(), 60.0));
}

void PooledHeatmapView::paintLabels(QPainter &painter, const QRectF &plot) const
{
    const double sx = plot.width() / m_view.width(), sy = plot.height() / m_view.height();
    const auto &queries = m_source->shape().queryLabels;
    const auto &keys = m_source->shape().keyLabels;
    painter.setPen(palette().color(QPalette::Text));
    const QFontMetrics fm(font());
    // Queries, left of the map: every token once it has kLabelPixels, else token numbers.
    const bool queryLabels = sy >= kLabelPixels;
    for (const std::int64_t i : queryLabelTokens()) {
        const double y = plot.top() + ((queryLabels ? double(i) + 0.5 : double(i)) - m_view.top()) * sy;
        const QString text =
            queryLabels && size_t(i) < queries.size() ? QString::fromStdString(queries[size_t(i)]) : QString::number(i);
        painter.drawText(QRectF(0, y - sy / 2 - 8, kLeftMargin - 6, std::max(sy, 1.0) + 16),
                         Qt::AlignRight | Qt::AlignVCenter, fm.elidedText(text, Qt::ElideRight, kLeftMargin - 8));
    }
    // Keys, above the map, written upwards.
    const bool keyLabels = sx >= kLabelPixels;
    for (const std::int64_t j : keyLabelTokens()) {
        const double x = plot.left() + ((keyLabels ? double(j) + 0.5 : double(j)) - m_view.left()) * sx;
        const QString text =
            keyLabels && size_t(j) < keys.size() ? QString::fromStdString(keys[size_t(j)]) : QString::number(j);
        painter.save();
        painter.translate(x, plot.top() - 4);
        painter.rotate(-90);
        painter.drawText(QRectF(0, -8, kTopMargin - 6, 16), Qt::AlignLeft | Qt::AlignVCenter,
                         fm.elidedText(text, Qt::ElideRight, kTopMargin - 8));
        painter.restore();
    }
}

void PooledHeatmapView::wheelEvent(QWheelEvent *event)
{
    const QRectF plot = plotRect();
    if (!m_source || event->angleDelta().y() == 0)
        return;
    // The token under the cursor stays under it.
    const QPointF pos = event->position();
    zoomAround(QPointF(std::clamp((pos.x() - plot.left()) / plot.width(), 0.0, 1.0),
                       std::clamp((pos.y() - plot.top()) / plot.height(), 0.0, 1.0)),
               std::pow(0.8, event->angleDelta().y() / 120.0));
    event->accept();
}

void PooledHeatmapView::keyPressEvent(QKeyEvent *event)
{
    if (!m_source)
        return QWidget::keyPressEvent(event);
    const double dx = m_view.width() / 4, dy = m_view.height() / 4;
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        zoomAround(QPointF(0.5, 0.5), 0.64);
        break;
    case Qt::Key_Minus:
        zoomAround(QPointF(0.5, 0.5), 1.0 / 0.64);
        break;
    case Qt::Key_Left:
        setViewRect(m_view.translated(-dx, 0));
        break;
    case Qt::Key_Right:
        setViewRect(m_view.translated(dx, 0));
        break;
    case Qt::Key_Up:
        setViewRect(m_view.translated(0, -dy));
        break;
    case Qt::Key_Down:
        setViewRect(m_view.translated(0, dy));
        break;
    case Qt::Key_Home:
        setViewRect(QRectF(0, 0, double(m_source->shape().keys), double(m_source->shape().queries)));
        break;
    default:
        return QWidget::keyPressEvent(event);
    }
    event->accept();
}

void PooledHeatmapView::mouseDoubleClickEvent(QMouseEvent *event)
{
    if (!m_source || event->button() != Qt::LeftButton)
        return QWidget::mouseDoubleClickEvent(event);
    setViewRect(QRectF(0, 0, double(m_source->shape().keys), double(m_source->shape().queries)));
    event->accept();
}

void PooledHeatmapView::zoomAround(QPointF fraction, double factor)
{
    const double fx = fraction.x(), fy = fraction.y();
    const QPointF anchor(m_view.left() + fx * m_view.width(), m_view.top() + fy * m_view.height());
    QSizeF size = m_view.size() * factor;
    const double tk = double(m_source->shape().keys), tq = double(m_source->shape().queries);
    // Both axes keep their ratio, also at the deepest zoom and the whole problem.
    const double limit = std::max(std::min(kMinTokens, tk) / size.width(), std::min(kMinTokens, tq) / size.height());
    if (limit > 1.0)
        size *= limit;
    const double over = std::min(tk / size.width(), tq / size.height());
    if (over < 1.0)
        size *= over;
    setViewRect(QRectF(anchor.x() - fx * size.width(), anchor.y() - fy * size.height(), size.width(), size.height()));
}

void PooledHeatmapView::mousePressEvent(QMouseEvent *event)
{
    if (event->button() != Qt::LeftButton)
        return QWidget::mousePressEvent(event);
    m_dragging = true;
    m_dragFrom = event->position();
    setCursor(Qt::ClosedHandCursor);
}

void PooledHeatmapView::mouseMoveEvent(QMouseEvent *event)
{
    if (!m_dragging) {
        m_hoverText = hoverText(event->position());
        if (m_hoverText.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(event->globalPosition().toPoint(), plainToolTip(m_hoverText), this);
        return QWidget::mouseMoveEvent(event);
    }
    const QRectF plot = plotRect();
    const QPointF delta = event->position() - m_dragFrom;
    m_dragFrom = event->position();
    setViewRect(
        m_view.translated(-delta.x() * m_view.width() / plot.width(), -delta.y() * m_view.height() / plot.height()));
}

void PooledHeatmapView::mouseReleaseEvent(QMouseEvent *event)
{
    m_dragging = false;
    unsetCursor();
    QWidget::mouseReleaseEvent(event);
}

void PooledHeatmapView::leaveEvent(QEvent *event)
{
    m_hoverText.clear();
    QToolTip::hideText();
    QWidget::leaveEvent(event);
}

void PooledHeatmapView::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    if (m_source)
        m_settle->start(); // the bins follow the widget's size
}

} // namespace attnscope
