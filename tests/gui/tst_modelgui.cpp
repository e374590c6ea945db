// Real models in the real main window (issue 10): File > Open Model… on the fixture GPT-2
// folder, typed text recomputed on a worker (a newer text supersedes an older one), a bad
// folder leaving the document as it was, and "Open This Head in the Editor" giving a project
// whose computed weights are the model's attention for that head (GPT-2 and BERT). Also: text
// typed while another model loads runs on the new model, a long run in flight is cancelled by
// newer text, the status bar names the model, opening a model asks to save a modified project,
// and File > Examples' example model entry. Expected tokens and attentions come from core
// (TransformerModel, checked against transformers in tst_models).

#include "app/gui/sources/ModelRunSource.h"
#include "app/gui/sources/ProjectSource.h"
#include "app/gui/sources/SetSource.h"
#include "app/gui/views/AttentionViews.h"
#include "app/gui/views/MainWindow.h"
#include "app/gui/views/ModelView.h"
#include "app/gui/views/StaleBanner.h"
#include "app/gui/views/TeachingView.h"
#include "core/attention/CpuBackend.h"

#include "../common/TestUtil.h"

#include <QAbstractButton>
#include <QAction>
#include <QApplication>
#include <QDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QScopeGuard>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>

using namespace attnscope;

namespace {

// A gate for the layers of model runs: counts the attention layers computed for each length of
// text, and holds every layer while it is closed.
class LayerGate
{
public:
    void enter(Eigen::Index length)
    {
        std::unique_lock lock(m_mutex);
        ++m_layers[length];
        ++m_holding;
        m_opened.wait(lock, [this] { return m_open; });
        --m_holding;
    }
    void open()
    {
        std::lock_guard lock(m_mutex);
        m_open = true;
        m_opened.notify_all();
    }
    bool isHolding() const
    {
        std::lock_guard lock(m_mutex);
        return m_holding > 0;
    }
    int layersOf(Eigen::Index length) const
    {
        std::lock_guard lock(m_mutex);
        const auto it = m_layers.find(length);
        return it == m_layers.end() ? 0 : it->second;
    }

private:
    mutable std::mutex m_mutex;
    std::condition_variable m_opened;
    std::map<Eigen::Index, int> m_layers;
    int m_holding = 0;
    bool m_open = false;
};

// The CPU engine behind a LayerGate.
class GatedCpuBackend : public AttentionBackend
{
public:
    explicit GatedCpuBackend(std::shared_ptr<LayerGate> gate) : m_gate(std::move(gate)) {}
    std::string name() const override { return m_cpu.name(); }
    std::string deviceName() const override { return m_cpu.deviceName(); }
    void setComputeControl(ComputeControl control) override
    {
        AttentionBackend::setComputeControl(control);
        m_cpu.setComputeControl(control);
    }
    Result<AttentionTrace> compute(const AttentionProblem &problem) override
    {
        m_gate->enter(problem.xq.rows());
        return m_cpu.compute(problem);
    }

private:
    std::shared_ptr<LayerGate> m_gate;
    CpuBackend m_cpu;
};

QString gpt2()
{
    return test::sourcePath(QStringLiteral("tests/fixtures/models/gpt2-f32"));
}

// The labels the views show for text: encode()'s tokens with GPT-2's "Ġ" shown as "␣".
std::vector<std::string> shownTokens(const std::string &text)
{
    auto model = TransformerModel::load(gpt2().toStdString());
    if (!model)
        return {};
    auto enc = model->encode(text);
    if (!enc)
        return {};
    std::vector<std::string> out;
    for (std::string t : enc->tokens) {
        if (t.rfind("\xC4\xA0", 0) == 0)
            t = "\xE2\x90\xA3" + t.substr(2);
        out.push_back(t);
    }
    return out;
}

// A GPT-2 with the fixture's tokenizer but wider and deeper, random weights: a long text takes
// it long enough (about a second) that a newer text surely comes while it runs.
ModelPtr slowModel()
{
    auto fixture = TransformerModel::load(gpt2().toStdString());
    if (!fixture)
        return nullptr;
    ModelConfig c = fixture->config();
    c.layers = 12;
    c.width = 256;
    c.heads = 4;
    c.intermediate = 1024;
    c.positions = 512;
    const Eigen::Index d = c.width;
    const auto random = [](Eigen::Index rows, Eigen::Index cols, float scale) -> MatrixF {
        return MatrixF::Random(rows, cols) * scale;
    };
    const auto norm = [d] { return LayerNormWeights{VectorF::Ones(d), VectorF::Zero(d)}; };
    TransformerWeights w;
    w.tokenEmbedding = random(c.vocabSize, d, 0.1f);
    w.positionEmbedding = random(c.positions, d, 0.05f);
    w.finalNorm = norm();
    for (int l = 0; l < c.layers; ++l) {
        TransformerLayer layer;
        AttentionWeights &a = layer.attention;
        a.q = random(d, d, 0.1f);
        a.k = random(d, d, 0.1f);
        a.v = random(d, d, 0.05f);
        a.o = random(d, d, 0.05f);
        a.qBias = a.kBias = a.vBias = a.oBias = VectorF::Zero(d);
        layer.norm1 = layer.norm2 = norm();
        layer.up = random(d, c.intermediate, 0.05f);
        layer.upBias = VectorF::Zero(c.intermediate);
        layer.down = random(c.intermediate, d, 0.03f);
        layer.downBias = VectorF::Zero(d);
        w.layers.push_back(std::move(layer));
    }
    auto model = TransformerModel::fromWeights(c, std::move(w), fixture->tokenizer());
    return model ? std::make_shared<const TransformerModel>(std::move(*model)) : nullptr;
}

// $ATTNSCOPE_EXAMPLE_MODEL for the scope: where the program looks for its example model.
struct ExampleModelAt {
    explicit ExampleModelAt(const QString &folder) { qputenv("ATTNSCOPE_EXAMPLE_MODEL", folder.toUtf8()); }
    ~ExampleModelAt() { qunsetenv("ATTNSCOPE_EXAMPLE_MODEL"); }
};

} // namespace

