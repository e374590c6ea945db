#pragma once

// Helpers for the suites that drive the real main window: waiting for a result of the
// document as it is now, opening the tutorial in an active window, waiting for a widget's
// repaint (instead of sleeping), and a main() that gives the offscreen platform a 1600×1000
// screen.

#include "app/gui/sources/ProjectSource.h"
#include "app/gui/views/MainWindow.h"
#include "app/gui/views/PooledHeatmapView.h"
#include "core/formats/ProjectFile.h"

#include <QApplication>
#include <QByteArray>
#include <QEvent>
#include <QFile>
#include <QObject>
#include <QString>
#include <QTemporaryDir>
#include <QTest>
#include <QWidget>

#include <memory>

namespace attnscope::test {

inline const QString kTutorialExample = QStringLiteral(":/examples/self-attention-tutorial.attnscope.json");

// Waits until the views show a result computed from the document as it is now.
inline bool settleWindow(MainWindow &w)
{
    if (!w.computeController()->waitForIdle(30000))
        return false;
    QCoreApplication::processEvents();
    return w.currentResult() && w.currentResult()->generation == w.computeController()->latestGeneration() &&
           serializeProject(w.currentResult()->project) == serializeProject(w.document()->project());
}

// A shown, active main window with the tutorial open and computed; null if any step failed.
inline std::unique_ptr<MainWindow> openTutorialWindow()
{
    auto w = std::make_unique<MainWindow>();
    w->show();
    if (!QTest::qWaitForWindowExposed(w.get()))
        return nullptr;
    // Shortcuts need the active window (offscreen activates it; Xvfb without a window manager
    // may not, and then only the shortcut tests fail).
    w->activateWindow();
    QApplication::setActiveWindow(w.get());
    [[maybe_unused]] const bool active = QTest::qWaitForWindowActive(w.get(), 1000);
    if (!w->openExample(kTutorialExample) || !settleWindow(*w))
        return nullptr;
    return w;
}

// Counts the paint events a widget and its descendants receive while it watches (a widget
// covered by opaque children is not painted itself: they are).
class PaintCounter : public QObject
{
public:
    explicit PaintCounter(QWidget *widget) : m_widget(widget)
    {
        QCoreApplication::instance()->installEventFilter(this);
    }
    ~PaintCounter() override { QCoreApplication::instance()->removeEventFilter(this); }
    int count() const { return m_count; }

protected:
    bool eventFilter(QObject *watched, QEvent *event) override
    {
        if (event->type() == QEvent::Paint && watched->isWidgetType() &&
            (watched == m_widget || m_widget->isAncestorOf(static_cast<QWidget *>(watched))))
            ++m_count;
        return false;
    }

private:
    QWidget *m_widget;
    int m_count = 0;
};

// Asks `widget` (and the children it covers) to repaint and waits until it has been painted:
// the backing store is flushed to the window system in the same pass, so a screen grab taken
// afterwards shows it. The timeout only bounds a failure.
inline bool waitForRepaint(QWidget *widget, int timeoutMs = 10000)
{
    PaintCounter painted(widget);
    widget->update();
    return QTest::qWaitFor([&] { return painted.count() > 0; }, timeoutMs);
}

// Waits until a pooled view shows a tile of the block it asks for now and nothing else is being
// computed; the tile, or null when the timeout (which only bounds a failure) ran out.
inline PooledTilePtr waitForVisibleTile(PooledHeatmapView *view, int timeoutMs = 60000)
{
    PooledTilePtr tile;
    const bool shown = QTest::qWaitFor(
        [&] {
            tile = view->visibleTile();
            return tile && !view->jobs()->isBusy();
        },
        timeoutMs);
    return shown ? tile : nullptr;
}

// The offscreen platform's screen is 800×600 unless told otherwise: this gives it one of
// width × height logical pixels at device pixel ratio `dpr`. Under Xvfb the server's screen is
// used. Returns false when the configuration cannot be written.
inline bool useOffscreenScreen(const QTemporaryDir &dir, int width, int height, double dpr = 1.0)
{
    const QByteArray platform = qgetenv("QT_QPA_PLATFORM");
    if (!platform.isEmpty() && platform != "offscreen")
        return true;
    QFile config(dir.filePath(QStringLiteral("screen.json")));
    const QByteArray json = QStringLiteral(R"({"screens": [{"name": "test", "x": 0, "y": 0, "width": %1, "height": %2,
                                      "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": %3}]})")
                                .arg(width)
                                .arg(height)
                                .arg(dpr)
                                .toUtf8();
    if (!config.open(QIODevice::WriteOnly) || config.write(json) < 0)
        return false;
    config.close();
    qputenv("QT_QPA_PLATFORM", "offscreen:configfile=" + config.fileName().toLocal8Bit());
    return true;
}

// The 1600×1000 screen the first-run size is promised for.
inline bool useOffscreen1600x1000Screen(const QTemporaryDir &dir)
{
    return useOffscreenScreen(dir, 1600, 1000);
}

} // namespace attnscope::test

// QTEST_MAIN on a 1600×1000 offscreen screen.
#define ATTNSCOPE_TEST_MAIN_1600X1000(TestObject)                                                                      \
    int main(int argc, char *argv[])                                                                                   \
    {                                                                                                                  \
        QTemporaryDir screenDir;                                                                                       \
        if (!attnscope::test::useOffscreen1600x1000Screen(screenDir))                                                  \
            return 2;                                                                                                  \
        QApplication app(argc, argv);                                                                                  \
        TestObject test;                                                                                               \
        QTEST_SET_MAIN_SOURCE_PATH                                                                                     \
        return QTest::qExec(&test, argc, argv);                                                                        \
    }
