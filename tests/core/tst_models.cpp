// GPT-2 and BERT forward passes (core/models/TransformerModel.h) against a float64 NumPy reference
// written after transformers' modeling_gpt2.py / modeling_bert.py
// (tests/fixtures/make_model_fixtures.py), in F32, F16 and BF16, with and without the
// "transformer."/"bert." prefix; every malformed folder refused with one line; and a model
// folder's files confined to it (links followed), Hugging Face's hub cache layout included.

#include "../common/ModelFixtures.h"
#include "../common/TestUtil.h"

#include "core/attention/CpuBackend.h"
#include "core/formats/Npy.h"
#include "core/models/TransformerModel.h"
#include "core/tokenizers/Tokenizer.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <filesystem>

using namespace attnscope;

namespace {

QString fixture(const QString &name)
{
    return test::sourcePath(QStringLiteral("tests/fixtures/models/") + name);
}

using Expected = test::ExpectedForward;
using test::copyFolder;
using test::readExpectedForward;
constexpr auto compare = test::compareValues;
using test::writeFile;

// A safetensors file of one tensor whose data_offsets run past the data.
QByteArray lyingSafetensors()
{
    const QByteArray header = R"({"wte.weight":{"dtype":"F32","shape":[4,4],"data_offsets":[0,64]}})";
    QByteArray bytes(8, '\0');
    bytes[0] = char(header.size());
    return bytes + header + QByteArray(16, '\0');
}

} // namespace

class TestModels : public QObject
{
    Q_OBJECT

private slots:
    void forwardMatchesReference_data();
    void forwardMatchesReference();
    void headProblemReproducesEachHead();
    void setFromRun();
    void cancelFlagStopsTheForwardPass();
    void malformedFolderIsRefusedWithOneLine_data();
    void malformedFolderIsRefusedWithOneLine();
    void inputOutsideTheModelIsRefused();
    void scaleByInverseLayerIndex();
    void configFields_data();
    void configFields();
    void modelFilesOutsideTheFolderAreRefused_data();
    void modelFilesOutsideTheFolderAreRefused();
    void huggingFaceCacheSnapshotLoads();
    void linkedModelFolderLoads();
};

void TestModels::forwardMatchesReference_data()
{
    QTest::addColumn<QString>("folder");
    QTest::addColumn<bool>("fromText");
    for (const char *name : {"gpt2-f32", "gpt2-f16", "gpt2-bf16", "bert-f32", "bert-f16", "bert-bf16"}) {
        QTest::addRow("%s text", name) << QString(name) << true;
        QTest::addRow("%s ids", name) << QString(name) << false;
    }
}

void TestModels::forwardMatchesReference()
{
    QFETCH(QString, folder);
    QFETCH(bool, fromText);
    const Expected expected = readExpectedForward(fixture(folder));
    auto model = TransformerModel::load(fixture(folder).toStdString());
    QVERIFY2(model, model ? "" : model.message().c_str());
    auto input = fromText ? model->encode(expected.text.toStdString()) : model->input(expected.ids);
    QVERIFY2(input, input ? "" : input.message().c_str());
    QCOMPARE(input->ids, expected.ids);
    QCOMPARE(input->tokens, expected.tokens);
    CpuBackend cpu;
    auto run = model->forward(*input, cpu);
    QVERIFY2(run, run ? "" : run.message().c_str());
    const ModelRun &r = **run;
    const ModelConfig &c = model->config();
    const std::int64_t t = std::int64_t(expected.ids.size());
    QCOMPARE(expected.attentions.shape, (std::vector<std::int64_t>{c.layers, c.heads, t, t}));
    QCOMPARE(expected.hidden.shape, (std::vector<std::int64_t>{c.layers + 1, t, c.width}));
    QCOMPARE(std::int64_t(r.attentions.size()), expected.attentions.size());
    QCOMPARE(int(r.hiddenStates.size()), c.layers + 1);
    QCOMPARE(int(r.attentionInputs.size()), c.layers);
    const QString attention = compare("attentions", r.attentions.data(), expected.attentions, 1e-4, 0);
    QVERIFY2(attention.isEmpty(), qPrintable(attention));
    std::vector<float> hidden;
    for (const MatrixF &h : r.hiddenStates)
        hidden.insert(hidden.end(), h.data(), h.data() + h.size());
    const QString states = compare("hidden_states", hidden.data(), expected.hidden, 1e-3, 1e-3);
    QVERIFY2(states.isEmpty(), qPrintable(states));
    // The reference attends, so the check can fail: the maps are not uniform.
    QVERIFY(std::abs(r.attention(c.layers - 1, 0)(t - 1, 0) - 1.0f / float(t)) > 1e-3f);
}