class TestModelGui : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void typedTextShowsEveryLayerAndHead();
    void newerTextSupersedesOlder();
    void badFolderLeavesDocumentUnchanged();
    void textBeyondThePositionsGreysTheViews();
    void modelFileLeadingOutOfItsFolderIsRefused();
    void openHeadInEditorGivesTheModelsAttention();
    void textTypedWhileAnotherModelLoadsRunsOnTheNewModel();
    void supersededLongRunFinishesWithTheNewestText();
    void statusBarNamesTheModel_data();
    void statusBarNamesTheModel();
    void modelRunStepsThroughItsLayer();
    void bertShowsClsSepAndOpensEachHead();
    void openingAModelAsksToSaveChanges_data();
    void openingAModelAsksToSaveChanges();
    void exampleModelEntry_data();
    void exampleModelEntry();
    void headOpenedOverAnotherNeverShowsItsResult();
    void chineseTextReadsAsCharactersAndMerges();
};

void TestModelGui::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("AttnScopeTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_modelgui"));
    QSettings().clear();
    QSettings().setValue(QStringLiteral("compute/backend"), int(BackendRequest::Cpu));
}

static bool openAndType(MainWindow &w, const QString &text, const QString &folder = gpt2())
{
    QSignalSpy shown(&w, &MainWindow::modelRunShown);
    if (!w.openModel(folder))
        return false;
    if (!shown.wait(30000))
        return false;
    shown.clear();
    w.modelSource()->textEdit()->setText(text);
    return shown.wait(30000);
}

