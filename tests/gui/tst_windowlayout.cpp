// The main window's layout on a 1600×1000 offscreen screen: the first window's size and docks,
// the size and docks remembered for the next one, and status notices that neither overflow nor
// overlap. Screenshots are kept in the build tree.

#include "app/gui/sources/ProjectSource.h"
#include "app/gui/sources/SetSource.h"
#include "app/gui/views/MainWindow.h"

#include "../common/TestUtil.h"
#include "../common/WindowTestUtil.h"

#include <QAction>
#include <QDir>
#include <QDockWidget>
#include <QLabel>
#include <QPointer>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

using namespace attnscope;

class TestWindowLayout : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanup();
    void firstWindowShowsEveryDockOn1600x1000();
    void secondWindowRestoresGeometryAndDocks();
    void longStatusNoticesElideWithFullTextInToolTip();
    void newWindowHoldsASourceOfItsOwn();
};

void TestWindowLayout::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("AttnScopeTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_windowlayout"));
    QSettings().clear();
    QSettings().setValue(QStringLiteral("compute/backend"), int(BackendRequest::Cpu));
    // main() gives the offscreen platform a 1600×1000 screen; under Xvfb the server's is used.
    QCOMPARE(QGuiApplication::primaryScreen()->geometry().size(), QSize(1600, 1000));
}

void TestWindowLayout::cleanup()
{
    QSettings().remove(QStringLiteral("window"));
}

void TestWindowLayout::firstWindowShowsEveryDockOn1600x1000()
{
    QSettings().remove(QStringLiteral("window")); // the first run: no saved size or layout
    auto w = test::openTutorialWindow();
    QVERIFY(w);
    QCoreApplication::processEvents();
    const QRect available = w->screen()->availableGeometry();
    QVERIFY2(available.contains(w->frameGeometry()), qPrintable(QStringLiteral("window %1×%2 at %3,%4 on %5×%6")
                                                                    .arg(w->frameGeometry().width())
                                                                    .arg(w->frameGeometry().height())
                                                                    .arg(w->frameGeometry().x())
                                                                    .arg(w->frameGeometry().y())
                                                                    .arg(available.width())
                                                                    .arg(available.height())));
    // Most of the screen, not a corner of it.
    QVERIFY2(w->width() >= available.width() * 3 / 4 && w->height() >= available.height() * 3 / 4,
             qPrintable(QStringLiteral("%1×%2").arg(w->width()).arg(w->height())));
    int docks = 0;
    for (QDockWidget *d : w->findChildren<QDockWidget *>()) {
        if (!d->isVisible() || d->visibleRegion().isEmpty())
            continue; // a tab behind another dock
        ++docks;
        QWidget *c = d->widget();
        const QSize min = c->minimumSizeHint();
        QVERIFY2(c->width() >= min.width() && c->height() >= min.height(),
                 qPrintable(QStringLiteral("%1: %2×%3, needs %4×%5")
                                .arg(d->objectName())
                                .arg(c->width())
                                .arg(c->height())
                                .arg(min.width())
                                .arg(min.height())));
    }
    QVERIFY(docks >= 4);
    // The model panel shows every field: its scroll area has nothing to scroll.
    auto *scroll = w->findChild<QScrollArea *>(QStringLiteral("modelScroll"));
    QVERIFY(scroll);
    QCOMPARE(scroll->verticalScrollBar()->maximum(), 0);
    QCOMPARE(scroll->horizontalScrollBar()->maximum(), 0);
    QVERIFY(QDir().mkpath(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR)));
    QVERIFY(w->grab().save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/first-run-1600x1000.png")));
    // Under Xvfb (QT_QPA_PLATFORM=xcb): the screen itself, as a user would see it.
    if (QGuiApplication::platformName() == QLatin1String("xcb"))
        QVERIFY(w->screen()->grabWindow(0).save(
            QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/first-run-1600x1000-screen.png")));
}

void TestWindowLayout::secondWindowRestoresGeometryAndDocks()
{
    QSettings().remove(QStringLiteral("window"));
    QSize size;
    int modelWidth = 0;
    {
        auto first = test::openTutorialWindow();
        QVERIFY(first);
        first->resize(1300, 850);
        auto *model = first->findChild<QDockWidget *>(QStringLiteral("ModelDock"));
        first->findChild<QDockWidget *>(QStringLiteral("MaskDock"))->hide();
        first->resizeDocks({model}, {430}, Qt::Horizontal);
        QTRY_COMPARE(first->size(), QSize(1300, 850));
        QCoreApplication::processEvents();
        size = first->size();
        modelWidth = model->width();
        first->document()->undoStack()->setClean();
        QVERIFY(first->close());
    }
    auto second = test::openTutorialWindow();
    QVERIFY(second);
    QCOMPARE(second->size(), size);
    QVERIFY(!second->findChild<QDockWidget *>(QStringLiteral("MaskDock"))->isVisible());
    QCOMPARE(second->findChild<QDockWidget *>(QStringLiteral("ModelDock"))->width(), modelWidth);
}

void TestWindowLayout::longStatusNoticesElideWithFullTextInToolTip()
{
    auto w = test::openTutorialWindow();
    QVERIFY(w);
    w->resize(1000, 700);
    QTRY_COMPARE(w->width(), 1000);
    QStatusBar *bar = w->statusBar();
    // Every visible widget of the status bar lies inside it, none over another, and some
    // widget holds `text` whole, as its text or its tooltip.
    auto check = [bar](const QString &text) -> QString {
        QCoreApplication::processEvents();
        if (bar->width() > 1000)
            return QStringLiteral("the status bar is %1 px wide").arg(bar->width());
        QList<QWidget *> shown;
        for (QWidget *c : bar->findChildren<QWidget *>(QString(), Qt::FindDirectChildrenOnly))
            if (c->isVisible())
                shown << c;
        bool found = false;
        for (QWidget *c : shown) {
            if (!bar->rect().contains(c->geometry()))
                return QStringLiteral("%1 %2 lies outside the status bar")
                    .arg(c->metaObject()->className(), c->toolTip().left(40));
            for (QWidget *o : shown)
                if (o != c && o->geometry().intersects(c->geometry()))
                    return QStringLiteral("two status widgets overlap");
            found |= c->toolTip().contains(text);
            if (auto *l = qobject_cast<QLabel *>(c))
                found |= l->text().contains(text) && l->width() >= l->sizeHint().width();
        }
        return found ? QString() : QStringLiteral("\"%1\" cannot be read").arg(text.left(40));
    };
    QTemporaryDir dir;
    const QString name = QStringLiteral("a-project-with-a-very-long-name-that-a-student-gave-it-to-remember-what-"
                                        "it-was-about-multi-head-attention-on-three-inputs.attnscope.json");
    QVERIFY(QFile::copy(test::kTutorialExample, dir.filePath(name)));
    QFile(dir.filePath(name)).setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    QVERIFY(w->openFile(dir.filePath(name)));
    QVERIFY(test::settleWindow(*w));
    QString problem = check(name);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));

    const QString notice = QStringLiteral(
        "Vulkan is not available (no device with compute queues and storage buffers large enough for this "
        "project was found: llvmpipe (LLVM 15.0.6, 256 bits) refused the allocation of 4096 MiB): "
        "computing on the CPU with Eigen instead, which is slower for large projects");
    emit w->computeController()->backendChanged(QStringLiteral("CPU (Eigen)"), QStringLiteral("x86-64 AVX2"), notice);
    problem = check(notice);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    problem = check(name);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));

    const QString error = QStringLiteral(
        "compute: the GPU stopped answering while computing the scores of head 3 (VK_ERROR_DEVICE_LOST after "
        "1.2 s in the softmax shader); the partial result was discarded and nothing was changed");
    emit w->computeController()->failed(error, 0, ErrorKind::DeviceLost);
    problem = check(error);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    problem = check(ProjectSource::failureAdvice(ErrorKind::DeviceLost));
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QVERIFY(QDir().mkpath(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR)));
    QVERIFY(w->grab().save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/status-notices-1000.png")));
}