void TestModels::headProblemReproducesEachHead()
{
    for (const char *name : {"gpt2-f32", "bert-f32"}) {
        auto model = TransformerModel::load(fixture(name).toStdString());
        QVERIFY2(model, model ? "" : model.message().c_str());
        const Expected expected = readExpectedForward(fixture(name));
        CpuBackend cpu;
        auto run = model->forward(*model->input(expected.ids), cpu);
        QVERIFY(run);
        for (int l = 0; l < (*run)->layers; ++l)
            for (int h = 0; h < (*run)->heads; ++h) {
                const AttentionProblem problem = headProblem(**run, l, h);
                QCOMPARE(problem.spec.scaleMode, ScaleMode::InvSqrtDk);
                QCOMPARE(problem.mask.causal, QString(name).startsWith("gpt2"));
                auto trace = cpu.compute(problem);
                QVERIFY2(trace, trace ? "" : trace.message().c_str());
                const MatrixF expectedMap = (*run)->attention(l, h);
                QVERIFY(trace->weights[0].isApprox(expectedMap, 1e-5f));
            }
    }
}

void TestModels::setFromRun()
{
    auto model = TransformerModel::load(fixture("bert-f16").toStdString());
    QVERIFY(model);
    CpuBackend cpu;
    auto run = model->forward(*model->encode("the cat sat"), cpu);
    QVERIFY(run);
    auto set = attnscope::attentionSetFromRun(*run);
    QVERIFY2(set, set ? "" : set.message().c_str());
    QCOMPARE(set->layers(), 2);
    QCOMPARE(set->heads(), 2);
    QCOMPARE(set->queries(), std::int64_t(5));
    QCOMPARE(set->queryTokens, (std::vector<std::string>{"[CLS]", "the", "cat", "sat", "[SEP]"}));
    QCOMPARE(set->at(0, 1, 1, 2, 3), (*run)->attention(1, 1)(2, 3));
    // How each layer attends, as the run says: every head its own keys and values, no window,
    // BERT's 1/sqrt(head size).
    QCOMPARE(set->layerFacts.size(), std::size_t(2));
    const double headSize = double(model->config().width) / model->config().heads;
    for (int l = 0; l < 2; ++l) {
        const LayerFacts f = set->facts(l);
        QCOMPARE(f.queryHeads, 2);
        QCOMPARE(f.kvHeads, 2);
        QCOMPARE(f.window, std::int64_t(0));
        QCOMPARE(f.scale, (*run)->scales[std::size_t(l)]);
        QVERIFY(std::abs(f.scale - 1.0 / std::sqrt(headSize)) < 1e-12);
    }
    QVERIFY(!set->facts(2).isKnown()); // past the last layer: nothing known
}

namespace {
// The CPU backend, raising a flag once it has computed `after` layers' attention: the flag
// then rises in the middle of a forward pass, as when the GUI supersedes a run in flight.
class RaisingBackend : public AttentionBackend
{
public:
    RaisingBackend(std::atomic<bool> &flag, int after) : m_flag(flag), m_after(after) {}
    std::string name() const override { return m_cpu.name(); }
    std::string deviceName() const override { return m_cpu.deviceName(); }
    Result<AttentionTrace> compute(const AttentionProblem &problem) override
    {
        if (++m_calls >= m_after)
            m_flag = true;
        return m_cpu.compute(problem);
    }
    int calls() const { return m_calls; }

private:
    CpuBackend m_cpu;
    std::atomic<bool> &m_flag;
    int m_after;
    int m_calls = 0;
};
} // namespace

