// A real model in a real window (run under Xvfb by CTest): the model view of a typed sentence
// that repeats itself, its strongest induction head enlarged, and that head opened in the
// editor, captured from the screen into the build tree. The head is found from an independent
// forward in the test. The built-in example model (resources/models/tiny-gpt2) is used when the
// tree holds it, and then it must have an induction head; else the random-weight fixture GPT-2.

#include "app/gui/sources/ModelRunSource.h"
#include "app/gui/views/AttentionViews.h"
#include "app/gui/views/MainWindow.h"
#include "app/gui/views/ModelView.h"
#include "app/gui/views/TeachingView.h"
#include "core/attention/CpuBackend.h"
#include "core/models/TransformerModel.h"

#include "../common/TestUtil.h"
#include "../common/WindowTestUtil.h"

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

namespace {

// Short enough for the fixture's 32 positions.
const char *const kText = "The cat sat on the mat. The cat sat on the mat.";

struct InductionHead {
    int layer = -1, head = -1;
    double score = 0;
};

// Where each token occurred before, the induction pattern attends to the token after that
// occurrence; a head's score is the mean weight it puts there, over the queries that have one.
InductionHead strongestInductionHead(const ModelRun &run, const std::vector<std::int32_t> &ids)
{
    InductionHead best;
    for (int l = 0; l < run.layers; ++l)
        for (int h = 0; h < run.heads; ++h) {
            auto a = run.attention(l, h);
            double sum = 0;
            int count = 0;
            for (int i = 1; i < int(ids.size()); ++i)
                for (int j = i - 1; j >= 1; --j)
                    if (ids[size_t(j - 1)] == ids[size_t(i)]) {
                        sum += a(i, j);
                        ++count;
                        break;
                    }
            const double score = count ? sum / count : 0;
            if (score > best.score)
                best = {l, h, score};
        }
    return best;
}

} // namespace

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
    const bool exampleModel = QFileInfo::exists(dir + QStringLiteral("/model.safetensors"));
    if (!exampleModel)
        dir = test::sourcePath(QStringLiteral("tests/fixtures/models/gpt2-f32"));
    auto model = TransformerModel::load(dir.toStdString());
    QVERIFY2(model, model ? "" : model.error().message.c_str());
    auto input = model->encode(kText);
    QVERIFY(input);
    CpuBackend cpu;
    auto run = model->forward(*input, cpu);
    QVERIFY(run);
    const InductionHead induction = strongestInductionHead(**run, input->ids);
    qInfo("strongest induction head: layer %d head %d (0-based), mean weight %.3f", induction.layer, induction.head,
          induction.score);
    QVERIFY(induction.layer >= 0);
    if (exampleModel)
        QVERIFY2(induction.score > 0.3, "the example model has no induction head");

    MainWindow w;
    w.resize(1440, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QSignalSpy shown(&w, &MainWindow::modelRunShown);
    QVERIFY(w.openModel(dir));
    QVERIFY(shown.wait(60000));
    w.modelSource()->textEdit()->setText(QString::fromUtf8(kText));
    QVERIFY2(shown.wait(60000), qPrintable(w.lastError()));
    auto *view = w.findChild<ModelView *>(QStringLiteral("modelView"));
    w.views()->tabs()->setCurrentWidget(view);
    QTRY_VERIFY_WITH_TIMEOUT(view->isFilled(), 30000);
    QVERIFY(test::waitForRepaint(&w));
    QPixmap shot = w.screen()->grabWindow(w.winId());
    QVERIFY(!shot.isNull());
    QVERIFY(shot.save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/model-typed.png")));

    // A click on the induction head's tile enlarges it in the heads grid.
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, view->tileRect(induction.layer, induction.head).center());
    QCOMPARE(view->currentLayer(), induction.layer);
    QCOMPARE(view->currentHead(), induction.head);
    QVERIFY(test::waitForRepaint(&w));
    shot = w.screen()->grabWindow(w.winId());
    QVERIFY(shot.save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/model-induction-head.png")));

    // The same head step by step: the layer computed again gives the model's own Q, K and scores.
    QTRY_VERIFY_WITH_TIMEOUT(w.shownAttention().shownTensors() && w.shownAttention().layer == induction.layer, 30000);
    w.views()->tabs()->setCurrentWidget(w.views()->teaching());
    QVERIFY(w.views()->teaching()->html().contains(QStringLiteral("W_Q")));
    QVERIFY(test::waitForRepaint(&w));
    shot = w.screen()->grabWindow(w.winId());
    QVERIFY(shot.save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/model-step-view.png")));

    QSignalSpy computed(&w, &MainWindow::resultShown);
    w.findChild<QAction *>(QStringLiteral("openHeadInEditor"))->trigger();
    QVERIFY(computed.wait(30000));
    w.views()->tabs()->setCurrentIndex(0);
    QVERIFY(test::waitForRepaint(&w));
    shot = w.screen()->grabWindow(w.winId());
    QVERIFY(!shot.isNull());
    QVERIFY(shot.save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/model-head-in-editor.png")));
}

QTEST_MAIN(TestScreenshotsModel)
#include "tst_screenshots_model.moc"
