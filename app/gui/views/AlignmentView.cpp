#include "app/gui/views/AlignmentView.h"

#include "app/gui/views/PlainText.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QMouseEvent>
#include <QPainter>
#include <QVBoxLayout>

#include <algorithm>
#include <numeric>
#include <optional>

namespace attnscope {

// The drawing, with hover. It keeps one renderer (the mean or the renormalised rows computed
// once per setting), so moving the mouse only changes the hover.
class AlignmentCanvas : public QWidget
{
public:
    explicit AlignmentCanvas(QWidget *parent) : QWidget(parent)
    {
        setMouseTracking(true);
        setAttribute(Qt::WA_OpaquePaintEvent);
        setObjectName(QStringLiteral("alignmentCanvas"));
    }

    void setRenderer(std::optional<AlignmentRenderer> renderer)
    {
        m_renderer = std::move(renderer);
        m_hoverTarget = m_hoverSource = -1;
        setToolTip({});
        update();
    }
    const std::optional<AlignmentRenderer> &renderer() const { return m_renderer; }
    int hoverTarget() const { return m_hoverTarget; }
    int hoverSource() const { return m_hoverSource; }

    QSize sizeHint() const override { return {640, 360}; }

protected:
    void paintEvent(QPaintEvent *) override
    {
        QPainter p(this);
        p.fillRect(rect(), Qt::white);
        if (m_renderer)
            m_renderer->paint(p, QRectF(rect()));
    }

    void mouseMoveEvent(QMouseEvent *event) override
    {
        int target = -1, source = -1;
        if (m_renderer) {
            target = m_renderer->targetAt(QRectF(rect()), event->position());
            if (target < 0)
                source = m_renderer->sourceAt(QRectF(rect()), event->position());
        }
        setHover(target, source);
    }

    void leaveEvent(QEvent *) override { setHover(-1, -1); }

private:
    void setHover(int target, int source)
    {
        if (target == m_hoverTarget && source == m_hoverSource)
            return;
        m_hoverTarget = target;
        m_hoverSource = source;
        if (m_renderer) {
            m_renderer->setHover(target, source);
            setToolTip(plainToolTip(hoverText()));
        }
        update();
    }

    // The hovered token's three strongest pairs, strongest first.
    QString hoverText() const
    {
        const AlignmentRenderer &r = *m_renderer;
        const bool row = m_hoverTarget >= 0;
        if (!row && m_hoverSource < 0)
            return {};
        std::vector<int> others(size_t(row ? r.sources() : r.rows()));
        std::iota(others.begin(), others.end(), 0);
        const auto w = [&](int other) { return row ? r.weight(m_hoverTarget, other) : r.weight(other, m_hoverSource); };
        std::stable_sort(others.begin(), others.end(), [&](int a, int b) { return w(a) > w(b); });
        QStringList lines;
        for (size_t k = 0; k < std::min<size_t>(3, others.size()); ++k)
            lines << (row ? r.describe(m_hoverTarget, others[k]) : r.describe(others[k], m_hoverSource));
        return lines.join(QLatin1Char('\n'));
    }