void TestModelGui::chineseTextReadsAsCharactersAndMerges()
{
    // Chinese through GPT-2 showed raw byte symbols ("æĪ ĳ"), 46 tokens for 22 characters, and
    // merging words did nothing. Each piece now reads as the text it decodes to, a cut
    // character marked "…", and merging joins the pieces into characters.
    const QString text = QStringLiteral("我爱自然语言处理。注意力机制很有趣");
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    // The example model: GPT-2's own vocabulary (the fixture's 349 tokens cut every byte apart).
    QVERIFY(openAndType(w, text, test::sourcePath(QStringLiteral("resources/models/tiny-gpt2"))));
    const AttentionSet &set = w.setSource()->attention()->set;
    QVERIFY(set.queries() > text.size()); // characters are cut between tokens
    QCOMPARE(QString::fromStdString(set.queryTokens[0]), QStringLiteral("我\u2026"));
    QCOMPARE(QString::fromStdString(set.queryTokens[1]), QStringLiteral("\u2026我"));
    for (const std::string &label : set.queryTokens)
        for (const QChar c : QString::fromStdString(label))
            QVERIFY2(c.unicode() < 0x80 || c.unicode() > 0x24f, qPrintable(QString::fromStdString(label)));
    QAction *merge = w.setSource()->mergeWordsAction();
    QVERIFY(merge->isEnabled());
    merge->setChecked(true);
    QTRY_VERIFY_WITH_TIMEOUT(w.shownAttention().merges() && w.views()->headView()->data().values &&
                                 w.views()->headView()->data().values->rows() == text.size(),
                             30000);
    QStringList characters;
    for (const QChar c : text)
        characters << QString(c);
    QCOMPARE(w.shownAttention().queryLabels(), characters);
    w.views()->tabs()->setCurrentIndex(0);
    QVERIFY(QDir().mkpath(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR)));
    QVERIFY(w.grab().save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/model-chinese-merged.png")));
    merge->setChecked(false);
    QTRY_VERIFY_WITH_TIMEOUT(!w.shownAttention().merges() && w.views()->headView()->data().values &&
                                 w.views()->headView()->data().values->rows() == set.queries(),
                             30000);
    QVERIFY(w.grab().save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/model-chinese-pieces.png")));
}

void TestModelGui::typedTextShowsEveryLayerAndHead()
{
    MainWindow w;
    w.show();
    QVERIFY(openAndType(w, QStringLiteral("Hello world, attention")));
    QVERIFY(w.setSource());
    QVERIFY(w.modelSource()->textEdit()->isVisible());
    QCOMPARE(w.modelSource()->textEdit()->placeholderText(),
             QStringLiteral("Type any text: the model reads it as you type, in any language"));
    // A model AttnScope does not know has no hint of heads to look at.
    QVERIFY(!w.modelSource()->hintLabel()->isVisibleTo(&w));
    QVERIFY(w.windowTitle().startsWith(QStringLiteral("gpt2-f32")));
    auto model = TransformerModel::load(gpt2().toStdString());
    QVERIFY(model);
    const auto &set = w.setSource()->attention()->set;
    QCOMPARE(set.layers(), model->config().layers);
    QCOMPARE(set.heads(), model->config().heads);
    QCOMPARE(set.queryTokens, shownTokens("Hello world, attention"));
    auto *view = w.findChild<ModelView *>(QStringLiteral("modelView"));
    QVERIFY(view);
    w.views()->tabs()->setCurrentWidget(view);
    QTRY_VERIFY_WITH_TIMEOUT(view->isFilled(), 30000);
    QCOMPARE(view->layers(), model->config().layers);
    QCOMPARE(view->heads(), model->config().heads);
    // Each tile's tooltip says how its layer attends: the run's heads and scale.
    const int last = model->config().layers - 1;
    const QString tip = view->tileToolTip(last, 1);
    QVERIFY2(tip.startsWith(QStringLiteral("Layer %1, head 1").arg(last)), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("%1 heads, each with its own keys and values").arg(model->config().heads)),
             qPrintable(tip));
    QVERIFY2(
        tip.contains(
            QStringLiteral("scores scaled by %1").arg(w.modelSource()->run()->scales[std::size_t(last)], 0, 'g', 6)),
        qPrintable(tip));
}

void TestModelGui::modelRunStepsThroughItsLayer()
{
    // A model run computes the layer in front again, as a project: the step view and the scores
    // are there for a real model, and its weights are the run's, bit for bit (same engine, same
    // inputs). Merged words and a budget too small for the layer's tensors read the weights only.
    MainWindow w;
    w.show();
    QVERIFY(openAndType(w, QStringLiteral("The cat sat on the mat because it was tired")));
    const ModelRunPtr run = w.modelSource()->run();
    QTRY_VERIFY_WITH_TIMEOUT(w.shownAttention().shownTensors(), 30000);
    QTabWidget *tabs = w.views()->tabs();
    QVERIFY(tabs->isTabVisible(tabs->indexOf(w.views()->teaching())));
    const int last = run->layers - 1;
    w.setSource()->setLayer(last);
    QTRY_VERIFY_WITH_TIMEOUT(w.shownAttention().shownTensors() && w.shownAttention().layer == last, 30000);
    const LayerTensors *tensors = w.shownAttention().shownTensors();
    QCOMPARE(tensors->trace.heads(), run->heads);
    for (int h = 0; h < run->heads; ++h)
        QVERIFY2(tensors->trace.weights[std::size_t(h)] == MatrixF(run->attention(last, h)),
                 qPrintable(QString::number(h)));
    // The scores, from the run's own input and weights by hand: (x W_Q + b_Q)_h · (x W_K + b_K)_h × scale.
    const AttentionWeights &a = run->weights->layers[std::size_t(last)].attention;
    const MatrixF &x = run->attentionInputs[std::size_t(last)];
    const Eigen::Index dk = a.q.cols() / run->heads, h = run->heads - 1, i = run->length - 1, j = 1;
    double dot = 0.0;
    for (Eigen::Index c = h * dk; c < (h + 1) * dk; ++c) {
        double q = (*a.qBias)(c), k = (*a.kBias)(c);
        for (Eigen::Index d = 0; d < x.cols(); ++d) {
            q += double(x(i, d)) * a.q(d, c);
            k += double(x(j, d)) * a.k(d, c);
        }
        dot += q * k;
    }
    const double expected = dot * run->scales[std::size_t(last)];
    const double score = tensors->trace.scores[std::size_t(h)](i, j);
    QVERIFY2(std::abs(score - expected) < 1e-4 * std::max(1.0, std::abs(expected)),
             qPrintable(QStringLiteral("%1 vs %2").arg(score).arg(expected)));
    QVERIFY(w.shownAttention().scores());
    tabs->setCurrentWidget(w.views()->teaching());
    QTRY_VERIFY(w.views()->teaching()->html().contains(QStringLiteral("W_Q")));

    // Words merged: the weights of words, no tensors (a project's are per token).
    w.setSource()->mergeWordsAction()->setChecked(true);
    QTRY_VERIFY_WITH_TIMEOUT(w.shownAttention().merges() && w.shownAttention().heads() > 0, 30000);
    QVERIFY(!w.shownAttention().shownTensors());
    QTRY_VERIFY2(w.views()->teaching()->html().contains(QStringLiteral("words are merged")),
                 qPrintable(w.views()->teaching()->html())); // not "Computing…" for ever
    w.setSource()->mergeWordsAction()->setChecked(false);
    QTRY_VERIFY_WITH_TIMEOUT(w.shownAttention().shownTensors(), 30000);

    // A budget below the layer's tensors: its weights alone, read from the run.
    MemoryBudget small;
    small.fixedBytes = std::int64_t(run->heads) * run->length * run->length; // not even one float map per head
    w.setMemoryBudget(small);
    w.setSource()->setLayer(0);
    QTRY_VERIFY_WITH_TIMEOUT(w.shownAttention().layer == 0 && w.shownAttention().heads() > 0, 30000);
    QVERIFY(!w.shownAttention().shownTensors());
    QVERIFY(!w.shownAttention().scores());
    QTRY_VERIFY2(w.views()->teaching()->html().contains(QStringLiteral("the memory budget allows")),
                 qPrintable(w.views()->teaching()->html()));
    QCOMPARE((*w.shownAttention().weights())[0], MatrixF(run->attention(0, 0)));
}

