// Batches and separate value inputs (design.md, "A batch" and `value`): the project file reads
// and writes them (inline and as .npy references), refuses malformed ones naming the field, and
// every sequence computes like a problem built by hand; the tutorials' own PyTorch classes
// (tests/fixtures/tutorial, made by make_tutorial_fixtures.py) are reproduced.

#include "../common/TestUtil.h"

#include "core/attention/CpuBackend.h"
#include "core/attention/ReferenceAttention.h"
#include "core/formats/BatchedProject.h"
#include "core/formats/Npy.h"
#include "core/formats/ProjectFile.h"
#include "core/formats/TraceExport.h"

#include <QDir>
#include <QFile>
#include <QObject>
#include <QTemporaryDir>
#include <QTest>

using namespace attnscope;
using Json = nlohmann::ordered_json;

// QCOMPARE cannot take nlohmann::json (its overloads for Qt types do not resolve).
#define JSON_EQ(a, b) QVERIFY2((a) == (b), ((a).dump() + " != " + Json(b).dump()).c_str())

namespace {

// Cross-attention, 2 heads of 2, with a value input of width 3 (d_q 2, d_kv 4, 3 keys).
Json crossWithValue()
{
    return Json::parse(R"({
      "format": "attnscope", "version": 1, "mode": "cross", "heads": 2, "headDimQK": 2, "headDimV": 2,
      "query": {"tokens": ["a", "b"], "x": [[1, 0], [0.5, -1]]},
      "key": {"tokens": ["x", "y", "z"], "x": [[1, 0, 0, 1], [0, 1, 1, 0], [1, 1, 0, 0]]},
      "value": {"note": "kept", "x": [[3, 0, 1], [0, 2, 0], [1, 1, -1]]},
      "weights": {"q": [[1, 0, 0.5, 1], [0, 1, 1, -1]],
                  "k": [[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0], [0, 0, 1, 1]],
                  "v": [[1, 0, 0, 1], [0, 1, 1, 0], [1, 1, 0, 2]], "o": null}
    })");
}

// The same project as a batch of two: the second sequence differs in every input, has its own
// labels and pads its last key.
Json batchedCross()
{
    Json root = crossWithValue();
    Json second = crossWithValue();
    second["query"]["x"] = Json::parse("[[0, 1], [2, 1]]");
    second["key"]["x"] = Json::parse("[[0, 0, 1, 1], [1, 0, 1, 0], [2, 0, 0, 1]]");
    second["value"]["x"] = Json::parse("[[1, 1, 1], [0, -2, 0], [4, 0, 1]]");
    for (const char *side : {"query", "key", "value"})
        root[side]["x"] = Json::array({root[side]["x"], second[side]["x"]});
    root["query"]["tokens"] = Json::parse(R"([["a", "b"], ["c", "d"]])");
    root["mask"] = Json::parse(R"({"keyPadding": [[1, 1, 1], [1, 1, 0]]})");
    return root;
}

// Sequence b of batchedCross() built by hand from its JSON, without BatchedProject.
AttentionProblem handBuiltSequence(const Project &project, int b)
{
    const Json root = batchedCross();
    auto matrix = [](const Json &rows) {
        MatrixF m(Eigen::Index(rows.size()), Eigen::Index(rows[0].size()));
        for (size_t r = 0; r < rows.size(); ++r)
            for (size_t c = 0; c < rows[r].size(); ++c)
                m(Eigen::Index(r), Eigen::Index(c)) = rows[r][c].get<float>();
        return m;
    };
    AttentionProblem p;
    p.spec = project.problem.spec;
    p.weights = project.problem.weights;
    p.xq = matrix(root["query"]["x"][size_t(b)]);
    p.xkv = matrix(root["key"]["x"][size_t(b)]);
    p.xv = matrix(root["value"]["x"][size_t(b)]);
    for (const auto &flag : root["mask"]["keyPadding"][size_t(b)])
        p.mask.keyPadding.push_back(flag.get<int>() == 1);
    return p;
}

Result<Project> parse(const Json &root)
{
    return parseProject(root.dump());
}

} // namespace

class TestBatch : public QObject
{
    Q_OBJECT

private slots:
    void valueInputFeedsTheValues();
    void valueInputRoundTrips();
    void malformed_data();
    void malformed();
    void batchRoundTripsAndKeepsUnknownFields();
    void everySequenceComputesLikeAHandBuiltProblem();
    void modernAttentionAppliesToEverySequence();
    void batchedNpyReferencesAreKeptOnSave();
    void showingAnotherSequenceKeepsEdits();
    void tutorialFixtures_data();
    void tutorialFixtures();
};

