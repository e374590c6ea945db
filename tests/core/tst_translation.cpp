// Encoder–decoder translation models (design.md, "encoder–decoder translation models"): the
// random-weight Marian folders of tests/fixtures/marian against a float64 reference written
// from transformers' MarianMTModel and MarianTokenizer (tests/fixtures/marian_reference.py):
// tokenization, the three kinds of attention, hidden states and logits of teacher-forced
// passes, greedy ids; and broken folders refused in one line.

#include "../common/ModelFixtures.h"
#include "../common/TestUtil.h"
#include "../common/TranslationFixtures.h"

#include "core/attention/CpuBackend.h"
#include "core/models/TranslationModel.h"
#include "core/tokenizers/MarianTokenizer.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <cmath>
#include <map>

using namespace attnscope;

namespace {

// The folder is refused by TranslationModel::load in one line holding `expected`, of `kind`.
void checkTranslationRefused(const QString &dir, const QString &expected, int kind)
{
    auto model = TranslationModel::load(dir.toStdString());
    QVERIFY(!model);
    const QString message = QString::fromStdString(model.message());
    QVERIFY2(message.contains(expected), qPrintable(message));
    QVERIFY2(!message.contains('\n'), qPrintable(message));
    QCOMPARE(int(model.kind()), kind);
}

} // namespace

class TestTranslation : public QObject
{
    Q_OBJECT

private slots:
    void tokenizationMatchesReference_data() { test::addTranslationCaseRows(); }
    void tokenizationMatchesReference();
    void forwardMatchesReference_data() { test::addTranslationCaseRows(); }
    void forwardMatchesReference();
    void greedyGivesTheReferenceIds_data();
    void greedyGivesTheReferenceIds();
    void layerProblemsReproduceEachKind_data();
    void layerProblemsReproduceEachKind();
    void attentionSetsHaveTheTokensOnTheirAxes();
    void languageCodesAreReadAsTransformersDoes_data();
    void languageCodesAreReadAsTransformersDoes();
    void specialTokensTypedInTheTextStayWhole();
    void cancelledTranslationStops();
    void brokenFolderIsRefusedInOneLine_data();
    void brokenFolderIsRefusedInOneLine();
    void otherCommandsRefuseATranslationFolder();
    void exampleModelTranslatesAsItsReadmeSays();
};

void TestTranslation::tokenizationMatchesReference()
{
    QFETCH(QString, folder);
    QFETCH(int, index);
    const test::TranslationCase c = test::readTranslationCases(folder)[std::size_t(index)];
    auto model = TranslationModel::load(test::translationFixture(folder).toStdString());
    QVERIFY2(model, model ? "" : model.message().c_str());
    auto source = model->encodeSource(c.source.toStdString());
    QVERIFY2(source, source ? "" : source.message().c_str());
    QCOMPARE(source->ids, c.sourceIds);
    QCOMPARE(source->tokens, c.sourceTokens);
    if (c.target) {
        auto target = model->encodeTarget(c.target->toStdString());
        QVERIFY2(target, target ? "" : target.message().c_str());
        QCOMPARE(target->ids, c.targetIds);
        QCOMPARE(target->tokens, c.targetTokens);
        QCOMPARE(target->ids.front(), model->config().decoderStartId);
    }
}

void TestTranslation::forwardMatchesReference()
{
    QFETCH(QString, folder);
    QFETCH(int, index);
    const test::TranslationCase c = test::readTranslationCases(folder)[std::size_t(index)];
    auto model = TranslationModel::load(test::translationFixture(folder).toStdString());
    QVERIFY2(model, model ? "" : model.message().c_str());
    auto source = model->input(c.sourceIds, "the source");
    auto target = model->input(c.targetIds, "the target");
    QVERIFY(source && target);
    CpuBackend cpu;
    auto run = model->forward(*source, *target, cpu);
    QVERIFY2(run, run ? "" : run.message().c_str());
    const TranslationConfig &config = model->config();
    const std::int64_t s = std::int64_t(c.sourceIds.size()), t = std::int64_t(c.targetIds.size());
    QCOMPARE(std::int64_t((*run)->crossAttentions.size()),
             std::int64_t(config.decoder.layers) * config.decoder.heads * t * s);
    QCOMPARE((*run)->target.tokens, c.targetTokens);
    const QString diff = test::compareTranslationRun(**run, folder, c.name);
    QVERIFY2(diff.isEmpty(), qPrintable(diff));
}

void TestTranslation::greedyGivesTheReferenceIds_data()
{
    QTest::addColumn<QString>("folder");
    for (const char *folder : test::kTranslationFolders)
        QTest::newRow(folder) << QString(folder);
}