ATTNSCOPE_TEST_MAIN_1600X1000(TestWindowLayout)
// File > New Window: a second window with its own document, which can show an attention file
// while the first keeps its project (and its undo), and which goes when closed, alone.
void TestWindowLayout::newWindowHoldsASourceOfItsOwn()
{
    auto first = test::openTutorialWindow();
    QVERIFY(first);
    QVERIFY(first->computeController()->waitForIdle());
    QTRY_VERIFY(first->currentResult());
    Document *document = first->document();
    const std::string title = document->project().title;
    QAction *action = first->findChild<QAction *>(QStringLiteral("newWindowAction"));
    QVERIFY(action);
    QCOMPARE(action->shortcut(), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_N));
    const QList<QWidget *> before = QApplication::topLevelWidgets();
    action->trigger();
    MainWindow *second = nullptr;
    for (QWidget *w : QApplication::topLevelWidgets())
        if (auto *m = qobject_cast<MainWindow *>(w); m && m != first.get() && !before.contains(w))
            second = m;
    QVERIFY(second);
    QPointer<MainWindow> guard(second);
    QVERIFY(second->isVisible());
    QVERIFY(second->testAttribute(Qt::WA_DeleteOnClose));
    QVERIFY(second->document() != document);
    QVERIFY(second->pos() != first->pos());

    QSignalSpy opened(second, &MainWindow::attentionOpened);
    QVERIFY(second->openFile(QStringLiteral(ATTNSCOPE_SOURCE_DIR "/tests/fixtures/attention/lhtt_f32.npy")));
    QVERIFY2(opened.wait(20000), qPrintable(second->lastError()));
    QTRY_VERIFY_WITH_TIMEOUT(second->shownAttention().heads() == 4, 20000);
    QVERIFY(second->setSource());
    // The first window's project is untouched and still edited there.
    QVERIFY(!first->setSource());
    QCOMPARE(first->document(), document);
    QCOMPARE(document->project().title, title);
    QVERIFY(first->currentResult());
    QCOMPARE(first->shownAttention().set.layers(), 1);
    QVERIFY(!second->shownAttention().tensors);

    second->close();
    QTRY_VERIFY(!guard); // deleted on close
    QVERIFY(first->isVisible());
    QCOMPARE(first->document(), document);
}

#include "tst_windowlayout.moc"