void TestModelGui::newerTextSupersedesOlder()
{
    MainWindow w;
    QVERIFY(openAndType(w, QStringLiteral("a")));
    QSignalSpy shown(&w, &MainWindow::modelRunShown);
    // Typed quickly: only the last text may be shown, and never an older one after it.
    w.modelSource()->textEdit()->setText(QStringLiteral("first text that is older"));
    w.modelSource()->textEdit()->setText(QStringLiteral("second"));
    QVERIFY(shown.wait(30000));
    QVERIFY(w.modelSource()->jobs()->waitForIdle());
    QCoreApplication::sendPostedEvents(); // every answer the worker posted has been handled
    QCOMPARE(w.setSource()->attention()->set.queryTokens, shownTokens("second"));
    QCOMPARE(w.modelSource()->run()->ids.size(), shownTokens("second").size());
    for (const auto &args : shown) {
        auto run = args.at(0).value<ModelRunPtr>();
        QCOMPARE(run->ids.size(), shownTokens("second").size());
    }
}

void TestModelGui::badFolderLeavesDocumentUnchanged()
{
    MainWindow w;
    QVERIFY(openAndType(w, QStringLiteral("The model stays")));
    const auto before = w.setSource()->attention();
    const QString title = w.windowTitle();
    QSignalSpy failed(&w, &MainWindow::openFailed);
    // A folder that is not a model (no config.json), and a path that is no folder.
    QVERIFY(w.openModel(test::sourcePath(QStringLiteral("tests/fixtures/attention"))));
    QVERIFY(failed.wait(30000));
    QVERIFY(!w.lastError().isEmpty());
    QVERIFY(!w.openModel(test::sourcePath(QStringLiteral("tests/fixtures/no-such-folder"))));
    QCOMPARE(w.setSource()->attention(), before);
    QCOMPARE(w.windowTitle(), title);
    // Text longer than the positions: one line in the status bar, the shown run stays.
    QSignalSpy shown(&w, &MainWindow::modelRunShown);
    QString longText;
    for (int i = 0; i < 200; ++i)
        longText += QStringLiteral(" word");
    w.modelSource()->textEdit()->setText(longText);
    QVERIFY(w.modelSource()->jobs()->waitForIdle());
    QCoreApplication::sendPostedEvents(); // every answer the worker posted has been handled
    QCOMPARE(shown.count(), 0);
    QCOMPARE(w.setSource()->attention(), before);
    QVERIFY(w.lastError().contains(QStringLiteral("position"), Qt::CaseInsensitive));
}