// marian-f32 is cut at generation_config.json's max_length (10, not config.json's 12) with the
// forced eos; marian-f16 stops by choosing </s>, and would choose the pad id at every step if
// the search did not exclude it (tests/fixtures/marian/README.md).
void TestTranslation::greedyGivesTheReferenceIds()
{
    QFETCH(QString, folder);
    bool found = false;
    for (const test::TranslationCase &c : test::readTranslationCases(folder)) {
        if (c.target)
            continue;
        found = true;
        auto model = TranslationModel::load(test::translationFixture(folder).toStdString());
        QVERIFY2(model, model ? "" : model.message().c_str());
        auto source = model->encodeSource(c.source.toStdString());
        QVERIFY2(source, source ? "" : source.message().c_str());
        QCOMPARE(source->ids, c.sourceIds);
        CpuBackend cpu;
        auto ids = model->greedy(*source, cpu);
        QVERIFY2(ids, ids ? "" : ids.message().c_str());
        QCOMPARE(ids->ids, c.targetIds);
        QCOMPARE(ids->tokens, c.targetTokens);
        QVERIFY(std::find(ids->ids.begin() + 1, ids->ids.end(), model->config().padId) == ids->ids.end());
    }
    QVERIFY(found);
}

void TestTranslation::layerProblemsReproduceEachKind_data()
{
    QTest::addColumn<int>("kind");
    QTest::newRow("encoder") << int(TranslationAttention::Encoder);
    QTest::newRow("decoder") << int(TranslationAttention::Decoder);
    QTest::newRow("cross") << int(TranslationAttention::Cross);
}

// Each layer's problem, as "open this head in the editor" forms it, computes the run's maps
// again: the cross-attention one with the decoder's queries and the encoder's keys and values.
void TestTranslation::layerProblemsReproduceEachKind()
{
    QFETCH(int, kind);
    const auto k = TranslationAttention(kind);
    const test::TranslationCase c = test::readTranslationCases("marian-f16").front();
    auto model = TranslationModel::load(test::translationFixture("marian-f16").toStdString());
    QVERIFY(model);
    CpuBackend cpu;
    auto run = model->forward(*model->input(c.sourceIds, "s"), *model->input(c.targetIds, "t"), cpu);
    QVERIFY2(run, run ? "" : run.message().c_str());
    auto set = translationAttentionSet(*run, k);
    QVERIFY2(set, set ? "" : set.message().c_str());
    for (int l = 0; l < set->layers(); ++l) {
        const AttentionProblem layer = translationLayerProblem(**run, k, l);
        QCOMPARE(layer.spec.mode, k == TranslationAttention::Cross ? AttentionMode::Cross : AttentionMode::Self);
        QCOMPARE(layer.mask.causal, k == TranslationAttention::Decoder);
        for (int h = 0; h < set->heads(); ++h) {
            auto trace = cpu.compute(translationHeadProblem(**run, k, l, h));
            QVERIFY2(trace, trace ? "" : trace.message().c_str());
            const MatrixF shown = set->map(0, l, h);
            QCOMPARE(trace->weights[0].rows(), shown.rows());
            QCOMPARE(trace->weights[0].cols(), shown.cols());
            QVERIFY2((trace->weights[0] - shown).cwiseAbs().maxCoeff() < 1e-5,
                     qPrintable(QStringLiteral("layer %1 head %2").arg(l).arg(h)));
        }
    }
}

void TestTranslation::attentionSetsHaveTheTokensOnTheirAxes()
{
    const test::TranslationCase c = test::readTranslationCases("marian-f32").front();
    auto model = TranslationModel::load(test::translationFixture("marian-f32").toStdString());
    QVERIFY(model);
    CpuBackend cpu;
    auto run = model->forward(*model->input(c.sourceIds, "s"), *model->input(c.targetIds, "t"), cpu);
    QVERIFY(run);
    const TranslationConfig &config = model->config();
    const struct {
        TranslationAttention kind;
        int layers, heads;
        const std::vector<std::string> &queries, &keys;
    } kinds[] = {
        {TranslationAttention::Encoder, config.encoder.layers, config.encoder.heads, c.sourceTokens, c.sourceTokens},
        {TranslationAttention::Decoder, config.decoder.layers, config.decoder.heads, c.targetTokens, c.targetTokens},
        {TranslationAttention::Cross, config.decoder.layers, config.decoder.heads, c.targetTokens, c.sourceTokens},
    };
    // Labels are made readable as every set's are ("▁cat" shown as a word); the same tokens
    // give the same labels on every axis they label.
    std::map<const std::vector<std::string> *, std::vector<std::string>> labels;
    for (const auto &k : kinds) {
        auto set = translationAttentionSet(*run, k.kind);
        QVERIFY2(set, set ? "" : set.message().c_str());
        QCOMPARE(set->samples(), 1);
        QCOMPARE(set->layers(), k.layers);
        QCOMPARE(set->heads(), k.heads);
        QCOMPARE(set->queries(), std::int64_t(k.queries.size()));
        QCOMPARE(set->keys(), std::int64_t(k.keys.size()));
        for (const auto &[tokens, shown] :
             {std::pair{&k.queries, &set->queryTokens}, std::pair{&k.keys, &set->keyTokens}}) {
            QCOMPARE(shown->size(), tokens->size());
            if (labels.count(tokens))
                QCOMPARE(*shown, labels[tokens]);
            labels[tokens] = *shown;
        }
    }
    QCOMPARE(labels.size(), std::size_t(2));
}

