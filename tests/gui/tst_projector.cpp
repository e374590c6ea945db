// Projecting a lesson: a 1080p projector at 2× scaling (a 960×540 screen in logical pixels) must
// hold the whole window, and View > Presentation Mode (F11) shows it full screen with larger text.
// Offscreen, with a screen of that size and device pixel ratio; screenshots in the build tree.

#include "app/gui/views/AttentionViews.h"
#include "app/gui/views/HeatmapView.h"
#include "app/gui/views/MainWindow.h"
#include "app/gui/views/PresentationMode.h"

#include "../common/TestUtil.h"
#include "../common/WindowTestUtil.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFontMetricsF>
#include <QMenuBar>
#include <QScreen>
#include <QSettings>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

using namespace attnscope;

class TestProjector : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void windowFitsA1080pScreenAt2x();
    void presentationModeIsFullScreenWithLargerText();
};

void TestProjector::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("AttnScopeTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_projector"));
    QSettings().clear();
    QSettings().setValue(QStringLiteral("compute/backend"), int(BackendRequest::Cpu));
    QCOMPARE(QGuiApplication::primaryScreen()->geometry().size(), QSize(960, 540));
    QCOMPARE(QGuiApplication::primaryScreen()->devicePixelRatio(), 2.0);
}

void TestProjector::windowFitsA1080pScreenAt2x()
{
    // The first run places the window for the screen it opens on: on this one the docks cannot
    // all be whole, but the window must not pass the screen's edges.
    QSettings().remove(QStringLiteral("window"));
    auto w = test::openTutorialWindow();
    QVERIFY(w);
    QCoreApplication::processEvents();
    const QRect available = w->screen()->availableGeometry();
    const QSize minimum = w->minimumSizeHint();
    QVERIFY2(minimum.width() <= available.width() && minimum.height() <= available.height(),
             qPrintable(QStringLiteral("needs at least %1×%2").arg(minimum.width()).arg(minimum.height())));
    QVERIFY2(available.contains(w->frameGeometry()), qPrintable(QStringLiteral("window %1×%2 at %3,%4 on %5×%6")
                                                                    .arg(w->frameGeometry().width())
                                                                    .arg(w->frameGeometry().height())
                                                                    .arg(w->frameGeometry().x())
                                                                    .arg(w->frameGeometry().y())
                                                                    .arg(available.width())
                                                                    .arg(available.height())));
    QVERIFY(QDir().mkpath(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR)));
    QVERIFY(w->grab().save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/projector-1080p-2x.png")));
}

void TestProjector::presentationModeIsFullScreenWithLargerText()
{
    auto w = test::openTutorialWindow();
    QVERIFY(w);
    auto *action = w->findChild<QAction *>(QStringLiteral("presentationMode"));
    QVERIFY(action);
    QCOMPARE(action->shortcut(), QKeySequence(Qt::Key_F11));
    HeatmapView *head = w->views()->headView();
    const qreal before = head->font().pointSizeF();
    QVERIFY(before > 0);
    const QFont small = head->options().font;

    QTest::keyClick(w.get(), Qt::Key_F11);
    QVERIFY(w->presentation()->isOn());
    QVERIFY(action->isChecked());
    QTRY_VERIFY(w->windowState() & Qt::WindowFullScreen);
    QCOMPARE(head->font().pointSizeF(), before * PresentationMode::kFontScale);
    QCOMPARE(w->menuBar()->font().pointSizeF(), before * PresentationMode::kFontScale);
    // The docks make room for the views, and the window is the screen.
    auto *inputs = w->findChild<QDockWidget *>(QStringLiteral("InputsDock"));
    QVERIFY(inputs);
    QVERIFY(!inputs->isVisible());
    QTRY_VERIFY(w->screen()->availableGeometry().contains(w->frameGeometry()));
    QCoreApplication::processEvents();
    // The heatmap's labels and values are painted in the larger font too.
    QVERIFY(QFontMetricsF(head->options().font).height() > QFontMetricsF(small).height() * 1.3);
    QVERIFY(QDir().mkpath(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR)));
    QVERIFY(w->grab().save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/presentation-mode.png")));

    // Esc leaves it, and everything is as it was.
    QTest::keyClick(w.get(), Qt::Key_Escape);
    QVERIFY(!w->presentation()->isOn());
    QVERIFY(!action->isChecked());
    QTRY_VERIFY(!(w->windowState() & Qt::WindowFullScreen));
    QCOMPARE(head->font().pointSizeF(), before);
    QVERIFY(inputs->isVisible());
}

// QTEST_MAIN on the projector's screen: 1920×1080 device pixels at 2×.
int main(int argc, char *argv[])
{
    QTemporaryDir screenDir;
    if (!test::useOffscreenScreen(screenDir, 960, 540, 2.0))
        return 2;
    QApplication app(argc, argv);
    TestProjector test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}

#include "tst_projector.moc"
