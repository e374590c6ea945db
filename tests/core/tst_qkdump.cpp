// The attnscope-qk dump (design.md, "Contract: attention from queries and keys"): the fixtures of
// tests/fixtures/qk (written by make_qk_fixtures.py with numpy's float64 weights beside them)
// read back into the weights numpy computed, the writer's round trip and its all-or-nothing
// replacement of a folder, and malformed dumps refused in one line.

#include "../common/ModelFixtures.h"
#include "../common/TestUtil.h"

#include "core/ErrorCode.h"
#include "core/attention/QkAttention.h"
#include "core/formats/Npy.h"
#include "core/formats/QkDump.h"

#include <QDir>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <random>

using namespace attnscope;

namespace {

QString qkFixture(const QString &name)
{
    return test::sourcePath(QStringLiteral("tests/fixtures/qk/") + name);
}

// The largest |got - expected| over every layer and head, and where it is.
QString compareWeights(const QkDump &dump, const NpyArray &expected, double tolerance)
{
    if (expected.shape.size() != 4 || expected.shape[0] != dump.layers() || expected.shape[2] != dump.queries() ||
        expected.shape[3] != dump.keys())
        return QStringLiteral("expected_weights.npy has an unexpected shape");
    std::size_t at = 0;
    for (int l = 0; l < dump.layers(); ++l) {
        auto layer = dump.layer(l);
        if (!layer)
            return QString::fromStdString(layer.message());
        const std::vector<MatrixD> weights = referenceQkWeights(**layer);
        if (std::int64_t(weights.size()) != expected.shape[1])
            return QStringLiteral("layer %1: %2 heads, expected %3").arg(l).arg(weights.size()).arg(expected.shape[1]);
        for (std::size_t h = 0; h < weights.size(); ++h)
            for (Eigen::Index i = 0; i < weights[h].rows(); ++i)
                for (Eigen::Index j = 0; j < weights[h].cols(); ++j, ++at)
                    if (!(std::abs(weights[h](i, j) - expected.data[at]) <= tolerance))
                        return QStringLiteral("layer %1, head %2, [%3, %4]: %5, expected %6")
                            .arg(l)
                            .arg(h)
                            .arg(i)
                            .arg(j)
                            .arg(weights[h](i, j), 0, 'g', 12)
                            .arg(expected.data[at], 0, 'g', 12);
    }
    return {};
}

MatrixF randomMatrix(std::mt19937 &rng, Eigen::Index rows, Eigen::Index cols)
{
    std::normal_distribution<float> normal(0.0f, 1.0f);
    MatrixF m(rows, cols);
    for (Eigen::Index i = 0; i < m.size(); ++i)
        m.data()[i] = normal(rng);
    return m;
}

// A layer with every optional part set: positions, sinks, lse, a window and a soft-cap.
QkLayer randomLayer(std::mt19937 &rng, int heads, int kvHeads, int headDim, Eigen::Index tq, Eigen::Index tk)
{
    QkLayer l;
    l.heads = heads;
    l.kvHeads = kvHeads;
    l.headDim = headDim;
    l.scale = 1.0 / std::sqrt(double(headDim)) + 0.01 * double(rng() % 7);
    l.causal = rng() % 2 == 0;
    l.window = 1 + std::int64_t(rng() % 4);
    l.softcap = 2.5 + double(rng() % 5);
    l.sinks = VectorF(randomMatrix(rng, 1, heads));
    for (Eigen::Index i = 0; i < tq; ++i)
        l.queryPositions.push_back(tk - tq + i + 3);
    for (Eigen::Index j = 0; j < tk; ++j)
        l.keyPositions.push_back(j + 3);
    l.q = randomMatrix(rng, tq, Eigen::Index(heads) * headDim);
    l.k = randomMatrix(rng, tk, Eigen::Index(kvHeads) * headDim);
    l.lse = randomMatrix(rng, heads, tq);
    return l;
}

// Files and folders directly in `folder`.
QStringList entries(const QString &folder)
{
    return QDir(folder).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden, QDir::Name);
}