void TestTranslation::languageCodesAreReadAsTransformersDoes_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("rest");
    // Python: re.compile(">>.+<<").match(text) and .sub("", text).
    QTest::newRow("code") << ">>fra<< hello"
                          << ">>fra<<"
                          << " hello";
    QTest::newRow("greedy to the last <<") << ">>a<< b >>c<< d"
                                           << ">>a<< b >>c<<"
                                           << " d";
    QTest::newRow("not at the start") << "x >>de<< y"
                                      << ""
                                      << "x  y";
    QTest::newRow("needs a character") << ">><< z"
                                       << ""
                                       << ">><< z";
    QTest::newRow("one line only") << ">>fr\n<< z >>de<<"
                                   << ""
                                   << ">>fr\n<< z ";
    QTest::newRow("no code") << "plain text"
                             << ""
                             << "plain text";
}

void TestTranslation::languageCodesAreReadAsTransformersDoes()
{
    QFETCH(QString, text);
    QFETCH(QString, code);
    QFETCH(QString, rest);
    const std::string t = text.toStdString();
    QCOMPARE(QString::fromStdString(std::string(marianLanguageCode(t))), code);
    QCOMPARE(QString::fromStdString(withoutMarianLanguageCodes(t)), rest);
}

void TestTranslation::specialTokensTypedInTheTextStayWhole()
{
    auto model = TranslationModel::load(test::translationFixture("marian-f32").toStdString());
    QVERIFY(model);
    auto plain = model->encodeSource("the cat");
    auto typed = model->encodeSource("the cat</s> the cat");
    QVERIFY(plain && typed);
    // "the cat" </s> "the cat" </s>: the typed </s> is the eos id, not pieces of "<", "/s", ">".
    std::vector<std::int32_t> expected(plain->ids.begin(), plain->ids.end());
    expected.insert(expected.end(), plain->ids.begin(), plain->ids.end());
    QCOMPARE(typed->ids, expected);
}

void TestTranslation::cancelledTranslationStops()
{
    const test::TranslationCase c = test::readTranslationCases("marian-f32").front();
    auto model = TranslationModel::load(test::translationFixture("marian-f32").toStdString());
    QVERIFY(model);
    CpuBackend cpu;
    std::atomic<bool> cancel{true};
    auto run = model->forward(*model->input(c.sourceIds, "s"), *model->input(c.targetIds, "t"), cpu, &cancel);
    QVERIFY(!run);
    QCOMPARE(run.kind(), ErrorKind::Cancelled);
    auto ids = model->greedy(*model->input(c.sourceIds, "s"), cpu, &cancel);
    QVERIFY(!ids);
    QCOMPARE(ids.kind(), ErrorKind::Cancelled);
}

