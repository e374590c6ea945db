#include "app/gui/views/MaskEditor.h"

#include "core/Mask.h"

#include <QComboBox>
#include <QFontMetricsF>
#include <QHBoxLayout>
#include <QImage>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>

namespace attnscope {

namespace {

const QColor kAllowed(0x8f, 0xd1, 0x9e);
const QColor kMasked(0x4a, 0x4a, 0x4a);
const QColor kEmptyRow(0xd6, 0x27, 0x28);

QString label(const std::vector<std::string> &tokens, Eigen::Index i)
{
    return size_t(i) < tokens.size() ? QString::fromStdString(tokens[size_t(i)]) : QString::number(i);
}

} // namespace

MaskGrid::MaskGrid(QWidget *parent) : QWidget(parent)
{
    setMouseTracking(false);
    setMinimumSize(120, 100);
    setToolTip(tr("Click or drag to toggle cells of the custom mask.\n"
                  "Green: query may attend to key. Dark: masked.\n"
                  "Hatched: masked by the causal or padding part."));
}

void MaskGrid::setDocument(Document *document)
{
    if (m_document)
        disconnect(m_document, nullptr, this, nullptr);
    m_document = document;
    if (m_document)
        connect(m_document, &Document::changed, this, [this] { update(); });
    update();
}

MaskGrid::Geometry MaskGrid::geometry() const
{
    Geometry g;
    if (!m_document)
        return g;
    const AttentionProblem &p = m_document->problem();
    const Project &pr = m_document->project();
    const QFontMetricsF fm(font());
    for (Eigen::Index i = 0; i < p.tq(); ++i)
        g.labelWidth = std::max(g.labelWidth, fm.horizontalAdvance(label(pr.queryTokens, i)));
    g.labelWidth = std::min(g.labelWidth + 8, width() * 0.3);
    const double top = fm.height() + 4;
    g.cell = std::min((width() - g.labelWidth - 4) / double(p.tk()), (height() - top - 4) / double(p.tq()));
    g.cell = std::max(g.cell, 0.01); // below a pixel per cell the grid is drawn as an image
    g.grid = QRectF(g.labelWidth, top, g.cell * double(p.tk()), g.cell * double(p.tq()));
    return g;
}

QRectF MaskGrid::cellRect(int query, int key) const
{
    const Geometry g = geometry();
    return QRectF(g.grid.left() + key * g.cell, g.grid.top() + query * g.cell, g.cell, g.cell);
}

std::optional<QPoint> MaskGrid::cellAt(const QPointF &pos) const
{
    const Geometry g = geometry();
    if (!m_document || !g.grid.contains(pos))
        return std::nullopt;
    const AttentionProblem &p = m_document->problem();
    return QPoint(std::clamp(int((pos.x() - g.grid.left()) / g.cell), 0, int(p.tk()) - 1),
                  std::clamp(int((pos.y() - g.grid.top()) / g.cell), 0, int(p.tq()) - 1));
}

void MaskGrid::paintEvent(QPaintEvent *)
{
    QPainter painter(this);
    painter.fillRect(rect(), palette().color(QPalette::Base));
    if (!m_document)
        return;
    const AttentionProblem &p = m_document->problem();
    const Project &pr = m_document->project();
    const Geometry g = geometry();
    const MaskMatrix effective = effectiveMask(p);
    const std::vector<bool> empty = emptyMaskRows(effective);
    if (g.cell < 4 || p.tq() * p.tk() > 96 * 96) {
        // Long sequences: one pixel per cell, scaled without smoothing.
        QImage image(int(p.tk()), int(p.tq()), QImage::Format_RGB32);
        const QRgb on = kAllowed.rgb(), off = kMasked.rgb();
        for (Eigen::Index i = 0; i < p.tq(); ++i) {
            auto *line = reinterpret_cast<QRgb *>(image.scanLine(int(i)));
            for (Eigen::Index j = 0; j < p.tk(); ++j)
                line[j] = effective(i, j) ? on : off;
        }
        painter.drawImage(g.grid, image);
    } else {
        const QBrush hatch(QColor(0xb0, 0xb0, 0xb0), Qt::BDiagPattern);
        for (Eigen::Index i = 0; i < p.tq(); ++i)
            for (Eigen::Index j = 0; j < p.tk(); ++j) {
                const QRectF cell(g.grid.left() + double(j) * g.cell, g.grid.top() + double(i) * g.cell, g.cell,
                                  g.cell);
                const bool custom = !p.mask.allowed || (*p.mask.allowed)(i, j);
                painter.fillRect(cell, effective(i, j) ? kAllowed : kMasked);
                if (custom && !effective(i, j))
                    painter.fillRect(cell, hatch); // masked by causal / padding, not by the custom part
            }
    }
    if (g.cell >= 6) {
        painter.setPen(QPen(palette().color(QPalette::Base), 1));
        for (Eigen::Index i = 0; i <= p.tq(); ++i)
            painter.drawLine(QPointF(g.grid.left(), g.grid.top() + double(i) * g.cell),
                             QPointF(g.grid.right(), g.grid.top() + double(i) * g.cell));
        for (Eigen::Index j = 0; j <= p.tk(); ++j)
            painter.drawLine(QPointF(g.grid.left() + double(j) * g.cell, g.grid.top()),
                             QPointF(g.grid.left() + double(j) * g.cell, g.grid.bottom()));
    }
    const QFontMetricsF fm(font());
    if (g.cell >= fm.height() * 0.7) {
        for (Eigen::Index i = 0; i < p.tq(); ++i) {
            painter.setPen(empty[size_t(i)] ? kEmptyRow : palette().color(QPalette::Text));
            painter.drawText(QRectF(0, g.grid.top() + double(i) * g.cell, g.labelWidth - 4, g.cell),
                             Qt::AlignRight | Qt::AlignVCenter,
                             fm.elidedText(label(pr.queryTokens, i), Qt::ElideRight, g.labelWidth - 4));
        }
        painter.setPen(palette().color(QPalette::Text));
        for (Eigen::Index j = 0; j < p.tk(); ++j)
            painter.drawText(QRectF(g.grid.left() + double(j) * g.cell, 0, g.cell, g.grid.top() - 2),
                             Qt::AlignHCenter | Qt::AlignBottom,
                             fm.elidedText(label(pr.keyLabels(), j), Qt::ElideRight, g.cell));
    }
    painter.setBrush(Qt::NoBrush);
    for (size_t i = 0; i < empty.size(); ++i)
        if (empty[i]) {
            painter.setPen(QPen(kEmptyRow, 2));
            painter.drawRect(QRectF(g.grid.left(), g.grid.top() + double(i) * g.cell, g.grid.width(), g.cell));
        }
}

void MaskGrid::toggleAt(const QPointF &pos)
{
    const auto cell = cellAt(pos);
    if (!cell || cell == m_lastCell || !m_document)
        return;
    m_lastCell = cell;
    m_document->setMaskCells({{cell->y(), cell->x()}}, m_strokeValue, m_strokeId);
}

void MaskGrid::mousePressEvent(QMouseEvent *event)
{
    const auto cell = cellAt(event->position());
    if (!cell || !m_document || event->button() != Qt::LeftButton)
        return;
    const auto &custom = m_document->problem().mask.allowed;
    // The stroke sets every cell it crosses to the opposite of the first cell's custom state.
    m_strokeValue = custom ? !(*custom)(cell->y(), cell->x()) : false;
    m_stroking = true;
    ++m_strokeId;
    m_lastCell.reset();
    toggleAt(event->position());
}

void MaskGrid::mouseMoveEvent(QMouseEvent *event)
{
    if (m_stroking)
        toggleAt(event->position());
}

void MaskGrid::mouseReleaseEvent(QMouseEvent *)
{
    m_stroking = false;
    m_lastCell.reset();
}

MaskEditor::MaskEditor(QWidget *parent)
    : QWidget(parent), m_grid(new MaskGrid), m_preset(new QComboBox), m_window(new QSpinBox), m_summary(new QLabel)
{
    m_preset->addItem(tr("None (clear all parts)"), int(MaskPreset::None));
    m_preset->addItem(tr("Causal"), int(MaskPreset::Causal));
    m_preset->addItem(tr("Padding from tokens"), int(MaskPreset::PaddingFromTokens));
    m_preset->addItem(tr("Sliding window"), int(MaskPreset::SlidingWindow));
    m_window->setRange(1, 1 << 20);
    m_window->setValue(2);
    m_window->setPrefix(tr("window "));
    m_window->setToolTip(tr("Sliding window: query i may attend to key j where |i - j| < window"));
    auto *apply = new QPushButton(tr("Apply"));
    auto *bar = new QHBoxLayout;
    bar->addWidget(m_preset, 1);
    bar->addWidget(m_window);
    bar->addWidget(apply);
    m_summary->setWordWrap(true);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addLayout(bar);
    layout->addWidget(m_grid, 1);
    layout->addWidget(m_summary);
    connect(apply, &QPushButton::clicked, this, &MaskEditor::applyPreset);
}

void MaskEditor::setDocument(Document *document)
{
    if (m_document)
        disconnect(m_document, nullptr, this, nullptr);
    m_document = document;
    m_grid->setDocument(document);
    if (m_document)
        connect(m_document, &Document::changed, this, &MaskEditor::updateSummary);
    updateSummary();
}

void MaskEditor::applyPreset()
{
    if (m_document)
        m_document->applyMaskPreset(MaskPreset(m_preset->currentData().toInt()), m_window->value());
}

void MaskEditor::updateSummary()
{
    if (!m_document) {
        m_summary->clear();
        return;
    }
    const AttentionProblem &p = m_document->problem();
    const auto empty = emptyMaskRows(effectiveMask(p));
    const auto nEmpty = std::count(empty.begin(), empty.end(), true);
    QStringList parts;
    if (p.mask.causal)
        parts << tr("causal");
    if (!p.mask.keyPadding.empty())
        parts << tr("key padding");
    if (p.mask.allowed)
        parts << tr("custom");
    QString text = tr("Effective mask = AND of: %1.")
                       .arg(parts.isEmpty() ? tr("nothing (all allowed)") : parts.join(QStringLiteral(", ")));
    if (nEmpty > 0)
        text += QLatin1Char(' ') +
                tr("<span style='color:#d62728'>%n query row(s) attend to no key: their weights are %1.</span>",
                   nullptr, int(nEmpty))
                    .arg(p.spec.maskFill == MaskFill::NegInf ? tr("all 0") : tr("uniform"));
    m_summary->setText(text);
}

} // namespace attnscope