void TestModels::cancelFlagStopsTheForwardPass()
{
    for (const char *name : {"gpt2-f32", "bert-f32"}) {
        auto model = TransformerModel::load(fixture(name).toStdString());
        QVERIFY(model);
        const Encoding input = *model->input(readExpectedForward(fixture(name)).ids);
        CpuBackend cpu;
        // A flag that stays down changes nothing.
        std::atomic<bool> flag = false;
        auto plain = model->forward(input, cpu);
        auto flagged = model->forward(input, cpu, &flag);
        QVERIFY(plain && flagged);
        QCOMPARE((*flagged)->attentions, (*plain)->attentions);
        // Raised before the pass: nothing is computed.
        flag = true;
        RaisingBackend never(flag, 1000);
        auto stopped = model->forward(input, never, &flag);
        QVERIFY(!stopped);
        QCOMPARE(stopped.kind(), ErrorKind::Cancelled);
        QCOMPARE(never.calls(), 0);
        // Raised during layer 0's attention: the pass stops there, before layer 1.
        flag = false;
        RaisingBackend raising(flag, 1);
        auto midway = model->forward(input, raising, &flag);
        QVERIFY(!midway);
        QCOMPARE(midway.kind(), ErrorKind::Cancelled);
        QCOMPARE(raising.calls(), 1);
        QVERIFY2(midway.message().find("layer 0") != std::string::npos, midway.message().c_str());
    }
}

void TestModels::malformedFolderIsRefusedWithOneLine_data()
{
    QTest::addColumn<QString>("base");
    QTest::addColumn<QString>("mutation");
    QTest::addColumn<QString>("expected");
    QTest::addColumn<int>("kind");
    const int invalid = int(ErrorKind::InvalidInput), io = int(ErrorKind::Io),
              unsupported = int(ErrorKind::Unsupported);
    QTest::newRow("no config.json") << "gpt2-f32"
                                    << "rm config.json"
                                    << "config.json: no such file" << io;
    QTest::newRow("no model.safetensors") << "gpt2-f32"
                                          << "rm model.safetensors"
                                          << "model.safetensors: no such file" << io;
    QTest::newRow("no vocab.json") << "gpt2-f32"
                                   << "rm vocab.json"
                                   << "vocab.json: no such file" << io;
    QTest::newRow("no vocab.txt") << "bert-f32"
                                  << "rm vocab.txt"
                                  << "tokenizer.json: no such file (a model folder as transformers saves it "
                                     "holds tokenizer.json, or vocab.json and merges.txt for GPT-2, vocab.txt for BERT)"
                                  << io;
    QTest::newRow("unknown model_type") << "gpt2-f32"
                                        << "config model_type \"mixtral\""
                                        << "model_type \"mixtral\" is not supported (gpt2, bert, llama, mistral, "
                                           "qwen2, qwen3, gemma2, gemma3_text or gemma3)"
                                        << unsupported;
    QTest::newRow("truncated safetensors") << "gpt2-f32"
                                           << "truncate"
                                           << "model.safetensors" << invalid;
    QTest::newRow("lying header") << "gpt2-f32"
                                  << "lying"
                                  << "model.safetensors" << invalid;
    QTest::newRow("wrong shape") << "gpt2-f32"
                                 << "config vocab_size 300"
                                 << "wte.weight: expected 300 x 24, found" << invalid;
    QTest::newRow("wrong shape bert") << "bert-f16"
                                      << "config intermediate_size 41"
                                      << "encoder.layer.0.intermediate.dense.weight: expected 41 x 16, found 40 x 16"
                                      << invalid;
    QTest::newRow("missing layer") << "bert-bf16"
                                   << "config num_hidden_layers 3"
                                   << "no tensor encoder.layer.2.attention.self.query.weight" << invalid;
    QTest::newRow("relu") << "gpt2-f32"
                          << "config activation_function \"relu\""
                          << "activation_function \"relu\" is not supported (gelu_new)" << unsupported;
    QTest::newRow("heads do not divide") << "gpt2-f32"
                                         << "config n_head 5"
                                         << "n_embd 24 is not divisible by n_head 5" << invalid;
    QTest::newRow("bad n_layer") << "gpt2-f32"
                                 << "config n_layer \"2\""
                                 << "n_layer: expected a whole number" << invalid;
}