Status writeDump(const std::string &dir, const std::vector<QkLayer> &layers, std::vector<std::string> tokens = {},
                 std::vector<std::string> keyTokens = {})
{
    QkDumpWriter writer(dir, std::move(tokens), std::move(keyTokens));
    for (const QkLayer &l : layers)
        if (Status s = writer.addLayer(l); !s)
            return s;
    return writer.finish();
}

} // namespace

class TestQkDump : public QObject
{
    Q_OBJECT

private slots:
    void fixtureMatchesNumpy_data();
    void fixtureMatchesNumpy();
    void labelsAndPositionsAreRead();
    void factsAreReadWithoutQk();
    void storedDtypeIsReported();
    void dumpIsRecognisedByName();
    void layersAreKeptAndShared();
    void writerRoundTrip();
    void writerReplacesAnExistingDumpOnlyAtFinish();
    void writerDroppedBeforeFinishLeavesTheOldDump();
    void writerRefusesToReplaceAFolderThatIsNotADump();
    void writerRefusesMismatchedLayers();
    void malformedDumpIsRefusedInOneLine_data();
    void malformedDumpIsRefusedInOneLine();
    void changedLayerFileIsReported();
    void fuzzSeedsAreValidDumps();
};

void TestQkDump::fixtureMatchesNumpy_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<bool>("lseGiven");
    QTest::newRow("gqa") << "gqa" << false;
    QTest::newRow("window, soft-cap, sinks") << "window" << false;
    QTest::newRow("offset queries") << "offset" << true;
    QTest::newRow("bf16") << "bf16" << false;
}

void TestQkDump::fixtureMatchesNumpy()
{
    QFETCH(QString, name);
    QFETCH(bool, lseGiven);
    auto dump = QkDump::open(qkFixture(name).toStdString());
    QVERIFY2(dump, dump ? "" : dump.message().c_str());
    auto weights = readNpyFile(qkFixture(name + "/expected_weights.npy").toStdString());
    QVERIFY(weights);
    const QString mismatch = compareWeights(*dump, *weights, 1e-6);
    QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));

    // The log-sum-exp of every row: numpy's, and the kernel's where the dump gives it.
    auto expectedLse = readNpyFile(qkFixture(name + "/expected_lse.npy").toStdString());
    QVERIFY(expectedLse);
    std::size_t at = 0;
    for (int l = 0; l < dump->layers(); ++l) {
        auto layer = dump->layer(l);
        QVERIFY(layer);
        const MatrixD lse = referenceQkLogSumExp(**layer);
        for (Eigen::Index h = 0; h < lse.rows(); ++h)
            for (Eigen::Index i = 0; i < lse.cols(); ++i, ++at)
                QVERIFY2(std::abs(lse(h, i) - expectedLse->data[at]) <= 1e-9, qPrintable(QString::number(at)));
        QCOMPARE(bool((*layer)->lse), lseGiven);
        if (lseGiven) {
            QCOMPARE((*layer)->lse->rows(), lse.rows());
            QCOMPARE((*layer)->lse->cols(), lse.cols());
            for (Eigen::Index h = 0; h < lse.rows(); ++h)
                for (Eigen::Index i = 0; i < lse.cols(); ++i)
                    QVERIFY2(std::abs(double((**layer).lse->coeff(h, i)) - lse(h, i)) <= 1e-5,
                             qPrintable(QStringLiteral("lse[%1, %2]").arg(h).arg(i)));
        }
    }
}

void TestQkDump::labelsAndPositionsAreRead()
{
    auto gqa = QkDump::open(qkFixture("gqa").toStdString());
    QVERIFY(gqa);
    const std::vector<std::string> words = {"The", " cat", " sat", " on", " the", " mat"};
    QCOMPARE(gqa->tokens(), words);
    QCOMPARE(gqa->keyTokens(), words); // Tq = Tk: the keys' labels default to the queries'
    QCOMPARE(gqa->facts(0).queryPositions, std::vector<std::int64_t>{});

    // Through the index file, too.
    auto offset = QkDump::open(qkFixture("offset/attnscope-qk.json").toStdString());
    QVERIFY2(offset, offset ? "" : offset.message().c_str());
    QCOMPARE(offset->queries(), std::int64_t(8));
    QCOMPARE(offset->keys(), std::int64_t(16));
    QCOMPARE(offset->tokens().size(), std::size_t(8));
    QCOMPARE(offset->keyTokens().size(), std::size_t(16));
    QCOMPARE(offset->tokens().front(), std::string(" softly"));
    QCOMPARE(offset->keyTokens().front(), std::string("The"));
    QCOMPARE(offset->keyTokens()[8], offset->tokens().front());
    auto layer = offset->layer(0);
    QVERIFY(layer);
    std::vector<std::int64_t> queries, keys;
    for (std::int64_t i = 0; i < 16; ++i)
        (i >= 8 ? queries : keys).push_back(i);
    keys.insert(keys.end(), queries.begin(), queries.end());
    QCOMPARE((*layer)->queryPositions, queries);
    QCOMPARE((*layer)->keyPositions, keys);
    // The first query (position 8) sees keys 0..8 and nothing after.
    QVERIFY((*layer)->allowed(0, 8));
    QVERIFY(!(*layer)->allowed(0, 9));
}