void TestModelGui::textBeyondThePositionsGreysTheViews()
{
    // The heatmaps of the text run before stayed as they were, ungreyed, with only a status
    // bar line (gone after a few seconds) saying that the new text was not run.
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    QVERIFY(openAndType(w, QStringLiteral("A short text")));
    QVERIFY(!w.banner()->isStale());
    QString longText;
    for (int i = 0; i < 300; ++i)
        longText += QStringLiteral(" word");
    QSignalSpy failed(w.modelSource()->jobs(), &ModelController::runFailed);
    w.modelSource()->textEdit()->setText(longText);
    QVERIFY(failed.wait(30000));
    QVERIFY(w.banner()->isStale());
    QVERIFY2(w.banner()->reason().contains(QStringLiteral("position")), qPrintable(w.banner()->reason()));
    auto *banner = w.findChild<QLabel *>(QStringLiteral("staleBanner"));
    QVERIFY(banner && banner->isVisible());
    QVERIFY(banner->text().contains(QStringLiteral("text run before")));
    // A text that fits runs and clears the banner.
    QSignalSpy shown(&w, &MainWindow::modelRunShown);
    w.modelSource()->textEdit()->setText(QStringLiteral("A short text again"));
    QVERIFY(shown.wait(30000));
    QVERIFY(!w.banner()->isStale());
    QVERIFY(!banner->isVisible());
}

void TestModelGui::modelFileLeadingOutOfItsFolderIsRefused()
{
    // A shared model folder whose vocab.json links to another file of the reader's: refused
    // before it is read, and nothing of that file appears in the window.
    QTemporaryDir tmp;
    std::filesystem::copy(gpt2().toStdString(), tmp.filePath(QStringLiteral("m")).toStdString(),
                          std::filesystem::copy_options::recursive);
    QFile secret(tmp.filePath(QStringLiteral("secret.txt")));
    QVERIFY(secret.open(QIODevice::WriteOnly));
    secret.write("{\"token\": SECRET-TOKEN-1234}\n");
    secret.close();
    QVERIFY(QFile::remove(tmp.filePath(QStringLiteral("m/vocab.json"))));
    QVERIFY(QFile::link(QStringLiteral("../secret.txt"), tmp.filePath(QStringLiteral("m/vocab.json"))));
    MainWindow w;
    QSignalSpy failed(&w, &MainWindow::openFailed);
    QVERIFY(w.openModel(tmp.filePath(QStringLiteral("m"))));
    QVERIFY(failed.wait(30000));
    QVERIFY2(w.lastError().contains(QStringLiteral("vocab.json: refused: the file leads out of the model folder")),
             qPrintable(w.lastError()));
    QVERIFY(!w.lastError().contains(QStringLiteral("SECRET")));
    QVERIFY(!w.setSource());
}

void TestModelGui::openHeadInEditorGivesTheModelsAttention()
{
    MainWindow w;
    QVERIFY(openAndType(w, QStringLiteral("Heads attend to tokens")));
    const ModelRunPtr run = w.modelSource()->run();
    QVERIFY(run && run->layers >= 2 && run->heads >= 2);
    const int layer = 1, head = 1;
    auto *action = w.findChild<QAction *>(QStringLiteral("openHeadInEditor"));
    QVERIFY(action && action->isEnabled());
    w.setSource()->setLayer(layer);
    w.findChild<ModelView *>(QStringLiteral("modelView"))->setCurrent(layer, head);
    QSignalSpy computed(&w, &MainWindow::resultShown);
    action->trigger();
    QVERIFY(!w.setSource());
    QVERIFY(computed.wait(30000));
    const auto result = w.currentResult();
    QCOMPARE(QString::fromStdString(result->project.title), QStringLiteral("gpt2-f32 layer 1 head 1"));
    QCOMPARE(result->project.queryTokens, shownTokens("Heads attend to tokens"));
    QCOMPARE(result->trace.heads(), 1);
    const auto expected = run->attention(layer, head);
    const MatrixF &got = result->trace.weights[0];
    QCOMPARE(got.rows(), expected.rows());
    QCOMPARE(got.cols(), expected.cols());
    double worst = 0;
    for (Eigen::Index i = 0; i < got.rows(); ++i)
        for (Eigen::Index j = 0; j < got.cols(); ++j)
            worst = std::max(worst, std::abs(double(got(i, j)) - double(expected(i, j))));
    QVERIFY2(worst < 1e-5, qPrintable(QString::number(worst)));
    // An ordinary editable project: the action is off until another model is shown.
    QVERIFY(!action->isEnabled());
}