void TestBatch::valueInputFeedsTheValues()
{
    auto project = parse(crossWithValue());
    QVERIFY2(project.ok(), project.ok() ? "" : project.message().c_str());
    const AttentionProblem &p = project->problem;
    QVERIFY(p.xv.has_value());
    QCOMPARE(p.dvIn(), Eigen::Index(3));
    auto trace = CpuBackend().compute(p);
    QVERIFY(trace.ok());
    // V = Xv·Wv, computed here from the numbers of the file.
    const MatrixF v = *p.xv * p.weights.v;
    for (int h = 0; h < 2; ++h) {
        const std::string diff =
            test::compareMatrix("V", trace->v[size_t(h)], v.middleCols(h * 2, 2), test::Tolerance::values());
        QVERIFY2(diff.empty(), diff.c_str());
    }
    auto ref = referenceAttention(p);
    QVERIFY(ref.ok());
    const std::string diff = test::compareTrace(*trace, *ref, true);
    QVERIFY2(diff.empty(), diff.c_str());
}

void TestBatch::valueInputRoundTrips()
{
    auto project = parse(crossWithValue());
    QVERIFY(project.ok());
    const std::string text = serializeProject(*project);
    const Json saved = Json::parse(text);
    JSON_EQ(saved["value"]["note"], Json("kept"));
    QVERIFY(!saved["value"].contains("tokens"));
    auto again = parseProject(text);
    QVERIFY2(again.ok(), again.ok() ? "" : again.message().c_str());
    QVERIFY(again->problem.xv.has_value());
    QVERIFY(*again->problem.xv == *project->problem.xv);
    QCOMPARE(serializeProject(*again), text);
}

void TestBatch::malformed_data()
{
    QTest::addColumn<QString>(
        "patch"); // a JSON merge patch onto batchedCross(), or "single:" + one onto crossWithValue()
    QTest::addColumn<QString>("message");
    QTest::newRow("value in self-attention")
        << R"(single:{"mode": "self", "key": null})"
        << "value: a separate value input needs \"mode\": \"cross\" (self-attention takes its values from query.x)";
    QTest::newRow("value.x rows") << R"(single:{"value": {"x": [[1, 2, 3], [4, 5, 6]]}})"
                                  << "value.x: expected 3 rows (one per key token), found 2";
    QTest::newRow("weights.v for the value width")
        << R"(single:{"value": {"x": [[1, 2], [3, 4], [5, 6]]}})"
        << "weights.v: expected 2 x 4 (d_v_in x heads*headDimV), found 3 x 4";
    QTest::newRow("value without x") << R"(single:{"value": {"x": null, "y": 1}})"
                                     << "value.x: missing (expected a matrix with one row per token)";
    QTest::newRow("batched key for a 2-D query")
        << R"(single:{"key": {"x": [[[1, 0, 0, 1], [0, 1, 1, 0], [1, 1, 0, 0]]]}})"
        << "key.x: expected a 2-D matrix (Tk x d_kv) like query.x, found 1 x 3 x 4";
    QTest::newRow("2-D key for a batch") << R"({"key": {"x": [[1, 0, 0, 1], [0, 1, 1, 0], [1, 1, 0, 0]]}})"
                                         << "key.x: expected 2 x Tk x d_kv (one matrix per sequence of query.x), "
                                            "found 3 x 4";
    QTest::newRow("value with another batch size")
        << R"({"value": {"x": [[[1, 1, 1], [0, 2, 0], [4, 0, 1]]]}})"
        << "value.x: expected 2 x Tk x d_v_in (one matrix per sequence of query.x), found 1 x 3 x 3";
    QTest::newRow("ragged batch") << R"({"query": {"x": [[[1, 0], [0.5, -1]], [[0, 1]]]}})"
                                  << "query.x[1]: expected 2 x 2 like query.x[0], found 1 x 2";
    QTest::newRow("token lists") << R"({"query": {"tokens": [["a", "b"]]}})"
                                 << "query.tokens: expected 2 lists of labels (one per sequence), found 1";
    QTest::newRow("tokens of one sequence") << R"({"query": {"tokens": [["a", "b"], ["c"]]}})"
                                            << "query.tokens[1]: expected 2 labels (one per row of x), found 1";
    QTest::newRow("shared tokens") << R"({"query": {"tokens": ["a"]}})"
                                   << "query.tokens: expected 2 labels (one per row of x), found 1";
    QTest::newRow("padding rows") << R"({"mask": {"keyPadding": [[1, 1, 1], [1, 1, 0], [1, 0, 0]]}})"
                                  << "mask.keyPadding: expected 2 rows (one per sequence), found 3";
    QTest::newRow("padding row length") << R"({"mask": {"keyPadding": [[1, 1, 1], [1, 0]]}})"
                                        << "sequence 1 (counting from 0) of 2: mask.keyPadding: expected 3 values "
                                           "(one per key token), found 2";
    QTest::newRow("padding row value") << R"({"mask": {"keyPadding": [[1, 1, 1], [1, 2, 0]]}})"
                                       << "mask.keyPadding[1][1]: expected true or false, found the number 2";
    QTest::newRow("padding rows without a batch")
        << R"(single:{"mask": {"keyPadding": [[1, 1, 1]]}})"
        << "mask.keyPadding: expected one true/false per key token, found an array of rows (one row per sequence "
           "needs a batched query.x)";
}