void TestQkDump::factsAreReadWithoutQk()
{
    auto dump = QkDump::open(qkFixture("window").toStdString());
    QVERIFY(dump);
    QCOMPARE(dump->layers(), 2);
    const QkLayer first = dump->facts(0), second = dump->facts(1);
    QCOMPARE(first.heads, 2);
    QCOMPARE(first.kvHeads, 1);
    QCOMPARE(first.headDim, 4);
    QCOMPARE(first.scale, 0.5);
    QVERIFY(first.causal);
    QCOMPARE(first.window, std::int64_t(3));
    QVERIFY(first.softcap);
    QCOMPARE(*first.softcap, 5.0);
    QVERIFY(first.sinks);
    QCOMPARE(first.sinks->size(), Eigen::Index(2));
    QCOMPARE(first.q.size(), Eigen::Index(0));
    QCOMPARE(first.k.size(), Eigen::Index(0));
    QCOMPARE(second.window, std::int64_t(0));
    QVERIFY(!second.softcap);
    QVERIFY(!second.sinks);
    auto layer = dump->layer(0);
    QVERIFY(layer);
    QCOMPARE((*layer)->sinks->coeff(1), first.sinks->coeff(1));
    QCOMPARE((*layer)->q.rows(), Eigen::Index(8));
    QCOMPARE((*layer)->q.cols(), Eigen::Index(8));
    QCOMPARE((*layer)->k.cols(), Eigen::Index(4));
}

void TestQkDump::storedDtypeIsReported()
{
    auto bf16 = QkDump::open(qkFixture("bf16").toStdString());
    QVERIFY(bf16);
    QCOMPARE(bf16->dtype(0), std::string("BF16"));
    QCOMPARE(bf16->dtype(1), std::string("BF16"));
    auto f32 = QkDump::open(qkFixture("gqa").toStdString());
    QVERIFY(f32);
    QCOMPARE(f32->dtype(0), std::string("F32"));
    QCOMPARE(f32->fileBytes(), QFileInfo(qkFixture("gqa/layer-000.safetensors")).size() +
                                   QFileInfo(qkFixture("gqa/layer-001.safetensors")).size());
    QVERIFY(f32->checkUnchanged());
}

void TestQkDump::dumpIsRecognisedByName()
{
    QVERIFY(QkDump::isDump(qkFixture("gqa").toStdString()));
    QVERIFY(QkDump::isDump(qkFixture("gqa/attnscope-qk.json").toStdString()));
    QVERIFY(!QkDump::isDump(qkFixture("").toStdString()));
    QVERIFY(!QkDump::isDump(qkFixture("gqa/expected_weights.npy").toStdString()));
    QVERIFY(!QkDump::isDump(test::sourcePath("tests/fixtures/models/gpt2-f32").toStdString()));
    auto notADump = QkDump::open(test::sourcePath("tests/fixtures/models/gpt2-f32").toStdString());
    QVERIFY(!notADump);
    QVERIFY2(notADump.message().find("no attnscope-qk.json") != std::string::npos, notADump.message().c_str());
}