void TestModelGui::textTypedWhileAnotherModelLoadsRunsOnTheNewModel()
{
    // A GPT-2 is shown; a BERT folder is opened and, once loaded but before its first run is
    // shown, the user types. The text must run on the BERT: a run of the superseded GPT-2 must
    // never be shown (it used to replace the BERT's first run, leaving the GPT-2 on screen).
    MainWindow w;
    QVERIFY(openAndType(w, QStringLiteral("first model")));
    const TransformerWeights *first = w.modelSource()->run()->weights.get();
    QSignalSpy loaded(w.modelSource()->jobs(), &ModelController::loaded);
    QSignalSpy shown(&w, &MainWindow::modelRunShown);
    QVERIFY(w.openModel(test::sourcePath(QStringLiteral("tests/fixtures/models/bert-f32"))));
    QVERIFY(loaded.wait(30000));
    const ModelPtr second = loaded.at(0).at(0).value<ModelPtr>();
    QVERIFY(second && &second->weights() != first);
    w.modelSource()->textEdit()->setText(QStringLiteral("typed while loading"));
    QVERIFY(w.modelSource()->jobs()->waitForIdle());
    QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), 30000);
    QVERIFY(w.modelSource()->jobs()->waitForIdle());
    QCoreApplication::sendPostedEvents(); // every answer the worker posted has been handled
    for (const auto &args : shown)
        QCOMPARE(args.at(0).value<ModelRunPtr>()->weights.get(), &second->weights());
    QCOMPARE(w.modelSource()->run()->weights.get(), &second->weights());
    QVERIFY(w.windowTitle().startsWith(QStringLiteral("bert-f32")));
    QCOMPARE(w.modelSource()->run()->tokens, second->encode("typed while loading")->tokens);
}

void TestModelGui::supersededLongRunFinishesWithTheNewestText()
{
    const ModelPtr model = slowModel();
    QVERIFY(model);
    QString longText;
    while (model->encode(longText.toStdString()).ok() || longText.isEmpty())
        longText += QStringLiteral(" word");
    longText.chop(5); // the longest text of whole words the positions take
    QVERIFY(model->encode(longText.toStdString()));
    // The whole pass on the long text runs every layer.
    const auto longLength = Eigen::Index(model->encode(longText.toStdString())->ids.size());
    CpuBackend cpu;
    QVERIFY(model->forward(*model->encode(longText.toStdString()), cpu));

    // The runs' layers pass a gate: the long pass is held in its first layer while the newest
    // text arrives, then let go.
    auto gate = std::make_shared<LayerGate>();
    const auto openOnExit = qScopeGuard([gate] { gate->open(); });
    ModelController jobs;
    auto host = std::make_shared<BackendHost>();
    host->setBackend(std::make_shared<GatedCpuBackend>(gate));
    jobs.setBackendHost(host);
    jobs.setModel(model);
    QSignalSpy started(&jobs, &ModelController::runStarted);
    QSignalSpy ready(&jobs, &ModelController::runReady);
    QSignalSpy failed(&jobs, &ModelController::runFailed);
    jobs.run(longText);
    QVERIFY(started.wait(30000));
    QTRY_VERIFY_WITH_TIMEOUT(gate->isHolding(), 30000);
    jobs.run(QStringLiteral("the newest text"));
    gate->open();
    QVERIFY(ready.wait(30000));
    QVERIFY(jobs.waitForIdle());
    QCoreApplication::sendPostedEvents(); // every answer the worker posted has been handled
    QCOMPARE(ready.count(), 1);
    QCOMPARE(failed.count(), 0);
    const auto run = ready.at(0).at(1).value<ModelRunPtr>();
    QCOMPARE(run->tokens, model->encode("the newest text")->tokens);
    // The long pass stopped within a layer instead of running its twelve to the end.
    const int longLayers = gate->layersOf(longLength);
    QVERIFY2(
        longLayers < model->config().layers,
        qPrintable(
            QStringLiteral("the long pass computed %1 of its %2 layers").arg(longLayers).arg(model->config().layers)));
}

void TestModelGui::statusBarNamesTheModel_data()
{
    QTest::addColumn<QString>("folder");
    QTest::addColumn<QString>("expected");
    // The fixtures' shapes, from their config.json.
    QTest::newRow("gpt2") << "gpt2-f16"
                          << "Model: gpt2-f16 (GPT-2, 2 layers, 3 heads)";
    QTest::newRow("bert") << "bert-bf16"
                          << "Model: bert-bf16 (BERT, 2 layers, 2 heads)";
}

void TestModelGui::statusBarNamesTheModel()
{
    QFETCH(QString, folder);
    QFETCH(QString, expected);
    MainWindow w;
    QSignalSpy shown(&w, &MainWindow::modelRunShown);
    QVERIFY(w.openModel(test::sourcePath(QStringLiteral("tests/fixtures/models/") + folder)));
    QVERIFY(shown.wait(30000));
    // The model, then where its attention ran (the backend the user chose: Auto here).
    const QString onBackend = expected + QStringLiteral(" on ");
    QVERIFY2(w.statusText().startsWith(onBackend) && w.statusText().contains(QStringLiteral(" | ")),
             qPrintable(w.statusText()));
    // Another sentence keeps it.
    w.modelSource()->textEdit()->setText(QStringLiteral("the cat"));
    QVERIFY(shown.wait(30000));
    QVERIFY2(w.statusText().startsWith(onBackend) && w.statusText().contains(QStringLiteral(" | ")),
             qPrintable(w.statusText()));
}