void TestBatch::malformed()
{
    QFETCH(QString, patch);
    QFETCH(QString, message);
    const bool single = patch.startsWith("single:");
    Json root = single ? crossWithValue() : batchedCross();
    root.merge_patch(Json::parse(patch.mid(single ? 7 : 0).toStdString()));
    auto project = parse(root);
    QVERIFY(!project.ok());
    QCOMPARE(QString::fromStdString(project.message()), message);
}

void TestBatch::batchRoundTripsAndKeepsUnknownFields()
{
    Json root = batchedCross();
    root["query"]["comment"] = "kept";
    auto project = parse(root);
    QVERIFY2(project.ok(), project.ok() ? "" : project.message().c_str());
    const BatchedProject batch(*project);
    QVERIFY(batch.isBatched());
    QCOMPARE(batch.sequenceCount(), 2);
    QCOMPARE(batch.sequenceInputs(1).queryTokens, (std::vector<std::string>{"c", "d"}));
    QCOMPARE(batch.sequenceInputs(1).keyTokens, (std::vector<std::string>{"x", "y", "z"})); // shared list
    QCOMPARE(project->problem.mask.keyPadding, (std::vector<bool>{true, true, true}));      // sequence 0

    const std::string text = serializeProject(*project);
    const Json saved = Json::parse(text);
    JSON_EQ(saved["query"]["comment"], Json("kept"));
    JSON_EQ(saved["query"]["tokens"], root["query"]["tokens"]);
    JSON_EQ(saved["key"]["tokens"], root["key"]["tokens"]);
    JSON_EQ(saved["mask"]["keyPadding"], Json::parse("[[true, true, true], [true, true, false]]"));
    for (const char *side : {"query", "key", "value"})
        JSON_EQ(saved[side]["x"], root[side]["x"]);
    auto again = parseProject(text);
    QVERIFY2(again.ok(), again.ok() ? "" : again.message().c_str());
    QCOMPARE(serializeProject(*again), text);

    // A 2-D project keeps its 2-D shapes.
    auto single = parse(crossWithValue());
    QVERIFY(single.ok());
    QVERIFY(!BatchedProject(*single).isBatched());
    QCOMPARE(BatchedProject(*single).sequenceCount(), 1);
    QVERIFY(Json::parse(serializeProject(*single))["query"]["x"][0][0].is_number());
}