void TestModels::malformedFolderIsRefusedWithOneLine()
{
    QFETCH(QString, base);
    QFETCH(QString, mutation);
    QFETCH(QString, expected);
    QFETCH(int, kind);
    QTemporaryDir tmp;
    const QString dir = tmp.filePath("m");
    copyFolder(fixture(base), dir);
    if (mutation == "lying")
        writeFile(dir + "/model.safetensors", lyingSafetensors());
    else
        QVERIFY(test::mutateFolder(dir, mutation));
    test::checkRefusedInOneLine(dir, expected, kind);
}

void TestModels::inputOutsideTheModelIsRefused()
{
    auto model = TransformerModel::load(fixture("gpt2-bf16").toStdString());
    QVERIFY(model);
    const int vocab = model->config().vocabSize;
    auto beyond = model->input({1, 2, vocab});
    QVERIFY(!beyond);
    QCOMPARE(beyond.message(), "ids[2]: " + std::to_string(vocab) + " is not in the vocabulary (ids from 0 to " +
                                   std::to_string(vocab - 1) + ")");
    QVERIFY(!model->input({-1}));
    QVERIFY(!model->input({}));
    std::string text;
    for (int i = 0; i < 12; ++i)
        text += "the cat sat. ";
    auto tooLong = model->encode(text);
    QVERIFY(!tooLong);
    QVERIFY2(QString::fromStdString(tooLong.message()).contains("this model takes at most 32"),
             tooLong.message().c_str());
    auto tooManyIds = model->input(std::vector<std::int32_t>(33, 1));
    QVERIFY(!tooManyIds);
    QVERIFY(!QString::fromStdString(tooManyIds.message()).contains('\n'));
    // A forward refuses what input() refuses, whoever built the encoding.
    CpuBackend cpu;
    Encoding bad;
    bad.ids = {vocab + 5};
    QVERIFY(!model->forward(bad, cpu));
}

// GPT-2's scale_attn_by_inverse_layer_idx divides layer l's scores by l + 1 as well: layer 0
// stays the reference's, layer 1 changes, and its head opened alone keeps that scale.
void TestModels::scaleByInverseLayerIndex()
{
    QTemporaryDir tmp;
    const QString dir = tmp.filePath("m");
    copyFolder(fixture("gpt2-f32"), dir);
    QJsonObject config = QJsonDocument::fromJson(test::readAll(dir + "/config.json")).object();
    config["scale_attn_by_inverse_layer_idx"] = true;
    writeFile(dir + "/config.json", QJsonDocument(config).toJson());
    auto model = TransformerModel::load(dir.toStdString());
    QVERIFY2(model, model ? "" : model.message().c_str());
    const Expected expected = readExpectedForward(fixture("gpt2-f32"));
    CpuBackend cpu;
    auto run = model->forward(*model->input(expected.ids), cpu);
    QVERIFY(run);
    const double dk = model->config().headDim();
    QCOMPARE((*run)->scales, (std::vector<double>{1 / std::sqrt(dk), 1 / std::sqrt(dk) / 2}));
    const std::int64_t perLayer = expected.attentions.size() / 2;
    NpyArray firstLayer = expected.attentions;
    firstLayer.data.resize(std::size_t(perLayer));
    firstLayer.shape = {perLayer};
    const QString same = compare("layer 0", (*run)->attentions.data(), firstLayer, 1e-4, 0);
    QVERIFY2(same.isEmpty(), qPrintable(same));
    double largest = 0;
    for (std::int64_t i = perLayer; i < expected.attentions.size(); ++i)
        largest =
            std::max(largest, std::abs((*run)->attentions[std::size_t(i)] - expected.attentions.data[std::size_t(i)]));
    QVERIFY(largest > 1e-2);
    const AttentionProblem head = headProblem(**run, 1, 2);
    QCOMPARE(head.spec.scaleMode, ScaleMode::Custom);
    auto trace = cpu.compute(head);
    QVERIFY(trace);
    QVERIFY(trace->weights[0].isApprox(MatrixF((*run)->attention(1, 2)), 1e-5f));
}