void TestQkDump::layersAreKeptAndShared()
{
    auto dump = QkDump::open(qkFixture("gqa").toStdString());
    QVERIFY(dump);
    auto first = dump->layer(0), again = dump->layer(0);
    QVERIFY(first && again);
    QCOMPARE(first->get(), again->get());
    const QkDump copy = *dump; // copies share the layers read
    auto fromCopy = copy.layer(0);
    QVERIFY(fromCopy);
    QCOMPARE(fromCopy->get(), first->get());
    QVERIFY(!dump->layer(2));
    QVERIFY(!dump->layer(-1));
}

void TestQkDump::writerRoundTrip()
{
    QTemporaryDir tmp;
    std::mt19937 rng(25);
    std::vector<QkLayer> layers;
    for (int l = 0; l < 3; ++l)
        layers.push_back(randomLayer(rng, 4, 2, 3, 5, 7));
    layers[1].sinks.reset();
    layers[1].lse.reset();
    layers[1].softcap.reset();
    layers[1].window = 0;
    for (QkLayer &l : layers) {
        l.queryPositions = layers[0].queryPositions;
        l.keyPositions = layers[0].keyPositions;
    }
    const std::vector<std::string> tokens = {"a", "b", "\xff", "d", "e"},
                                   keyTokens = {"k0", "k1", "k2", "k3", "k4", "k5", "k6"};
    const std::string dir = tmp.filePath("dump").toStdString();
    Status written = writeDump(dir, layers, tokens, keyTokens);
    QVERIFY2(written, written ? "" : written.message().c_str());
    QCOMPARE(entries(tmp.path()), QStringList{"dump"});
    QCOMPARE(entries(tmp.filePath("dump")), (QStringList{"attnscope-qk.json", "layer-000.safetensors",
                                                         "layer-001.safetensors", "layer-002.safetensors"}));

    auto dump = QkDump::open(dir);
    QVERIFY2(dump, dump ? "" : dump.message().c_str());
    QCOMPARE(dump->layers(), 3);
    QCOMPARE(dump->queries(), std::int64_t(5));
    QCOMPARE(dump->keys(), std::int64_t(7));
    QCOMPARE(dump->tokens()[0], tokens[0]);
    QCOMPARE(dump->tokens()[2], std::string("\xef\xbf\xbd")); // not UTF-8: written as U+FFFD
    QCOMPARE(dump->keyTokens(), keyTokens);
    for (int l = 0; l < 3; ++l) {
        const QkLayer &want = layers[std::size_t(l)];
        auto got = dump->layer(l);
        QVERIFY2(got, got ? "" : got.message().c_str());
        const QkLayer &g = **got;
        QCOMPARE(dump->dtype(l), std::string("F32"));
        QCOMPARE(g.heads, want.heads);
        QCOMPARE(g.kvHeads, want.kvHeads);
        QCOMPARE(g.headDim, want.headDim);
        QCOMPARE(g.scale, want.scale);
        QCOMPARE(g.causal, want.causal);
        QCOMPARE(g.window, want.window);
        QCOMPARE(g.softcap, want.softcap);
        QCOMPARE(g.queryPositions, want.queryPositions);
        QCOMPARE(g.keyPositions, want.keyPositions);
        QVERIFY(g.q == want.q);
        QVERIFY(g.k == want.k);
        QCOMPARE(bool(g.sinks), bool(want.sinks));
        if (want.sinks)
            QVERIFY(*g.sinks == *want.sinks);
        QCOMPARE(bool(g.lse), bool(want.lse));
        if (want.lse)
            QVERIFY(*g.lse == *want.lse);
        const QkLayer facts = dump->facts(l);
        QCOMPARE(facts.window, want.window);
        QCOMPARE(facts.queryPositions, want.queryPositions);
    }
}

void TestQkDump::writerReplacesAnExistingDumpOnlyAtFinish()
{
    QTemporaryDir tmp;
    std::mt19937 rng(7);
    const std::string dir = tmp.filePath("dump").toStdString();
    const QkLayer old = randomLayer(rng, 2, 1, 4, 3, 3), fresh = randomLayer(rng, 2, 2, 2, 4, 4);
    QVERIFY(writeDump(dir, {old, old}));
    {
        QkDumpWriter writer(dir, {}, {});
        QVERIFY(writer.addLayer(fresh));
        // Until finish(), the old dump is whole where it was.
        auto before = QkDump::open(dir);
        QVERIFY(before);
        QCOMPARE(before->layers(), 2);
        QVERIFY(before->layer(0).value()->q == old.q);
        QCOMPARE(entries(tmp.filePath("dump")).size(), 3);
        QVERIFY(writer.finish());
    }
    auto after = QkDump::open(dir);
    QVERIFY(after);
    QCOMPARE(after->layers(), 1);
    QVERIFY(after->layer(0).value()->q == fresh.q);
    QCOMPARE(entries(tmp.path()), QStringList{"dump"});
    QCOMPARE(entries(tmp.filePath("dump")), (QStringList{"attnscope-qk.json", "layer-000.safetensors"}));
}