void TestBatch::everySequenceComputesLikeAHandBuiltProblem()
{
    auto project = parse(batchedCross());
    QVERIFY(project.ok());
    CpuBackend cpu;
    auto traces = computeSequences(cpu, *project);
    QVERIFY2(traces.ok(), traces.ok() ? "" : traces.message().c_str());
    QCOMPARE(traces->size(), size_t(2));
    for (int b = 0; b < 2; ++b) {
        auto ref = referenceAttention(handBuiltSequence(*project, b));
        QVERIFY2(ref.ok(), ref.ok() ? "" : ref.message().c_str());
        const std::string diff = test::compareTrace((*traces)[size_t(b)], *ref, true);
        QVERIFY2(diff.empty(), (std::to_string(b) + ": " + diff).c_str());
    }
    // The padded key of sequence 1 gets no weight; sequence 0 has none padded.
    QCOMPARE((*traces)[1].weights[0](0, 2), 0.0f);
    QVERIFY((*traces)[0].weights[0](0, 2) > 0.0f);

    // The files compute writes: a leading B axis on every tensor.
    QTemporaryDir dir;
    QVERIFY(writeBatchTraceNpy(*traces, (dir.path() + "/out").toStdString()).ok());
    const std::pair<const char *, std::vector<std::int64_t>> shapes[] = {
        {"q", {2, 2, 2, 2}},       {"k", {2, 2, 3, 2}},    {"v", {2, 2, 3, 2}},  {"scores", {2, 2, 2, 3}},
        {"weights", {2, 2, 2, 3}}, {"context", {2, 2, 4}}, {"output", {2, 2, 4}}};
    for (const auto &[name, shape] : shapes) {
        auto npy = readNpyFile((dir.path() + "/out/" + name + ".npy").toStdString());
        QVERIFY2(npy.ok(), name);
        QCOMPARE(npy->shape, shape);
    }
    auto weights = readNpyFile((dir.path() + "/out/weights.npy").toStdString());
    QCOMPARE(weights->data[size_t(2 * 2 * 3 + 2)], 0.0); // [1][0][0][2]: sequence 1's padded key
}

// design.md's modern attention fields belong to the project: every sequence of a batch is
// computed with them (one key/value head, RoPE, a window, a soft-cap and sinks), and k.npy holds
// one key/value head per sequence.
void TestBatch::modernAttentionAppliesToEverySequence()
{
    Json root = batchedCross();
    root["kvHeads"] = 1;
    root["weights"]["k"] = Json::parse("[[1, 0], [0, 1], [1, 1], [0, -1]]");
    root["weights"]["v"] = Json::parse("[[1, 0], [0, 1], [1, 1]]");
    root["rope"] = Json::parse(R"({"base": 50, "queryPositions": [2, 3], "keyPositions": [0, 1, 2]})");
    root["mask"]["window"] = 2;
    root["mask"]["causal"] = true;
    root["softcap"] = 1.5;
    root["sinks"] = Json::parse("[0.25, -0.5]");
    auto project = parse(root);
    QVERIFY2(project.ok(), project.ok() ? "" : project.message().c_str());
    CpuBackend cpu;
    auto traces = computeSequences(cpu, *project);
    QVERIFY2(traces.ok(), traces.ok() ? "" : traces.message().c_str());
    const BatchedProject batch(*project);
    for (int b = 0; b < 2; ++b) {
        AttentionProblem hand = handBuiltSequence(*project, b);
        hand.spec = project->problem.spec;
        hand.weights = project->problem.weights;
        hand.mask.window = 2;
        hand.mask.causal = true;
        const AttentionProblem shown = batch.problemForSequence(b);
        QVERIFY(shown.spec.rope && shown.spec.softcap && shown.weights.sinks && shown.mask.window == 2);
        auto ref = referenceAttention(hand);
        QVERIFY2(ref.ok(), ref.ok() ? "" : ref.message().c_str());
        const std::string diff = test::compareTrace((*traces)[size_t(b)], *ref, true);
        QVERIFY2(diff.empty(), (std::to_string(b) + ": " + diff).c_str());
    }
    QTemporaryDir dir;
    QVERIFY(writeBatchTraceNpy(*traces, (dir.path() + "/out").toStdString()).ok());
    auto k = readNpyFile((dir.path() + "/out/k.npy").toStdString());
    QVERIFY(k.ok());
    QCOMPARE(k->shape, (std::vector<std::int64_t>{2, 1, 3, 2}));
}

