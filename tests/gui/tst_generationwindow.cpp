// Generation in the window (issue 26), on the built-in tiny Qwen 3 continuing a Chinese prompt:
// Step and Generate grow every view a row at a time (the newest row framed) and equal the core
// generator; the candidates chart; "force this token" continues from the candidate picked; Stop
// keeps the steps so far; typing another prompt drops the generation; Save Generation writes
// tokens.json with its steps and the sequence's attentions; BERT cannot generate. Screenshots of
// the window kept in the build tree.

#include "app/gui/document/ExampleModel.h"
#include "app/gui/sources/ModelRunSource.h"
#include "app/gui/views/AttentionViews.h"
#include "app/gui/views/GenerationPanel.h"
#include "app/gui/views/MainWindow.h"
#include "core/attention/CpuBackend.h"
#include "core/formats/Npy.h"
#include "core/models/Generation.h"

#include "../common/TestUtil.h"

#include <QAction>
#include <QDir>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace attnscope;

namespace {

const QString kPrompt = QStringLiteral("床前明月光，疑是地上霜。举头望");

QString screenshot(const char *name)
{
    QDir().mkpath(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR));
    return QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/") + QString::fromUtf8(name);
}

// The greedy continuation the core gives for these ids.
Generation coreGreedy(const TransformerModel &model, const std::vector<std::int32_t> &ids, int steps)
{
    GenerationSettings s;
    s.maxNewTokens = steps;
    s.eosIds = *readEosIds(exampleModelDir(ExampleModelId::TinyQwen3).toStdString());
    auto g = generate(model, *model.input(ids), s);
    return g ? *g : Generation{};
}

// The largest difference between the set shown and one forward over its ids, every head.
float differenceFromForward(const TransformerModel &model, const AttentionSet &set,
                            const std::vector<std::int32_t> &ids)
{
    CpuBackend cpu;
    auto run = model.forward(*model.input(ids), cpu);
    if (!run)
        return 1e9f;
    float worst = 0;
    for (int l = 0; l < set.layers(); ++l)
        for (int h = 0; h < set.heads(); ++h)
            worst = std::max(worst, (set.map(0, l, h) - MatrixF((*run)->attention(l, h))).cwiseAbs().maxCoeff());
    return worst;
}

} // namespace