void TestQkDump::writerDroppedBeforeFinishLeavesTheOldDump()
{
    QTemporaryDir tmp;
    std::mt19937 rng(8);
    const std::string dir = tmp.filePath("dump").toStdString();
    const QkLayer old = randomLayer(rng, 2, 1, 4, 3, 3), fresh = randomLayer(rng, 2, 1, 4, 3, 3);
    QVERIFY(writeDump(dir, {old}));
    {
        QkDumpWriter writer(dir, {}, {});
        QVERIFY(writer.addLayer(fresh));
        QCOMPARE(entries(tmp.path()).size(), 2); // the dump and the new one being written beside it
    }
    QCOMPARE(entries(tmp.path()), QStringList{"dump"});
    auto dump = QkDump::open(dir);
    QVERIFY(dump);
    QVERIFY(dump->layer(0).value()->q == old.q);

    // A writer dropped before its first layer leaves nothing either, and makes no folder.
    {
        QkDumpWriter writer(tmp.filePath("other").toStdString(), {}, {});
    }
    QCOMPARE(entries(tmp.path()), QStringList{"dump"});
}

void TestQkDump::writerRefusesToReplaceAFolderThatIsNotADump()
{
    QTemporaryDir tmp;
    QVERIFY(QDir(tmp.path()).mkdir("notes"));
    test::writeFile(tmp.filePath("notes/keep.txt"), "mine");
    std::mt19937 rng(9);
    QkDumpWriter writer(tmp.filePath("notes").toStdString(), {}, {});
    Status s = writer.addLayer(randomLayer(rng, 2, 1, 4, 3, 3));
    QVERIFY(!s);
    QVERIFY2(s.message().find("is not an attnscope-qk dump") != std::string::npos, s.message().c_str());
    QCOMPARE(entries(tmp.filePath("notes")), QStringList{"keep.txt"});
    QCOMPARE(entries(tmp.path()), QStringList{"notes"});
}

void TestQkDump::writerRefusesMismatchedLayers()
{
    QTemporaryDir tmp;
    std::mt19937 rng(10);
    QkDumpWriter writer(tmp.filePath("dump").toStdString(), {"a", "b"}, {});
    QkLayer layer = randomLayer(rng, 2, 1, 4, 3, 3);
    Status tokens = writer.addLayer(layer);
    QVERIFY(!tokens);
    QVERIFY2(tokens.message().find("tokens: expected 3") != std::string::npos, tokens.message().c_str());

    QkDumpWriter second(tmp.filePath("dump").toStdString(), {}, {});
    QVERIFY(second.addLayer(layer));
    Status rows = second.addLayer(randomLayer(rng, 2, 1, 4, 4, 4));
    QVERIFY(!rows);
    QVERIFY2(rows.message().find("layer 1: 4 queries") != std::string::npos, rows.message().c_str());
    QkLayer bad = layer;
    bad.k(1, 2) = std::nanf("");
    Status nan = second.addLayer(bad);
    QVERIFY(!nan);
    QVERIFY2(nan.message().find("k: NaN at row 1, column 2") != std::string::npos, nan.message().c_str());
    QkLayer moved = layer;
    moved.keyPositions[0] = 1;
    QVERIFY(!second.addLayer(moved));
}