void TestBatch::batchedNpyReferencesAreKeptOnSave()
{
    QTemporaryDir dir;
    Json root = batchedCross();
    std::vector<float> x;
    for (const auto &m : root["query"]["x"])
        for (const auto &row : m)
            for (const auto &v : row)
                x.push_back(v.get<float>());
    QFile npy(dir.path() + "/x.npy");
    QVERIFY(npy.open(QIODevice::WriteOnly));
    const std::string bytes = npyBytes({2, 2, 2}, x.data());
    npy.write(bytes.data(), qint64(bytes.size()));
    npy.close();
    root["query"]["x"] = Json{{"npy", "x.npy"}};
    const QString path = dir.path() + "/p.attnscope.json";
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QByteArray::fromStdString(root.dump()));
    file.close();

    auto project = readProjectFile(path.toStdString());
    QVERIFY2(project.ok(), project.ok() ? "" : project.message().c_str());
    QCOMPARE(BatchedProject(*project).sequenceCount(), 2);
    QCOMPARE(BatchedProject(*project).sequenceInputs(1).xq(1, 0), 2.0f);
    JSON_EQ(Json::parse(serializeProject(*project))["query"]["x"], Json::parse(R"({"npy": "x.npy"})"));
    // An edit of sequence 0 writes the batch inline again, as B matrices.
    project->problem.xq(0, 0) = 7;
    const Json edited = Json::parse(serializeProject(*project))["query"]["x"];
    JSON_EQ(edited, Json::parse("[[[7, 0], [0.5, -1]], [[0, 1], [2, 1]]]"));
}

void TestBatch::showingAnotherSequenceKeepsEdits()
{
    auto project = parse(batchedCross());
    QVERIFY(project.ok());
    const std::string original = serializeProject(*project);
    project->problem.xq(0, 0) = 9; // an edit of sequence 0
    Project second = withSequenceShown(*project, 1);
    QCOMPARE(second.batch->shown, 1);
    QCOMPARE(second.queryTokens, (std::vector<std::string>{"c", "d"}));
    QCOMPARE(second.problem.xq(1, 0), 2.0f);
    QCOMPARE(second.problem.mask.keyPadding, (std::vector<bool>{true, true, false}));
    const BatchedProject batch(second);
    QCOMPARE(batch.problemForSequence(0).xq(0, 0), 9.0f); // the edit went back into sequence 0
    // The file is the same whichever sequence is shown.
    QCOMPARE(serializeProject(second), serializeProject(*project));
    QVERIFY(serializeProject(second) != original);
    const Project back = withSequenceShown(second, 0);
    QCOMPARE(back.problem.xq(0, 0), 9.0f);
    QCOMPARE(back.queryTokens, (std::vector<std::string>{"a", "b"}));
    QCOMPARE(serializeProject(back), serializeProject(*project));
    // A token added to the shown sequence only: the batch no longer agrees, and only the
    // shown sequence can be written (as a 2-D project).
    second.problem.xq.conservativeResize(3, 2);
    second.problem.xq.row(2).setZero();
    second.queryTokens.push_back("e");
    QVERIFY(!BatchedProject(second).sequencesAgree());
    auto reread = parseProject(serializeProject(second));
    QVERIFY2(reread.ok(), reread.ok() ? "" : reread.message().c_str());
    QVERIFY(!reread->batch);
    QCOMPARE(reread->queryTokens, (std::vector<std::string>{"c", "d", "e"}));
}

void TestBatch::tutorialFixtures_data()
{
    QTest::addColumn<QString>("folder");
    const QDir dir(test::sourcePath("tests/fixtures/tutorial"));
    const auto cases = dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    QVERIFY2(cases.size() >= 2, "the tutorial fixtures are missing");
    for (const QString &c : cases)
        QTest::newRow(qPrintable(c)) << dir.filePath(c);
}

void TestBatch::tutorialFixtures()
{
    QFETCH(QString, folder);
    auto project = readProjectFile((folder + "/project.attnscope.json").toStdString());
    QVERIFY2(project.ok(), project.ok() ? "" : project.message().c_str());
    QVERIFY(project->batch.has_value());
    CpuBackend cpu;
    auto traces = computeSequences(cpu, *project);
    QVERIFY2(traces.ok(), traces.ok() ? "" : traces.message().c_str());
    QTemporaryDir dir;
    QVERIFY(writeBatchTraceNpy(*traces, (dir.path() + "/out").toStdString()).ok());
    for (const char *name : {"weights", "output"}) {
        auto expected = readNpyFile((folder + "/" + name + ".npy").toStdString());
        QVERIFY2(expected.ok(), name);
        auto got = readNpyFile((dir.path() + "/out/" + name + ".npy").toStdString());
        QVERIFY2(got.ok(), name);
        const std::string diff = test::compareNpy(name, *got, *expected);
        QVERIFY2(diff.empty(), diff.c_str());
    }
}

QTEST_GUILESS_MAIN(TestBatch)
#include "tst_batch.moc"