void TestModelGui::bertShowsClsSepAndOpensEachHead()
{
    // BERT: [CLS] ... [SEP] as encode() gives, no causal mask (one sentence, so no padding),
    // every layer and head in the model view, and each head opened in the editor computing the
    // run's attention again.
    const QString folder = test::sourcePath(QStringLiteral("tests/fixtures/models/bert-f32"));
    const std::string text = "The cat sat on the mat, playing with attention."; // "play", "##ing"
    MainWindow w;
    w.show();
    QVERIFY(openAndType(w, QString::fromStdString(text), folder));
    auto model = TransformerModel::load(folder.toStdString());
    QVERIFY(model);
    const auto encoding = model->encode(text);
    QVERIFY(encoding);
    QCOMPARE(encoding->tokens.front(), std::string("[CLS]"));
    QCOMPARE(encoding->tokens.back(), std::string("[SEP]"));
    QVERIFY(std::find(encoding->tokens.begin(), encoding->tokens.end(), "##ing") != encoding->tokens.end());
    QCOMPARE(w.setSource()->attention()->set.queryTokens, encoding->tokens);
    QCOMPARE(w.setSource()->attention()->set.keyTokens, encoding->tokens);
    QCOMPARE(w.modelSource()->run()->ids, encoding->ids);
    auto *view = w.findChild<ModelView *>(QStringLiteral("modelView"));
    QVERIFY(view);
    w.views()->tabs()->setCurrentWidget(view);
    QTRY_VERIFY_WITH_TIMEOUT(view->isFilled(), 30000);
    QCOMPARE(view->layers(), model->config().layers);
    QCOMPARE(view->heads(), model->config().heads);

    const ModelRunPtr run = w.modelSource()->run();
    auto *action = w.findChild<QAction *>(QStringLiteral("openHeadInEditor"));
    QVERIFY(action);
    for (int layer = 0; layer < run->layers; ++layer)
        for (int head = 0; head < run->heads; ++head) {
            if (layer + head > 0) {
                // Back to the model (the editor's project replaced its document): the text box
                // kept the sentence, and the model runs it again.
                QSignalSpy shown(&w, &MainWindow::modelRunShown);
                QVERIFY(w.openModel(folder));
                QVERIFY(shown.wait(30000));
                QCOMPARE(w.modelSource()->run()->attentions, run->attentions);
            }
            QVERIFY(action->isEnabled());
            w.setSource()->setLayer(layer);
            view->setCurrent(layer, head);
            QSignalSpy computed(&w, &MainWindow::resultShown);
            action->trigger();
            QVERIFY(!w.setSource());
            QVERIFY(computed.wait(30000));
            const auto result = w.currentResult();
            QCOMPARE(result->project.queryTokens, encoding->tokens);
            QVERIFY(!result->project.problem.mask.causal);
            QCOMPARE(result->trace.heads(), 1);
            const auto expected = run->attention(layer, head);
            const MatrixF &got = result->trace.weights[0];
            QCOMPARE(got.rows(), expected.rows());
            QCOMPARE(got.cols(), expected.cols());
            double worst = 0;
            for (Eigen::Index i = 0; i < got.rows(); ++i)
                for (Eigen::Index j = 0; j < got.cols(); ++j)
                    worst = std::max(worst, std::abs(double(got(i, j)) - double(expected(i, j))));
            QVERIFY2(worst < 1e-5, qPrintable(QStringLiteral("layer %1 head %2: %3").arg(layer).arg(head).arg(worst)));
        }
}

void TestModelGui::openingAModelAsksToSaveChanges_data()
{
    QTest::addColumn<QString>("action");
    QTest::newRow("File > Open Model") << "openModel";
    QTest::newRow("File > Examples > example model") << "exampleModel";
}

