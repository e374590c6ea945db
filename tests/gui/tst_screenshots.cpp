// The application in a real window (run under Xvfb by CTest): each built-in example is
// opened, every main view is captured from the screen into the build tree, and a heatmap
// cell's on-screen pixel is compared with the colour map.

#include "app/gui/views/MainWindow.h"

#include <QDir>
#include <QGuiApplication>
#include <QScreen>
#include <QSettings>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include "core/RandomProblem.h"

using namespace attnscope;

class TestScreenshots : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void examples_data();
    void examples();

private:
    QTemporaryDir m_dir;
};

void TestScreenshots::initTestCase()
{
    if (QGuiApplication::platformName() == QLatin1String("offscreen") ||
        QGuiApplication::platformName() == QLatin1String("minimal"))
        QSKIP("needs a real display (run under xvfb-run)");
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("AttnScopeTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_screenshots"));
    QSettings().clear();
    QSettings().setValue(QStringLiteral("compute/backend"), int(BackendRequest::Cpu));
    QVERIFY(QDir().mkpath(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR)));
}

void TestScreenshots::examples_data()
{
    QTest::addColumn<QString>("path");
    for (const QString &path : MainWindow::exampleFiles())
        QTest::newRow(qPrintable(QFileInfo(path).baseName())) << path;
    // A long causal sequence with many heads: the pixel-per-cell path of the renderer.
    RandomProblemOptions o;
    o.tokens = 384;
    o.modelDim = 128;
    o.heads = 8;
    o.causal = true;
    Project p = randomProject(o);
    p.title = "Random causal self-attention, T = 384, H = 8";
    const QString path = m_dir.filePath(QStringLiteral("long-sequence.attnscope.json"));
    QVERIFY(Document(p).save(path).ok());
    QTest::newRow("long-sequence") << path;
    // Many heads: the heads grid keeps readable tiles and scrolls.
    RandomProblemOptions many;
    many.tokens = 12;
    many.modelDim = 96;
    many.heads = 48;
    Project m = randomProject(many);
    m.title = "Random self-attention, H = 48";
    const QString manyPath = m_dir.filePath(QStringLiteral("many-heads.attnscope.json"));
    QVERIFY(Document(m).save(manyPath).ok());
    QTest::newRow("many-heads") << manyPath;
}

void TestScreenshots::examples()
{
    QFETCH(QString, path);
    MainWindow w;
    w.resize(1440, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openExample(path));
    QVERIFY(w.computeController()->waitForIdle(20000));
    QVERIFY(w.currentResult());
    QVERIFY(w.currentResult()->generation == w.computeController()->latestGeneration());

    const QString base = QFileInfo(path).baseName().section(QLatin1Char('.'), 0, 0);
    const QStringList tabs = {QStringLiteral("heads"), QStringLiteral("headview"), QStringLiteral("mean"),
                              QStringLiteral("teaching")};
    for (int i = 0; i < w.viewTabs()->count(); ++i) {
        w.viewTabs()->setCurrentIndex(i);
        QTest::qWait(150); // let the X server show the repaint
        const QPixmap shot = w.screen()->grabWindow(w.winId());
        QVERIFY(!shot.isNull());
        const QString file = QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/") + base + QLatin1Char('-') + tabs.value(i) +
                             QStringLiteral(".png");
        QVERIFY(shot.save(file));
        if (i == 0 && w.headView()->cellRect(0, 0).width() >= 8) {
            // The on-screen colour of cell (last query, key 0) of the enlarged head.
            HeatmapView *v = w.headView();
            const int q = int(v->data().rows()) - 1;
            const QPointF local = v->cellRect(q, 0).topLeft() + QPointF(3, 3);
            const QPoint inWindow = v->mapTo(&w, local.toPoint());
            const QImage image = shot.toImage();
            const qreal dpr = shot.devicePixelRatio();
            const QColor onScreen(image.pixel(int(inWindow.x() * dpr), int(inWindow.y() * dpr)));
            const HeatmapData &d = v->data();
            const float weight = (*d.values)(q, 0);
            const QColor expected =
                d.isAllowed(q, 0)
                    ? QColor::fromRgb(
                          ColorMap(v->settings().colorMap).at((weight - d.rangeMin) / (d.rangeMax - d.rangeMin)))
                    : HeatmapRenderer::maskedColor();
            QCOMPARE(onScreen.name(), expected.name());
        }
    }
    w.document()->undoStack()->setClean();
}

QTEST_MAIN(TestScreenshots)
#include "tst_screenshots.moc"
