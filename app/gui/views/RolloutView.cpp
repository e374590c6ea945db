#include "app/gui/views/RolloutView.h"

#include <QPainter>

#include <algorithm>

namespace attnscope {

RolloutView::RolloutView(QWidget *parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("rolloutView"));
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void RolloutView::setRollout(AttentionController::MatrixPtr rollout, const QStringList &queryLabels,
                             const QStringList &keyLabels, int layers, const QString &error)
{
    m_data = HeatmapData();
    m_error = error;
    if (rollout) {
        auto values = std::make_shared<const MatrixF>(rollout->cast<float>());
        m_data.owned = values;
        m_data.values = values.get();
        m_data.rowLabels = queryLabels;
        m_data.columnLabels = keyLabels;
        m_data.title =
            layers == 1 ? tr("Attention rollout of one layer") : tr("Attention rollout over %1 layers").arg(layers);
        // A plain loop: GCC 12 warns falsely inside Eigen's AVX-512 maxCoeff().
        double top = 0.0;
        for (Eigen::Index i = 0; i < values->size(); ++i)
            top = std::max(top, double(values->data()[i]));
        m_data.rangeMax = top > 0.0 ? top : 1.0;
    }
    update();
}

void RolloutView::clear()
{
    m_data = HeatmapData();
    m_error.clear();
    update();
}

void RolloutView::setColorMap(ColorMapKind kind)
{
    m_colorMap = kind;
    update();
}

void RolloutView::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.fillRect(rect(), Qt::white);
    if (!m_data.values) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect().adjusted(12, 12, -12, -12), Qt::AlignCenter | Qt::TextWordWrap,
                   m_error.isEmpty() ? tr("Computing\u2026") : m_error);
        return;
    }
    HeatmapOptions o;
    o.colorMap = m_colorMap;
    o.font = font();
    o.showValues = false;
    o.axisTitles = true;
    HeatmapRenderer(m_data, o).paint(p, QRectF(rect()).adjusted(4, 4, -4, -4));
}

} // namespace attnscope