    std::optional<AlignmentRenderer> m_renderer;
    int m_hoverTarget = -1, m_hoverSource = -1;
};

AlignmentView::AlignmentView(QWidget *parent) : QWidget(parent)
{
    m_headBox = new QComboBox(this);
    m_headBox->setObjectName(QStringLiteral("alignmentHead"));
    m_headBox->setToolTip(tr("The head whose cross-attention is drawn, or the mean of the layer's heads"));
    m_shift = new QCheckBox(tr("Shift by one step"), this);
    m_shift->setObjectName(QStringLiteral("alignmentShift"));
    m_shift->setToolTip(plainToolTip(tr("The decoder's row i predicts the next target token, so row i is labelled with "
                                        "that token (the row after </s> is dropped)")));
    m_hideEos = new QCheckBox(tr("Hide </s>"), this);
    m_hideEos->setObjectName(QStringLiteral("alignmentHideEos"));
    m_hideEos->setToolTip(
        plainToolTip(tr("The source's end-of-sentence token often takes most of the weight; hidden, each "
                        "row is renormalised over the other source tokens")));
    m_canvas = new AlignmentCanvas(this);

    auto *controls = new QHBoxLayout;
    controls->addWidget(m_headBox);
    controls->addWidget(m_shift);
    controls->addWidget(m_hideEos);
    controls->addStretch(1);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(controls);
    layout->addWidget(m_canvas, 1);

    connect(m_headBox, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (index < 0 || index - 1 == m_head)
            return;
        m_head = index - 1;
        rebuild();
        emit headChanged(m_head);
    });
    connect(m_shift, &QCheckBox::toggled, this, [this] { rebuild(); });
    connect(m_hideEos, &QCheckBox::toggled, this, [this] { rebuild(); });
}

void AlignmentView::setCross(std::vector<MatrixF> heads, QStringList sourceLabels, QStringList targetLabels,
                             int sourceEos)
{
    m_heads = std::move(heads);
    m_sourceLabels = std::move(sourceLabels);
    m_targetLabels = std::move(targetLabels);
    m_sourceEos = sourceEos;
    const int oldHead = m_head;
    {
        const QSignalBlocker block(m_headBox);
        m_headBox->clear();
        m_headBox->addItem(tr("Mean of the heads"));
        for (size_t h = 0; h < m_heads.size(); ++h)
            m_headBox->addItem(tr("Head %1").arg(h));
        if (m_head >= int(m_heads.size()))
            m_head = -1;
        m_headBox->setCurrentIndex(m_head + 1);
    }
    m_hideEos->setEnabled(sourceEos >= 0);
    rebuild();
    if (m_head != oldHead)
        emit headChanged(m_head);
}

void AlignmentView::setHead(int head)
{
    if (head < -1 || head >= int(m_heads.size()))
        return;
    m_headBox->setCurrentIndex(head + 1); // rebuilds and signals through currentIndexChanged
}

void AlignmentView::setShiftByOne(bool shift)
{
    m_shift->setChecked(shift);
}

void AlignmentView::setHideEndOfSentence(bool hide)
{
    m_hideEos->setChecked(hide);
}

AlignmentOptions AlignmentView::options() const
{
    AlignmentOptions o;
    o.head = m_head;
    o.shiftByOne = m_shift->isChecked();
    o.hideEndOfSentence = m_hideEos->isChecked();
    o.font = m_canvas->font();
    return o;
}

void AlignmentView::rebuild()
{
    if (m_heads.empty())
        m_canvas->setRenderer(std::nullopt);
    else
        m_canvas->setRenderer(AlignmentRenderer(m_heads, m_sourceLabels, m_targetLabels, m_sourceEos, options()));
}

void AlignmentView::renderTo(QPainter &painter, const QRectF &target) const
{
    painter.fillRect(target, Qt::white);
    if (!m_heads.empty())
        AlignmentRenderer(m_heads, m_sourceLabels, m_targetLabels, m_sourceEos, options()).paint(painter, target);
}

int AlignmentView::rows() const
{
    return m_canvas->renderer() ? m_canvas->renderer()->rows() : 0;
}

QWidget *AlignmentView::canvas() const
{
    return m_canvas;
}

int AlignmentView::hoverTarget() const
{
    return m_canvas->hoverTarget();
}

int AlignmentView::hoverSource() const
{
    return m_canvas->hoverSource();
}

QPointF AlignmentView::targetAnchor(int row) const
{
    return m_canvas->renderer() ? m_canvas->renderer()->targetAnchor(QRectF(m_canvas->rect()), row) : QPointF();
}

QPointF AlignmentView::sourceAnchor(int source) const
{
    return m_canvas->renderer() ? m_canvas->renderer()->sourceAnchor(QRectF(m_canvas->rect()), source) : QPointF();
}

} // namespace attnscope