void TestModelGui::openingAModelAsksToSaveChanges()
{
    // A modified project, then a model opened over it: the user is asked first, and Cancel
    // keeps the project (File > Open Model… used to go straight to the folder dialog).
    QFETCH(QString, action);
    const ExampleModelAt example(gpt2());
    MainWindow w;
    w.show();
    QVERIFY(w.document()->setValue(MatrixId::Wq, 0, 0, 7.0f));
    QSignalSpy shown(&w, &MainWindow::modelRunShown);
    QStringList modals;
    // Answers whatever comes modal: a message box with Cancel, any other dialog rejected.
    QTimer::singleShot(0, [&modals] {
        QWidget *modal = QApplication::activeModalWidget();
        if (auto *box = qobject_cast<QMessageBox *>(modal)) {
            modals << box->text();
            box->button(QMessageBox::Cancel)->click();
        } else if (auto *dialog = qobject_cast<QDialog *>(modal)) {
            modals << QString::fromLatin1(dialog->metaObject()->className());
            dialog->reject();
        }
    });
    auto *trigger = w.findChild<QAction *>(action);
    QVERIFY(trigger && trigger->isEnabled());
    trigger->trigger();
    QCOMPARE(modals.size(), 1);
    QVERIFY2(modals.first().contains(QStringLiteral("unsaved")), qPrintable(modals.first()));
    QVERIFY(!w.modelSource()); // nothing is being loaded
    QCoreApplication::sendPostedEvents();
    QCOMPARE(shown.count(), 0);
    QVERIFY(!w.setSource());
    QCOMPARE(w.document()->problem().weights.q(0, 0), 7.0f);
}

void TestModelGui::exampleModelEntry_data()
{
    QTest::addColumn<QString>("folder");
    QTest::addColumn<bool>("present");
    // $ATTNSCOPE_EXAMPLE_MODEL stands for where the program looks: a model there, or nothing.
    QTest::newRow("present") << gpt2() << true;
    QTest::newRow("missing") << test::sourcePath(QStringLiteral("tests/fixtures/no-such-model")) << false;
}

void TestModelGui::exampleModelEntry()
{
    QFETCH(QString, folder);
    QFETCH(bool, present);
    const ExampleModelAt example(folder);
    MainWindow w;
    auto *action = w.findChild<QAction *>(QStringLiteral("exampleModel"));
    QVERIFY(action);
    QCOMPARE(action->text(), QStringLiteral("Example model: tiny GPT-2"));
    // In File > Examples, first.
    QMenu *examples = nullptr;
    for (QObject *o : action->associatedObjects())
        if (auto *menu = qobject_cast<QMenu *>(o))
            examples = menu;
    QVERIFY(examples);
    QCOMPARE(examples->title(), QStringLiteral("&Examples"));
    QCOMPARE(examples->actions().value(0), action);
    QCOMPARE(action->isEnabled(), present);
    if (!present) {
        // Disabled, and the tooltip says why and where it looked.
        QVERIFY2(action->toolTip().contains(QStringLiteral("not installed")), qPrintable(action->toolTip()));
        QVERIFY2(action->toolTip().contains(QDir::toNativeSeparators(QDir::cleanPath(folder))),
                 qPrintable(action->toolTip()));
        QVERIFY(examples->toolTipsVisible());
        return;
    }
    QSignalSpy shown(&w, &MainWindow::modelRunShown);
    action->trigger();
    QVERIFY(shown.wait(30000));
    auto model = TransformerModel::load(folder.toStdString());
    QVERIFY(model);
    QVERIFY(w.setSource());
    QCOMPARE(w.setSource()->attention()->set.layers(), model->config().layers);
    QCOMPARE(w.setSource()->attention()->set.heads(), model->config().heads);
    QVERIFY(w.windowTitle().startsWith(QFileInfo(folder).fileName()));
}

void TestModelGui::headOpenedOverAnotherNeverShowsItsResult()
{
    // A head is opened in the editor and, while its computation runs, an example over it: the
    // head's result must not be shown in the example's document (it was, with the head's title;
    // a slow first computation of the window's "New project" showed up the same way in
    // openHeadInEditorGivesTheModelsAttention).
    MainWindow w;
    QVERIFY(openAndType(w, QStringLiteral("Heads attend to tokens")));
    QSignalSpy shown(&w, &MainWindow::resultShown);
    bool switched = false, posted = false;
    connect(w.computeController(), &ComputeController::busyChanged, &w, [&](bool busy) {
        if (busy && !posted) {
            posted = true;
            // Posted now, before the worker starts: it runs after the head's computation has
            // been taken on, and before the head's result (posted by the worker) arrives.
            QMetaObject::invokeMethod(
                &w,
                [&] {
                    switched = true;
                    w.openExample(QStringLiteral(":/examples/self-attention-tutorial.attnscope.json"));
                },
                Qt::QueuedConnection);
        }
    });
    QVERIFY(w.openHeadInEditor(0, 1));
    QVERIFY(shown.wait(30000));
    QVERIFY(switched);
    QTRY_VERIFY_WITH_TIMEOUT(!w.computeController()->isBusy(), 30000);
    QCoreApplication::sendPostedEvents(); // every answer the workers posted has been handled
    for (const auto &args : shown)
        QCOMPARE(args.at(0).value<ComputedTracePtr>()->project.title, w.document()->project().title);
    QCOMPARE(w.currentResult()->project.title, w.document()->project().title);
}

QTEST_MAIN(TestModelGui)
#include "tst_modelgui.moc"