class TestGenerationWindow : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("AttnScopeTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_generationwindow"));
        QSettings().clear();
        QSettings().setValue(QStringLiteral("compute/backend"), int(BackendRequest::Cpu));
        qunsetenv("ATTNSCOPE_EXAMPLE_MODEL");
    }

    void stepGenerateForceAndSave()
    {
        auto model = TransformerModel::load(exampleModelDir(ExampleModelId::TinyQwen3).toStdString());
        QVERIFY2(model, model ? "" : model.message().c_str());
        MainWindow w;
        w.resize(1600, 1000);
        w.show();
        QSignalSpy runs(&w, &MainWindow::modelRunShown);
        QVERIFY(w.openExampleModel(ExampleModelId::TinyQwen3));
        QVERIFY(runs.wait(60000));
        ModelRunSource *source = w.modelSource();
        QVERIFY(source);
        source->textEdit()->setText(kPrompt);
        QVERIFY(runs.wait(60000));
        const std::vector<std::int32_t> prompt = source->run()->ids;
        GenerationPanel *panel = source->generationPanel();
        auto *dock = w.findChild<QDockWidget *>(QStringLiteral("generationDock"));
        QVERIFY(dock && dock->isVisible());
        // generation_config.json: do_sample false, so greedy.
        QCOMPARE(panel->temperature()->value(), 0.0);
        panel->maxNewTokens()->setValue(6);

        // Step: one token, its row framed in every map, equal to a forward over the sequence.
        QSignalSpy shown(source, &ModelRunSource::generationShown);
        QTest::mouseClick(panel->stepButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!source->generation()->isRunning(), 60000);
        QVERIFY(!shown.isEmpty());
        GenerationShotPtr shot = source->generation()->lastShot();
        QVERIFY(shot);
        QCOMPARE(shot->generation.steps.size(), std::size_t(1));
        QCOMPARE(shot->set.queries(), std::int64_t(prompt.size() + 1));
        // The views read the layer on a worker: they show the step once it is read.
        QTRY_COMPARE_WITH_TIMEOUT(w.shownAttention().newRow, std::int64_t(prompt.size()), 60000);
        QTRY_COMPARE_WITH_TIMEOUT(w.views()->headView()->attention().newRow, std::int64_t(prompt.size()), 60000);
        QVERIFY(differenceFromForward(*model, shot->set, shot->generation.ids) < 1e-5f);
        QCOMPARE(panel->stepsList()->count(), 1);
        QCOMPARE(panel->chart()->rowRect(9).isEmpty(), false); // ten candidates charted

        // Generate: six more, each delivered as it comes; then the run of the whole sequence.
        const int before = int(shown.count());
        QTest::mouseClick(panel->generateButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!source->generation()->isRunning(), 60000);
        QTRY_VERIFY_WITH_TIMEOUT(source->run()->ids == source->generation()->lastShot()->generation.ids, 60000);
        shot = source->generation()->lastShot();
        const std::size_t steps = shot->generation.steps.size();
        QVERIFY(steps == 7 || shot->generation.stoppedAtEos);
        QVERIFY(int(shown.count()) - before >= int(steps) - 1); // one delivery per step at least
        const Generation core = coreGreedy(*model, prompt, 7);
        QCOMPARE(shot->generation.ids, core.ids);
        for (std::size_t i = 0; i < steps; ++i)
            QVERIFY(std::abs(shot->generation.steps[i].p - core.steps[i].p) < 1e-6f);
        QVERIFY(differenceFromForward(*model, shot->set, shot->generation.ids) < 1e-5f);
        // The forward's run is shown now, its newest row still framed.
        QTRY_COMPARE_WITH_TIMEOUT(w.shownAttention().newRow, std::int64_t(shot->generation.ids.size() - 1), 60000);
        QVERIFY(source->headProject(1, 0).has_value());
        QCOMPARE(panel->stepsList()->count(), int(steps));
        QVERIFY(panel->textLabel()->text().size() > 0);
        QTRY_VERIFY_WITH_TIMEOUT(
            w.views()->headView()->attention().set.queries() == std::int64_t(shot->generation.ids.size()), 60000);
        panel->selectStep(int(steps) - 1);
        QVERIFY(w.grab().save(screenshot("generation-candidates.png")));

        // Force: step 2 takes its third candidate, then goes on as many steps as before.
        panel->selectStep(1);
        const GenerationStep second = shot->generation.steps[1];
        QTest::mouseClick(panel->chart(), Qt::LeftButton, {}, panel->chart()->rowRect(2).center().toPoint());
        QCOMPARE(panel->chart()->picked().value_or(-1), second.candidates[2].id);
        QVERIFY(panel->forceButton()->isEnabled());
        QTest::mouseClick(panel->forceButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!source->generation()->isRunning(), 60000);
        QTRY_VERIFY_WITH_TIMEOUT(source->run()->ids == source->generation()->lastShot()->generation.ids, 60000);
        const GenerationShotPtr forced = source->generation()->lastShot();
        QCOMPARE(forced->generation.steps[1].id, second.candidates[2].id);
        QVERIFY(forced->generation.steps[1].forced);
        QCOMPARE(forced->generation.steps[0].id, shot->generation.steps[0].id);
        std::vector<std::int32_t> prefix = prompt;
        prefix.push_back(shot->generation.steps[0].id);
        prefix.push_back(second.candidates[2].id);
        const Generation after = coreGreedy(*model, prefix, int(forced->generation.steps.size()) - 2);
        QCOMPARE(forced->generation.ids, after.ids);
        QVERIFY(differenceFromForward(*model, forced->set, forced->generation.ids) < 1e-5f);
        panel->selectStep(1);
        QVERIFY(w.grab().save(screenshot("generation-forced.png")));

        // Save Generation: tokens.json with its steps (the forced one said), and the attentions.
        QTemporaryDir out;
        QVERIFY(source->saveGeneration(out.filePath(QStringLiteral("g"))));
        const QJsonObject tokens =
            QJsonDocument::fromJson(test::readAll(out.filePath(QStringLiteral("g/tokens.json")))).object();
        QCOMPARE(tokens[QStringLiteral("promptLength")].toInt(), int(prompt.size()));
        QCOMPARE(tokens[QStringLiteral("ids")].toArray().size(), qsizetype(forced->generation.ids.size()));
        const QJsonArray savedSteps = tokens[QStringLiteral("steps")].toArray();
        QCOMPARE(savedSteps.size(), qsizetype(forced->generation.steps.size()));
        QVERIFY(savedSteps[1].toObject()[QStringLiteral("forced")].toBool());
        QCOMPARE(savedSteps[0].toObject()[QStringLiteral("candidates")].toArray().size(), 10);
        auto npy = readNpyFile(out.filePath(QStringLiteral("g/attentions.npy")).toStdString());
        QVERIFY2(npy, npy ? "" : npy.message().c_str());
        const std::int64_t t = std::int64_t(forced->generation.ids.size());
        QCOMPARE(npy->shape, (std::vector<std::int64_t>{2, 4, t, t}));

        // Typing another prompt drops the generation: the views show the typed text again.
        source->textEdit()->setText(kPrompt + QStringLiteral("明"));
        QVERIFY(runs.wait(60000));
        QVERIFY(!source->generation()->hasGeneration());
        QCOMPARE(panel->stepsList()->count(), 0);
        QTRY_COMPARE_WITH_TIMEOUT(w.shownAttention().set.queries(), std::int64_t(prompt.size() + 1), 60000);
        QCOMPARE(w.shownAttention().newRow, std::int64_t(-1));
    }

    // Stop, at the first step delivered, keeps the steps so far; nothing more is delivered.
    void stopKeepsTheSteps()
    {
        MainWindow w;
        w.show();
        QSignalSpy runs(&w, &MainWindow::modelRunShown);
        QVERIFY(w.openExampleModel(ExampleModelId::TinyQwen3));
        QVERIFY(runs.wait(60000));
        ModelRunSource *source = w.modelSource();
        GenerationPanel *panel = source->generationPanel();
        panel->maxNewTokens()->setValue(400);
        bool stopped = false;
        connect(source, &ModelRunSource::generationShown, this, [&](const GenerationShotPtr &shot) {
            if (!stopped && !shot->generation.steps.empty()) {
                stopped = true;
                QVERIFY(panel->stopButton()->isEnabled());
                QTest::mouseClick(panel->stopButton(), Qt::LeftButton);
            }
        });
        QSignalSpy stoppedSpy(source->generation(), &GenerationController::stopped);
        QTest::mouseClick(panel->generateButton(), Qt::LeftButton);
        QVERIFY(stoppedSpy.wait(60000));
        QVERIFY(!source->generation()->isRunning());
        QVERIFY(source->generation()->waitForIdle());
        const std::size_t kept = source->generation()->lastShot()->generation.steps.size();
        QVERIFY(kept >= 1 && kept < 400);
        QSignalSpy more(source, &ModelRunSource::generationShown);
        QCoreApplication::processEvents(); // any delivery the lane posted has run by now
        QCOMPARE(more.count(), 0);
        QVERIFY(panel->generateButton()->isEnabled());
        QCOMPARE(panel->stepsList()->count(), int(kept));
    }

    void bertCannotGenerate()
    {
        MainWindow w;
        w.show();
        QSignalSpy runs(&w, &MainWindow::modelRunShown);
        QVERIFY(w.openModel(test::sourcePath(QStringLiteral("tests/fixtures/models/bert-f32"))));
        QVERIFY(runs.wait(60000));
        GenerationPanel *panel = w.modelSource()->generationPanel();
        QVERIFY(!panel->generateButton()->isEnabled());
        QVERIFY(!panel->stepButton()->isEnabled());
    }
};

QTEST_MAIN(TestGenerationWindow)
#include "tst_generationwindow.moc"
