#include "app/gui/views/WindowPolish.h"

#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QDockWidget>
#include <QKeyEvent>
#include <QMainWindow>
#include <QPointer>
#include <QScreen>
#include <QScrollArea>
#include <QTimer>

#include <algorithm>

namespace attnscope {

namespace {

QWidget *guardedField(QObject *object)
{
    if (auto *spin = qobject_cast<QAbstractSpinBox *>(object))
        return spin;
    return qobject_cast<QComboBox *>(object);
}

bool isUndoOrRedo(const QKeyEvent *key)
{
    if (key->matches(QKeySequence::Undo) || key->matches(QKeySequence::Redo))
        return true;
    const QKeySequence pressed(key->keyCombination());
    return pressed == QKeySequence(Qt::CTRL | Qt::Key_Y) || pressed == QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z);
}

// Whether `w` lies in a main window (docked, or in a floating dock), where Undo is the document's;
// not in a dialog.
bool inMainWindow(const QWidget *w)
{
    const QWidget *window = w->window();
    while (qobject_cast<const QDockWidget *>(window) && window->parentWidget())
        window = window->parentWidget()->window();
    return qobject_cast<const QMainWindow *>(window);
}

class FieldGuard : public QObject
{
public:
    using QObject::QObject;

    // Without the wheel in its focus policy, a field is not focused by a wheel passing over it.
    static void calm(QWidget *field)
    {
        if (field->focusPolicy() == Qt::WheelFocus)
            field->setFocusPolicy(Qt::StrongFocus);
    }

    bool eventFilter(QObject *watched, QEvent *event) override
    {
        switch (event->type()) {
        case QEvent::Polish:
            if (QWidget *field = guardedField(watched))
                calm(field);
            break;
        case QEvent::Wheel:
            // Ignored and filtered: QApplication hands a real wheel event on to the parents
            // (the scroll area around the editor panel scrolls).
            if (QWidget *field = guardedField(watched); field && !field->hasFocus()) {
                event->ignore();
                return true;
            }
            break;
        case QEvent::ShortcutOverride:
            // Not overridden: the shortcut, the main window's Undo or Redo, fires. (In a dialog,
            // which has no Undo, the line edit keeps its own.)
            if (auto *spin = qobject_cast<QAbstractSpinBox *>(watched);
                spin && inMainWindow(spin) && isUndoOrRedo(static_cast<QKeyEvent *>(event))) {
                event->ignore();
                return true;
            }
            break;
        default:
            break;
        }
        return false;
    }
};

} // namespace

void installFieldGuard()
{
    static QPointer<FieldGuard> guard;
    if (guard || !qApp)
        return;
    guard = new FieldGuard(qApp);
    qApp->installEventFilter(guard);
    for (QWidget *w : QApplication::allWidgets())
        if (QWidget *field = guardedField(w))
            FieldGuard::calm(field);
}

QList<QKeySequence> keysWith(QKeySequence::StandardKey standard, const QList<QKeySequence> &extra)
{
    QList<QKeySequence> keys = QKeySequence::keyBindings(standard);
    for (const QKeySequence &k : extra)
        if (!keys.contains(k))
            keys << k;
    return keys;
}

namespace {

// Waits for the window's first Show, then for its layout (the next turn of the event loop).
class ShowDockWhole : public QObject
{
public:
    ShowDockWhole(QMainWindow *window, QDockWidget *dock, QDockWidget *neighbour)
        : QObject(window), m_window(window), m_dock(dock), m_neighbour(neighbour)
    {
        window->installEventFilter(this);
    }

    bool eventFilter(QObject *watched, QEvent *event) override
    {
        if (watched == m_window && event->type() == QEvent::Show) {
            m_window->removeEventFilter(this);
            QTimer::singleShot(0, this, [this] {
                fit();
                deleteLater();
            });
        }
        return false;
    }

private:
    void fit()
    {
        auto *scroll = m_dock ? qobject_cast<QScrollArea *>(m_dock->widget()) : nullptr;
        if (!scroll || !scroll->widget() || !m_neighbour || !m_dock->isVisible() || !m_neighbour->isVisible())
            return;
        QWidget *contents = scroll->widget();
        const int width = scroll->viewport()->width();
        const int wanted =
            contents->hasHeightForWidth() ? contents->heightForWidth(width) : contents->sizeHint().height();
        // The dock's title and the scroll area's frame come on top of the contents.
        const int need = wanted + (m_dock->height() - scroll->viewport()->height());
        const int total = m_dock->height() + m_neighbour->height();
        const int height = std::min(need, total - m_neighbour->minimumSizeHint().height());
        if (height > m_dock->height())
            m_window->resizeDocks({m_dock, m_neighbour}, {height, total - height}, Qt::Vertical);
    }

    QMainWindow *m_window;
    QPointer<QDockWidget> m_dock, m_neighbour;
};

} // namespace

void placeForFirstRun(QMainWindow *window, QDockWidget *dock, QDockWidget *neighbour)
{
    new ShowDockWhole(window, dock, neighbour);
    QScreen *screen = window->screen() ? window->screen() : QGuiApplication::primaryScreen();
    if (!screen)
        return;
    const QRect available = screen->availableGeometry();
    // Room for the window manager's frame and title bar.
    const QSize room = (available.size() - QSize(40, 70)).expandedTo(QSize(640, 480));
    // Wide enough for the editor docks beside the heatmaps, and no wider than a laptop needs; on a
    // small screen (a 1080p projector at 2x: 960 x 540) never less than the window's minimum, and
    // never past the screen's edges.
    const QSize size =
        QSize(1480, 920).boundedTo(room).expandedTo(window->minimumSizeHint()).boundedTo(available.size());
    window->resize(size);
    const QPoint centred = available.center() - QPoint(size.width() / 2, size.height() / 2);
    window->move(
        std::clamp(centred.x(), available.left(), std::max(available.left(), available.right() + 1 - size.width())),
        std::clamp(centred.y(), available.top(), std::max(available.top(), available.bottom() + 1 - size.height())));
}

} // namespace attnscope