void TestTranslation::brokenFolderIsRefusedInOneLine_data()
{
    QTest::addColumn<QString>("mutation");
    QTest::addColumn<QString>("expected");
    QTest::addColumn<int>("kind");
    const int invalid = int(ErrorKind::InvalidInput), io = int(ErrorKind::Io),
              unsupported = int(ErrorKind::Unsupported);
    QTest::newRow("no source.spm") << "rm source.spm"
                                   << "source.spm: no such file" << io;
    QTest::newRow("no target.spm") << "rm target.spm"
                                   << "target.spm: no such file" << io;
    QTest::newRow("no vocab.json") << "rm vocab.json"
                                   << "vocab.json: no such file" << io;
    QTest::newRow("spm not a model") << "write source.spm not a sentencepiece model"
                                     << "source.spm: " << invalid;
    QTest::newRow("vocab without eos") << R"(write vocab.json {"<unk>": 0, "<pad>": 1})"
                                       << "vocab.json: no \"</s>\" token" << invalid;
    QTest::newRow("vocab id given twice") << R"(write vocab.json {"</s>": 0, "<unk>": 0, "<pad>": 1})"
                                          << "vocab.json: the id 0 is given to both \"</s>\" and \"<unk>\"" << invalid;
    QTest::newRow("vocab not an object") << "write vocab.json [1, 2]"
                                         << "vocab.json: expected an object" << invalid;
    QTest::newRow("separate vocabularies")
        << R"(write target_vocab.json {})"
        << "target_vocab.json: separate source and target vocabularies" << unsupported;
    QTest::newRow("vocab size differs") << R"(write vocab.json {"</s>": 0, "<unk>": 1, "<pad>": 2})"
                                        << "vocab.json: 3 tokens, but config.json's vocab_size is 165" << invalid;
    QTest::newRow("decoder vocabulary differs") << "config vocab_size 200"
                                                << "decoder_vocab_size 165 differs from vocab_size 200" << unsupported;
    QTest::newRow("unknown activation") << R"(config activation_function "gelu_fast")"
                                        << "activation_function \"gelu_fast\" is not supported" << unsupported;
    QTest::newRow("separate embeddings") << "config share_encoder_decoder_embeddings false"
                                         << "share_encoder_decoder_embeddings: false" << unsupported;
    QTest::newRow("heads do not divide") << "config decoder_attention_heads 5"
                                         << "d_model 16 is not divisible by decoder_attention_heads 5" << invalid;
    QTest::newRow("pad id out of the vocabulary") << "config pad_token_id 500"
                                                  << "pad_token_id: expected an id from 0 to 164" << invalid;
    QTest::newRow("wrong shape") << "config encoder_ffn_dim 30"
                                 << "encoder.layers.0.fc1.weight: expected 30 x 16, found 32 x 16" << invalid;
    QTest::newRow("no weights") << "rm model.safetensors"
                                << "model.safetensors: no such file" << io;
    QTest::newRow("only pytorch_model.bin") << "pickle"
                                            << "pytorch_model.bin: PyTorch pickles are not read" << unsupported;
    QTest::newRow("not marian") << R"(config model_type "bart")"
                                << "model_type: expected \"marian\"" << unsupported;
}

void TestTranslation::brokenFolderIsRefusedInOneLine()
{
    QFETCH(QString, mutation);
    QFETCH(QString, expected);
    QFETCH(int, kind);
    QTemporaryDir tmp;
    const QString dir = tmp.filePath("m");
    test::copyFolder(test::translationFixture("marian-f32"), dir);
    const QString verb = mutation.section(' ', 0, 0);
    if (verb == "write") {
        test::writeFile(dir + "/" + mutation.section(' ', 1, 1), mutation.section(' ', 2).toUtf8());
    } else if (verb == "pickle") {
        QVERIFY(QFile::rename(dir + "/model.safetensors", dir + "/pytorch_model.bin"));
    } else {
        QVERIFY(test::mutateFolder(dir, mutation));
    }
    checkTranslationRefused(dir, expected, kind);
}

// A translation folder given where a decoder or encoder model is expected says what it is.
void TestTranslation::otherCommandsRefuseATranslationFolder()
{
    auto model = TransformerModel::load(test::translationFixture("marian-f32").toStdString());
    QVERIFY(!model);
    QVERIFY2(QString::fromStdString(model.message()).contains("is a translation model"), model.message().c_str());
    QCOMPARE(model.kind(), ErrorKind::Unsupported);
    QVERIFY(isTranslationModelFolder(test::translationFixture("marian-f16").toStdString()));
    QVERIFY(!isTranslationModelFolder(test::sourcePath("tests/fixtures/models/gpt2-f32").toStdString()));
}

// The built-in example (resources/models/tiny-marian-en-zh): the 14 sentences of its
// examples.json (written by its train.py from PyTorch, and checked by its check_folder.py with
// a numpy forward) give the same source ids, greedy ids and translation here.
void TestTranslation::exampleModelTranslatesAsItsReadmeSays()
{
    const QString dir = test::sourcePath("resources/models/tiny-marian-en-zh");
    auto model = TranslationModel::load(dir.toStdString());
    QVERIFY2(model, model ? "" : model.message().c_str());
    QFile file(dir + "/examples.json");
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QJsonArray examples = QJsonDocument::fromJson(file.readAll()).array();
    QCOMPARE(examples.size(), 14);
    CpuBackend cpu;
    for (const QJsonValue &v : examples) {
        const QJsonObject e = v.toObject();
        auto source = model->encodeSource(e["source"].toString().toStdString());
        QVERIFY2(source, source ? "" : source.message().c_str());
        QCOMPARE(source->ids, test::idsOf(e["source_ids"].toArray()));
        auto ids = model->greedy(*source, cpu);
        QVERIFY2(ids, ids ? "" : ids.message().c_str());
        QCOMPARE(ids->ids, test::idsOf(e["output_ids"].toArray()));
        std::vector<std::int32_t> words(ids->ids.begin() + 1, ids->ids.end() - 1); // no start, no </s>
        QCOMPARE(QString::fromStdString(model->tokenizers()->target.decode(words)), e["translation"].toString());
    }
}

QTEST_GUILESS_MAIN(TestTranslation)
#include "tst_translation.moc"