void TestModels::configFields_data()
{
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("expected"); // empty: accepted
    QTest::newRow("gpt2 defaults") << R"({"model_type": "gpt2"})"
                                   << "";
    QTest::newRow("n_ctx") << R"({"model_type": "gpt2", "n_ctx": 64})"
                           << "";
    QTest::newRow("n_inner null") << R"({"model_type": "gpt2", "n_inner": null})"
                                  << "";
    QTest::newRow("negative width") << R"({"model_type": "gpt2", "n_embd": -3})"
                                    << "n_embd: expected a whole number";
    QTest::newRow("eps string") << R"({"model_type": "gpt2", "layer_norm_epsilon": "x"})"
                                << "layer_norm_epsilon: expected a number";
    QTest::newRow("bert decoder") << R"({"model_type": "bert", "is_decoder": true})"
                                  << "is_decoder";
    QTest::newRow("bert relative") << R"({"model_type": "bert", "position_embedding_type": "relative_key"})"
                                   << "position_embedding_type \"relative_key\" is not supported";
    QTest::newRow("bert gelu_new") << R"({"model_type": "bert", "hidden_act": "tanh"})"
                                   << "hidden_act \"tanh\" is not supported (gelu)";
    QTest::newRow("no model_type") << R"({"n_layer": 2})"
                                   << "no \"model_type\"";
    QTest::newRow("not json") << "{"
                              << "not valid JSON";
}

void TestModels::configFields()
{
    QFETCH(QString, json);
    QFETCH(QString, expected);
    auto config = parseModelConfig(json.toStdString(), "c.json");
    if (expected.isEmpty()) {
        QVERIFY2(config, config ? "" : config.message().c_str());
        if (json.contains("n_ctx"))
            QCOMPARE(config->positions, 64);
        else
            QCOMPARE(config->positions, 1024);
        QCOMPARE(config->intermediate, 4 * config->width);
        return;
    }
    QVERIFY(!config);
    const QString message = QString::fromStdString(config.message());
    QVERIFY2(message.startsWith("c.json: ") && message.contains(expected), qPrintable(message));
    QVERIFY(!message.contains('\n'));
}

void TestModels::modelFilesOutsideTheFolderAreRefused_data()
{
    // A shared model folder whose file is a link out of it: the file is refused before it is
    // read, the same way whether its target exists or not, and nothing of it is echoed (a
    // config.json leading to a credentials file would be quoted by the JSON error otherwise).
    QTest::addColumn<QString>("base");
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("target"); // relative to the folder holding the model folder
    for (const char *file : {"config.json", "vocab.json", "merges.txt", "model.safetensors"}) {
        QTest::addRow("gpt2 %s -> existing file outside", file) << "gpt2-f32" << file << "../secret.txt";
        QTest::addRow("gpt2 %s -> missing file outside", file) << "gpt2-f32" << file << "../missing.txt";
    }
    for (const char *file : {"config.json", "vocab.txt", "tokenizer_config.json"}) {
        QTest::addRow("bert %s -> existing file outside", file) << "bert-f32" << file << "../secret.txt";
        QTest::addRow("bert %s -> missing file outside", file) << "bert-f32" << file << "../missing.txt";
    }
    QTest::newRow("absolute link") << "gpt2-f32"
                                   << "config.json"
                                   << "ABSOLUTE/secret.txt";
    QTest::newRow("link through a sibling folder") << "gpt2-f32"
                                                   << "vocab.json"
                                                   << "../other/../secret.txt";
}

void TestModels::modelFilesOutsideTheFolderAreRefused()
{
    QFETCH(QString, base);
    QFETCH(QString, file);
    QFETCH(QString, target);
    QTemporaryDir tmp;
    const QString dir = tmp.filePath("m");
    copyFolder(fixture(base), dir);
    // JSON-looking enough to be quoted by a parser, never a model file.
    writeFile(tmp.filePath("secret.txt"), "{\"model_type\": \"gpt2\", \"token\": SECRET-TOKEN-1234}\n");
    QVERIFY(QDir().mkpath(tmp.filePath("other")));
    QVERIFY(QFile::remove(dir + "/" + file));
    QVERIFY(QFile::link(target.replace("ABSOLUTE", tmp.path()), dir + "/" + file));
    const QString expected =
        dir + "/" + file + ": refused: the file leads out of the model folder (a model's files must be in its folder)";
    auto model = TransformerModel::load(dir.toStdString());
    QVERIFY(!model);
    QCOMPARE(QString::fromStdString(model.message()), expected);
    QCOMPARE(int(model.kind()), int(ErrorKind::InvalidInput));
    if (file != "model.safetensors") {
        auto tokenizer = loadTokenizer(dir.toStdString()); // what `tokenize` reads
        QVERIFY(!tokenizer);
        QCOMPARE(QString::fromStdString(tokenizer.message()), expected);
    }
}

