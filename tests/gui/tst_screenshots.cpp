// The application in a real window (run under Xvfb by CTest): each built-in example is
// opened, every main view is captured from the screen into the build tree, and a heatmap
// cell's on-screen pixel is compared with the colour map.

#include "app/gui/sources/SetSource.h"
#include "app/gui/views/AttentionViews.h"
#include "app/gui/views/MainWindow.h"
#include "app/gui/views/ModelView.h"
#include "app/gui/views/RolloutView.h"
#include "app/gui/views/StatsTable.h"
#include "core/formats/Npy.h"

#include <QAction>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>

#include <QDir>
#include <QGuiApplication>
#include <QScreen>
#include <QSettings>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include "core/attention/RandomProblem.h"

#include "../common/WindowTestUtil.h"

using namespace attnscope;

class TestScreenshots : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void examples_data();
    void examples();
    void attentionFile();

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
    const QStringList tabs = {QStringLiteral("heads"),    QStringLiteral("headview"), QStringLiteral("mean"),
                              QStringLiteral("teaching"), QStringLiteral("model"),    QStringLiteral("stats"),
                              QStringLiteral("rollout")};
    for (int i = 0; i < w.views()->tabs()->count(); ++i) {
        w.views()->tabs()->setCurrentIndex(i);
        QVERIFY(test::waitForRepaint(w.views()->tabs()->currentWidget())); // on the X server before the grab
        const QPixmap shot = w.screen()->grabWindow(w.winId());
        QVERIFY(!shot.isNull());
        const QString file = QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/") + base + QLatin1Char('-') + tabs.value(i) +
                             QStringLiteral(".png");
        QVERIFY(shot.save(file));
        if (i == 0 && w.views()->headView()->cellRect(0, 0).width() >= 8) {
            // The on-screen colour of cell (last query, key 0) of the enlarged head.
            HeatmapView *v = w.views()->headView();
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

// An imported attention file that looks like a real model's: 6 layers of 8 heads over a
// 40-token sentence in WordPiece pieces, heads attending to the previous token, the first
// token, a local window, the same word or broadly. The model view, the statistics and the
// rollout are captured, and the rollout again with the pieces merged into words.
void TestScreenshots::attentionFile()
{
    const std::vector<std::string> words = {
        "[CLS]", "the",   "transform", "##er",     "reads", "every", "token", "##s",   "and",   "attend",
        "##s",   "to",    "the",       "previous", "one",   ",",     "the",   "first", "one",   "or",
        "the",   "whole", "sent",      "##ence",   "at",    "once",  ";",     "some",  "heads", "look",
        "at",    "their", "own",       "word",     "piece", "##s",   "only",  ".",     "[SEP]", "[PAD]"};
    const int layers = 6, heads = 8, t = int(words.size());
    const std::vector<int> wordOf = wordsFromTokens(words);
    std::vector<float> values;
    values.reserve(size_t(layers * heads * t * t));
    for (int l = 0; l < layers; ++l)
        for (int h = 0; h < heads; ++h)
            for (int i = 0; i < t; ++i) {
                std::vector<float> row(size_t(t), 0.0f);
                float sum = 0.0f;
                for (int j = 0; j < t; ++j) {
                    float w = 0.02f + 0.01f * float((i * 7 + j * 13 + l * 5 + h * 3) % 11);
                    switch ((l * heads + h) % 5) {
                    case 0:
                        w += j == std::max(i - 1, 0) ? 6.0f : 0.0f;
                        break;
                    case 1:
                        w += j == 0 ? 6.0f : 0.0f;
                        break;
                    case 2:
                        w += std::abs(i - j) <= 2 ? 1.5f : 0.0f;
                        break;
                    case 3:
                        w += wordOf[size_t(i)] == wordOf[size_t(j)] ? 4.0f : 0.0f;
                        break;
                    default:
                        w += 0.1f * float(l + 1);
                        break;
                    }
                    row[size_t(j)] = w;
                    sum += w;
                }
                for (float w : row)
                    values.push_back(w / sum);
            }
    const QString path = m_dir.filePath(QStringLiteral("sentence.npy"));
    const std::string bytes = npyBytes({layers, heads, t, t}, values.data());
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes.data(), qint64(bytes.size()));
    f.close();
    QJsonArray tokens;
    for (const std::string &w : words)
        tokens.append(QString::fromStdString(w));
    QFile sidecar(m_dir.filePath(QStringLiteral("sentence.tokens.json")));
    QVERIFY(sidecar.open(QIODevice::WriteOnly));
    sidecar.write(QJsonDocument(QJsonObject{{QStringLiteral("tokens"), tokens}}).toJson());
    sidecar.close();

    MainWindow w;
    w.resize(1440, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QSignalSpy opened(&w, &MainWindow::attentionOpened);
    QVERIFY(w.openFile(path));
    QVERIFY(opened.wait(20000));
    QTRY_VERIFY_WITH_TIMEOUT(w.views()->modelView()->isFilled() && w.views()->statsTable()->isFilled() &&
                                 w.views()->rolloutView()->isFilled(),
                             20000);
    auto grab = [&](QWidget *page, const QString &name) {
        w.views()->tabs()->setCurrentWidget(page);
        QVERIFY(test::waitForRepaint(page));
        const QPixmap shot = w.screen()->grabWindow(w.winId());
        QVERIFY(!shot.isNull());
        QVERIFY(shot.save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/attention-") + name + QStringLiteral(".png")));
    };
    grab(w.views()->modelView(), QStringLiteral("model"));
    w.views()->statsTable()->sortByColumn(HeadStatsModel::Entropy, Qt::AscendingOrder);
    grab(w.views()->statsTable(), QStringLiteral("stats"));
    grab(w.views()->rolloutView(), QStringLiteral("rollout"));
    w.activateHead(2, 3);
    QTRY_VERIFY_WITH_TIMEOUT(w.shownAttention().weights() && w.views()->headView()->data().values, 20000);
    grab(w.views()->grid()->parentWidget(), QStringLiteral("heads-layer2")); // layer index 2, as shown
    QSignalSpy updated(w.views(), &AttentionViews::setViewsUpdated);
    w.setSource()->mergeWordsAction()->setChecked(true);
    QTRY_VERIFY_WITH_TIMEOUT(w.views()->rolloutView()->data().rows() < t, 20000);
    grab(w.views()->rolloutView(), QStringLiteral("rollout-words"));
}

QTEST_MAIN(TestScreenshots)
#include "tst_screenshots.moc"
