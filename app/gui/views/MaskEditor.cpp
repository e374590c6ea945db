#include "app/gui/views/MaskEditor.h"

#include "app/gui/views/PlainText.h"
#include "core/attention/Mask.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>
#include <limits>

namespace attnscope {

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

MaskRenderOptions MaskGrid::renderOptions() const
{
    MaskRenderOptions o;
    o.font = font();
    o.text = palette().color(QPalette::Text);
    o.base = palette().color(QPalette::Base);
    return o;
}

QRectF MaskGrid::cellRect(int query, int key) const
{
    if (!m_document)
        return {};
    const MaskLayout g = MaskRenderer(m_document->project(), renderOptions()).layout(QRectF(rect()));
    return QRectF(g.grid.left() + key * g.cell, g.grid.top() + query * g.cell, g.cell, g.cell);
}

std::optional<QPoint> MaskGrid::cellAt(const QPointF &pos) const
{
    if (!m_document)
        return std::nullopt;
    return MaskRenderer(m_document->project(), renderOptions()).cellAt(QRectF(rect()), pos);
}

void MaskGrid::paintEvent(QPaintEvent *)
{
    QPainter painter(this);
    painter.fillRect(rect(), palette().color(QPalette::Base));
    if (m_document)
        MaskRenderer(m_document->project(), renderOptions()).paint(painter, QRectF(rect()));
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
    : QWidget(parent), m_grid(new MaskGrid), m_preset(new QComboBox), m_window(new QSpinBox), m_summary(plainLabel())
{
    m_preset->addItem(tr("None (clear all parts)"), int(MaskPreset::None));
    m_preset->addItem(tr("Causal"), int(MaskPreset::Causal));
    m_preset->addItem(tr("Padding from tokens"), int(MaskPreset::PaddingFromTokens));
    m_preset->addItem(tr("Sliding window"), int(MaskPreset::SlidingWindow));
    m_window->setRange(0, std::numeric_limits<int>::max());
    m_window->setValue(0);
    m_window->setPrefix(tr("window "));
    m_window->setSpecialValueText(tr("no window"));
    m_window->setKeyboardTracking(false); // one edit per finished entry, not per keystroke
    m_window->setToolTip(tr("Sliding window W: key j is allowed for query i only when i - W < j (ANDed with the "
                            "other parts; with causal: the last W keys up to i). 0: no window."));
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
    connect(m_window, &QSpinBox::valueChanged, this, [this](int window) {
        if (window > 0)
            m_presetWindow = window;
        // Stepping or retyping the width is one undo step (the document merges this field only).
        constexpr int kWindowKey = 1;
        if (m_document)
            m_document->setMaskWindow(window, kWindowKey);
    });
}

void MaskEditor::setDocument(Document *document)
{
    if (m_document)
        disconnect(m_document, nullptr, this, nullptr);
    m_document = document;
    m_grid->setDocument(document);
    if (m_document)
        connect(m_document, &Document::changed, this, [this](Document::Changes what) {
            updateSummary();
            if (what & (Document::MaskChanged | Document::ShapeChanged))
                showDocumentPreset();
        });
    updateSummary();
    showDocumentPreset();
}

void MaskEditor::showDocumentPreset()
{
    if (!m_document)
        return;
    const MaskSpec &mask = m_document->problem().mask;
    MaskPreset preset = mask.causal ? MaskPreset::Causal : MaskPreset::None;
    if (!mask.keyPadding.empty())
        preset = MaskPreset::PaddingFromTokens;
    if (mask.window > 0) {
        preset = MaskPreset::SlidingWindow;
        m_presetWindow = int(std::min<std::int64_t>(mask.window, std::numeric_limits<int>::max()));
    }
    const QSignalBlocker blocker(m_window); // showing the document's window is no edit of it
    m_window->setValue(int(std::min<std::int64_t>(mask.window, std::numeric_limits<int>::max())));
    m_preset->setCurrentIndex(m_preset->findData(int(preset)));
}

void MaskEditor::applyPreset()
{
    // The window box's width, or the last one used while it shows no window.
    if (m_document)
        m_document->applyMaskPreset(MaskPreset(m_preset->currentData().toInt()),
                                    m_window->value() > 0 ? m_window->value() : m_presetWindow);
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
    if (p.mask.window > 0)
        parts << tr("sliding window %1").arg(p.mask.window);
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