void TestQkDump::malformedDumpIsRefusedInOneLine_data()
{
    QTest::addColumn<QString>("base");
    QTest::addColumn<QString>("mutation");
    QTest::addColumn<QString>("expected");
    QTest::addColumn<int>("kind");
    const int invalid = int(ErrorKind::InvalidInput), io = int(ErrorKind::Io),
              unsupported = int(ErrorKind::Unsupported);
    QTest::newRow("missing layer file") << "gqa"
                                        << "rm layer-001.safetensors"
                                        << "layer-001.safetensors: missing (named by layers[1].file)" << io;
    QTest::newRow("missing index") << "gqa"
                                   << "rm attnscope-qk.json"
                                   << "not an attnscope-qk dump (no attnscope-qk.json found)" << io;
    QTest::newRow("q heads differ from the index") << "gqa"
                                                   << "layer 0 heads 2"
                                                   << "layer-000.safetensors: q: expected [Tq, 2, 4] (heads 2, "
                                                      "headDim 4 of layers[0]), found [6, 4, 4]"
                                                   << invalid;
    QTest::newRow("k heads differ from the index") << "gqa"
                                                   << "layer 1 kvHeads 1"
                                                   << "layer-001.safetensors: k: expected [Tk, 1, 4]" << invalid;
    QTest::newRow("H not divisible by KV")
        << "gqa"
        << "layer 0 kvHeads 3"
        << "attnscope-qk.json: layers[0]: heads 4 is not a multiple of kvHeads 3" << invalid;
    QTest::newRow("NaN in k") << "gqa"
                              << "nan layer-001.safetensors k 13"
                              << "layer-001.safetensors: k: NaN at [1, 1, 1]" << invalid;
    QTest::newRow("NaN in sinks") << "window"
                                  << "nan layer-000.safetensors sinks 1"
                                  << "layer-000.safetensors: sinks: NaN at [1]" << invalid;
    QTest::newRow("unknown version") << "gqa"
                                     << "index version 2"
                                     << "attnscope-qk.json: version 2 is not supported (this AttnScope reads version 1)"
                                     << unsupported;
    QTest::newRow("version as text") << "gqa"
                                     << "index version \"1\""
                                     << "attnscope-qk.json: version: expected a whole number, found \"1\"" << invalid;
    QTest::newRow("wrong format name") << "gqa"
                                       << "index format \"attnscope-attention\""
                                       << "attnscope-qk.json: format: expected \"attnscope-qk\", found "
                                          "\"attnscope-attention\""
                                       << invalid;
    QTest::newRow("no layers") << "gqa"
                               << "index layers []"
                               << "attnscope-qk.json: layers: expected a non-empty array of layers, found an empty "
                                  "array"
                               << invalid;
    QTest::newRow("truncated layer file") << "window"
                                          << "truncate layer-001.safetensors"
                                          << "layer-001.safetensors: " << invalid;
    QTest::newRow("Tq differs between layers") << "gqa"
                                               << "rows layer-001.safetensors q 5"
                                               << "layer-001.safetensors: q: 5 queries, but layer-000.safetensors "
                                                  "has 6"
                                               << invalid;
    QTest::newRow("lse of the wrong shape") << "offset"
                                            << "rows layer-000.safetensors lse 1"
                                            << "layer-000.safetensors: lse: expected [2, 8] (heads by queries), "
                                               "found [1, 8]"
                                            << invalid;
    QTest::newRow("path escaping the folder") << "gqa"
                                              << "layer 1 file \"../gqa/layer-001.safetensors\""
                                              << "attnscope-qk.json: layers[1].file: \"../gqa/layer-001.safetensors\" "
                                                 "leads out of the dump's folder"
                                              << invalid;
    QTest::newRow("absolute path") << "gqa"
                                   << "layer 0 file \"/etc/hostname\""
                                   << "attnscope-qk.json: layers[0].file: expected a path relative to the dump's "
                                      "folder"
                                   << invalid;
    QTest::newRow("link escaping the folder")
        << "gqa"
        << "ln outside.safetensors " + qkFixture("gqa/layer-000.safetensors") + "|layer 0 file \"outside.safetensors\""
        << "attnscope-qk.json: layers[0].file: \"outside.safetensors\" leads out of the dump's folder" << invalid;
    QTest::newRow("token count mismatch") << "gqa"
                                          << "index tokens [\"a\", \"b\"]"
                                          << "attnscope-qk.json: tokens: expected 6 (one per query row of the layer "
                                             "files), found 2"
                                          << invalid;
    QTest::newRow("key token count mismatch") << "offset"
                                              << "index keyTokens [\"a\"]"
                                              << "attnscope-qk.json: keyTokens: expected 16" << invalid;
    QTest::newRow("negative position") << "gqa"
                                       << "index queryPositions [0, 1, 2, -3, 4, 5]"
                                       << "attnscope-qk.json: queryPositions[3]: position -3 is negative" << invalid;
    QTest::newRow("position count mismatch") << "offset"
                                             << "index keyPositions [0, 1]"
                                             << "attnscope-qk.json: keyPositions: expected 16" << invalid;
    QTest::newRow("heads as text") << "gqa"
                                   << "layer 0 heads \"4\""
                                   << "attnscope-qk.json: layers[0].heads: expected a whole number of at least 1, "
                                      "found \"4\""
                                   << invalid;
    QTest::newRow("window zero") << "window"
                                 << "layer 0 window 0"
                                 << "attnscope-qk.json: layers[0].window: expected a whole number of at least 1, "
                                    "found 0 (or null for none)"
                                 << invalid;
    QTest::newRow("negative softcap") << "window"
                                      << "layer 0 softcap -1"
                                      << "attnscope-qk.json: layers[0].softcap: expected a positive number" << invalid;
    QTest::newRow("causal missing") << "gqa"
                                    << "layer 0 causal null"
                                    << "attnscope-qk.json: layers[0].causal: expected true or false, found null"
                                    << invalid;
    QTest::newRow("scale zero") << "gqa"
                                << "layer 0 scale 0"
                                << "attnscope-qk.json: layers[0].scale: expected a positive number, found 0" << invalid;
    QTest::newRow("tokens not an array") << "gqa"
                                         << "index tokens 5"
                                         << "attnscope-qk.json: tokens: expected an array of strings, found 5"
                                         << invalid;
}

