// A real model in a real window (run under Xvfb by CTest): the model view of a typed sentence
// and one of its heads opened in the editor, captured from the screen into the build tree.
// resources/models/tiny-gpt2 is used when it holds a model, else the fixture GPT-2.

#include "app/gui/views/MainWindow.h"
#include "app/gui/views/ModelView.h"

#include "../common/TestUtil.h"

#include <QAction>
#include <QDir>
#include <QFileInfo>
#include <QGuiApplication>
#include <QLineEdit>
#include <QScreen>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTest>

using namespace attnscope;

class TestScreenshotsModel : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void modelAndHead();
};

void TestScreenshotsModel::initTestCase()
{
    if (QGuiApplication::platformName() == QLatin1String("offscreen") ||
        QGuiApplication::platformName() == QLatin1String("minimal"))
        QSKIP("needs a real display (run under xvfb-run)");
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("AttnScopeTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_screenshots_model"));
    QSettings().clear();
    QSettings().setValue(QStringLiteral("compute/backend"), int(BackendRequest::Cpu));
    QVERIFY(QDir().mkpath(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR)));
}

void TestScreenshotsModel::modelAndHead()
{
    QString dir = test::sourcePath(QStringLiteral("resources/models/tiny-gpt2"));
    if (!QFileInfo::exists(dir + QStringLiteral("/model.safetensors")))
        dir = test::sourcePath(QStringLiteral("tests/fixtures/models/gpt2-f32"));
    MainWindow w;
    w.resize(1440, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QSignalSpy shown(&w, &MainWindow::modelRunShown);
    QVERIFY(w.openModel(dir));
    QVERIFY(shown.wait(60000));
    w.modelTextEdit()->setText(QStringLiteral("The cat sat on a mat."));
    QVERIFY2(shown.wait(60000), qPrintable(w.lastError()));
    auto *view = w.findChild<ModelView *>(QStringLiteral("modelView"));
    w.viewTabs()->setCurrentWidget(view);
    QTRY_VERIFY_WITH_TIMEOUT(view->isFilled(), 30000);
    QTest::qWait(200);
    QPixmap shot = w.screen()->grabWindow(w.winId());
    QVERIFY(!shot.isNull());
    QVERIFY(shot.save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/model-typed.png")));

    view->setCurrent(1, 1);
    QSignalSpy computed(&w, &MainWindow::resultShown);
    w.findChild<QAction *>(QStringLiteral("openHeadInEditor"))->trigger();
    QVERIFY(computed.wait(30000));
    w.viewTabs()->setCurrentIndex(0);
    QTest::qWait(300);
    shot = w.screen()->grabWindow(w.winId());
    QVERIFY(!shot.isNull());
    QVERIFY(shot.save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/model-head-in-editor.png")));
}

QTEST_MAIN(TestScreenshotsModel)
#include "tst_screenshots_model.moc"
