#include "app/gui/views/ElidedLabel.h"

#include "app/gui/views/PlainText.h"

#include <QPainter>
#include <QTimer>

#include <algorithm>

namespace attnscope {

namespace {

// The width a status text asks for at most: longer texts share the bar and end in "…".
constexpr int kPreferredCharacters = 60;
constexpr int kMargin = 2;

} // namespace

ElidedLabel::ElidedLabel(QWidget *parent) : QFrame(parent), m_timer(new QTimer(this))
{
    m_timer->setSingleShot(true);
    connect(m_timer, &QTimer::timeout, this, &ElidedLabel::clear);
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);
}

QString ElidedLabel::shownText() const
{
    return fontMetrics().elidedText(m_text, Qt::ElideRight, std::max(0, contentsRect().width() - 2 * kMargin));
}

void ElidedLabel::setText(const QString &text)
{
    m_timer->stop();
    // One line: a message's further lines are in the tooltip.
    m_text = text.section(QLatin1Char('\n'), 0, 0);
    setToolTip(plainToolTip(text));
    updateGeometry();
    update();
}

void ElidedLabel::clear()
{
    setText(QString());
}

void ElidedLabel::showMessage(const QString &text, int timeoutMs)
{
    setText(text);
    if (timeoutMs > 0)
        m_timer->start(timeoutMs);
}

QSize ElidedLabel::sizeHint() const
{
    const QFontMetrics fm = fontMetrics();
    const int width = std::min(fm.horizontalAdvance(m_text), fm.averageCharWidth() * kPreferredCharacters);
    const QMargins m = contentsMargins();
    // + 1: fractional advances must not make the text end in "…" at its own size.
    return QSize(width + 2 * kMargin + 1 + m.left() + m.right(), fm.height() + m.top() + m.bottom());
}

QSize ElidedLabel::minimumSizeHint() const
{
    const QFontMetrics fm = fontMetrics();
    const QMargins m = contentsMargins();
    const int width = m_text.isEmpty() ? 0 : fm.horizontalAdvance(QStringLiteral("M\u2026")) + 2 * kMargin;
    return QSize(width + m.left() + m.right(), fm.height() + m.top() + m.bottom());
}

void ElidedLabel::paintEvent(QPaintEvent *event)
{
    QFrame::paintEvent(event);
    QPainter p(this);
    p.setPen(palette().color(foregroundRole()));
    p.drawText(contentsRect().adjusted(kMargin, 0, -kMargin, 0), Qt::AlignLeading | Qt::AlignVCenter, shownText());
}

} // namespace attnscope