void TestQkDump::malformedDumpIsRefusedInOneLine()
{
    QFETCH(QString, base);
    QFETCH(QString, mutation);
    QFETCH(QString, expected);
    QFETCH(int, kind);
    QTemporaryDir tmp;
    const QString dir = tmp.filePath("d");
    test::copyFolder(qkFixture(base), dir);
    QVERIFY(QkDump::open(dir.toStdString()));
    for (const QString &step : mutation.split('|'))
        QVERIFY2(test::mutateQkDump(dir, step), qPrintable(step));
    test::checkQkDumpRefusedInOneLine(dir, expected, kind);
}

void TestQkDump::changedLayerFileIsReported()
{
    QTemporaryDir tmp;
    const QString dir = tmp.filePath("d");
    test::copyFolder(qkFixture("gqa"), dir);
    auto dump = QkDump::open(dir.toStdString());
    QVERIFY(dump);
    QVERIFY(dump->checkUnchanged());
    QVERIFY(test::mutateQkDump(dir, "truncate layer-001.safetensors"));
    Status s = dump->checkUnchanged();
    QVERIFY(!s);
    QCOMPARE(s.kind(), ErrorKind::Io);
    QVERIFY(!dump->layer(1));
}

// The seeds of fuzz_qkdump (index, NUL, layer-000.safetensors) open, so that the fuzzer starts
// from inputs that reach every check.
void TestQkDump::fuzzSeedsAreValidDumps()
{
    const QDir seeds(test::sourcePath("tests/fuzz/corpus/qkdump"));
    QCOMPARE(seeds.entryList(QDir::Files).size(), 4);
    for (const QString &name : seeds.entryList(QDir::Files)) {
        const QByteArray bytes = test::readAll(seeds.filePath(name));
        const qsizetype nul = bytes.indexOf('\0');
        QVERIFY(nul > 0);
        QTemporaryDir tmp;
        test::writeFile(tmp.filePath("attnscope-qk.json"), bytes.left(nul));
        test::writeFile(tmp.filePath("layer-000.safetensors"), bytes.mid(nul + 1));
        auto dump = QkDump::open(tmp.path().toStdString());
        QVERIFY2(dump, qPrintable(name + ": " + QString::fromStdString(dump ? "" : dump.message())));
        QVERIFY(dump->layer(dump->layers() - 1));
    }
}

QTEST_GUILESS_MAIN(TestQkDump)
#include "tst_qkdump.moc"