void TestModels::huggingFaceCacheSnapshotLoads()
{
    // The hub cache (huggingface_hub's layout): models--ORG--NAME/snapshots/REV/FILE are links
    // to ../../blobs/HASH. Those targets are the repository's own files; a link into another
    // repository's blobs is not.
    QTemporaryDir tmp;
    const QDir hub(tmp.filePath("hub"));
    const QString repository = hub.filePath("models--org--tiny-gpt2");
    const QString snapshot = repository + "/snapshots/0123abcd";
    QVERIFY(QDir().mkpath(repository + "/blobs") && QDir().mkpath(snapshot) && QDir().mkpath(repository + "/refs"));
    writeFile(repository + "/refs/main", "0123abcd");
    const QStringList files = {"config.json", "vocab.json", "merges.txt", "model.safetensors"};
    for (int i = 0; i < files.size(); ++i) {
        const QString hash = QStringLiteral("%1e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b85").arg(i);
        QVERIFY(QFile::copy(fixture("gpt2-f32/" + files[i]), repository + "/blobs/" + hash));
        QVERIFY(QFile::link("../../blobs/" + hash, snapshot + "/" + files[i]));
    }
    auto model = TransformerModel::load(snapshot.toStdString());
    QVERIFY2(model, model ? "" : model.message().c_str());
    const Expected expected = readExpectedForward(fixture("gpt2-f32"));
    auto input = model->encode(expected.text.toStdString());
    QVERIFY2(input, input ? "" : input.message().c_str());
    QCOMPARE(input->ids, expected.ids);
    // The same snapshot opened through a link to it (a user's ~/models/gpt2 -> the cache).
    QVERIFY(QFile::link(snapshot, tmp.filePath("gpt2")));
    QVERIFY(TransformerModel::load(tmp.filePath("gpt2").toStdString()));

    // Another repository's blob is outside this one.
    const QString other = hub.filePath("models--evil--x");
    QVERIFY(QDir().mkpath(other + "/blobs"));
    writeFile(other + "/blobs/cafe", "{\"model_type\": \"gpt2\"}");
    QVERIFY(QFile::remove(snapshot + "/config.json"));
    QVERIFY(QFile::link("../../../models--evil--x/blobs/cafe", snapshot + "/config.json"));
    auto refused = TransformerModel::load(snapshot.toStdString());
    QVERIFY(!refused);
    QVERIFY2(refused.message().ends_with("config.json: refused: the file leads out of the model folder (a model's "
                                         "files must be in its folder)"),
             refused.message().c_str());
    // And a folder named like a snapshot outside a cache repository gets no such allowance.
    QVERIFY(QDir().mkpath(tmp.filePath("plain/snapshots/rev")) && QDir().mkpath(tmp.filePath("plain/blobs")));
    for (const QString &file : files) {
        QVERIFY(QFile::copy(fixture("gpt2-f32/" + file), tmp.filePath("plain/blobs/" + file)));
        QVERIFY(QFile::link("../../blobs/" + file, tmp.filePath("plain/snapshots/rev/" + file)));
    }
    QVERIFY(!TransformerModel::load(tmp.filePath("plain/snapshots/rev").toStdString()));
}

void TestModels::linkedModelFolderLoads()
{
    // The folder itself may be a link, and its files links within it.
    QTemporaryDir tmp;
    copyFolder(fixture("bert-f32"), tmp.filePath("real"));
    QVERIFY(QDir().mkpath(tmp.filePath("real/files")));
    QVERIFY(QFile::rename(tmp.filePath("real/vocab.txt"), tmp.filePath("real/files/vocab.txt")));
    QVERIFY(QFile::link("files/vocab.txt", tmp.filePath("real/vocab.txt")));
    QVERIFY(QFile::link(tmp.filePath("real"), tmp.filePath("linked")));
    auto model = TransformerModel::load(tmp.filePath("linked").toStdString());
    QVERIFY2(model, model ? "" : model.message().c_str());
}

QTEST_GUILESS_MAIN(TestModels)
#include "tst_models.moc"
