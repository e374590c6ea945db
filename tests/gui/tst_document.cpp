// The document, its commands and undo, driven through the document's verbs with no widget.

#include "app/gui/document/Document.h"
#include "core/attention/Mask.h"
#include "core/attention/Validation.h"
#include "core/formats/Npy.h"

#include "../common/TestUtil.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include <limits>

using namespace attnscope;

namespace {

Project example(const QString &name)
{
    auto p = Document::readProject(test::sourcePath(QStringLiteral("resources/examples/") + name));
    if (!p)
        qFatal("%s", p.message().c_str());
    return *p;
}

bool valid(const Project &p)
{
    auto s = validateProblem(p.problem);
    if (!s)
        qWarning("%s", s.message().c_str());
    return s.ok() && p.queryTokens.size() == size_t(p.problem.tq()) &&
           (p.problem.spec.mode == AttentionMode::Self || p.keyTokens.size() == size_t(p.problem.tk()));
}

bool same(const Project &a, const Project &b)
{
    return serializeProject(a) == serializeProject(b);
}

// multihead-causal grown to four query heads (its own numbers), then grouped to `kvHeads`
// key/value heads: W_K, W_V, b_K and b_V keep their first kvHeads blocks.
Project groupedProject(int kvHeads)
{
    Document doc(example(QStringLiteral("multihead-causal.attnscope.json")));
    doc.setHeads(4);
    Project p = doc.project();
    AttentionProblem &pr = p.problem;
    const int dK = pr.spec.headDimQK, dV = pr.spec.headDimV;
    pr.spec.kvHeads = kvHeads;
    pr.weights.k = MatrixF(pr.weights.k.leftCols(kvHeads * dK));
    pr.weights.v = MatrixF(pr.weights.v.leftCols(kvHeads * dV));
    pr.weights.kBias = VectorF(pr.weights.kBias->head(kvHeads * dK));
    pr.weights.vBias = VectorF(pr.weights.vBias->head(kvHeads * dV));
    return p;
}

} // namespace

class TestDocument : public QObject
{
    Q_OBJECT

private slots:
    void npyReferencesOpenAndSaveKeepsThem();
    void saveWritesWhatWasShownWhenTheNpyChanged_data();
    void saveWritesWhatWasShownWhenTheNpyChanged();
    void editCellUndoRedo();
    void cellDragMergesIntoOneStep();
    void tokenLabel();
    void heads_data();
    void heads();
    void headDimsKeepValues();
    void headsKeepKeyValueGroupsValid();
    void headDimsRegroupKeyValueBlocks();
    void ropePositionsFollowTokens();
    void inputDims();
    void insertRemoveTokenSelf();
    void insertRemoveTokenCross();
    void removingLastTokenIsRefused();
    void modeSwitchKeepsProblemValid();
    void maskStrokeIsOneUndoStep();
    void maskPresets();
    void noneClearsTheWindow();
    void keyValueHeadsRegroupAndUndo();
    void keyValueHeadsRefusedUnlessADivisor();
    void ropeOnOffBaseAndPositions();
    void ropePositionsRefused_data();
    void ropePositionsRefused();
    void softcapOnOffAndValue();
    void sinksAddEditRemove();
    void maskWindowField();
    void reinitialiseUsesSeed();
    void scaleAndFill();
    void optionalMatrices();
    void saveRoundTripKeepsUnknownFields();
    void malformedFileNamesTheField();
    void everyCommandHasALabel();
};

void TestDocument::editCellUndoRedo()
{
    Document doc(example(QStringLiteral("self-attention-tutorial.attnscope.json")));
    QSignalSpy changed(&doc, &Document::changed);
    QSignalSpy modified(&doc, &Document::modifiedChanged);
    const float before = matrixValue(doc.project(), MatrixId::Wq, 1, 2);
    QVERIFY(!doc.isModified());
    QVERIFY(doc.setValue(MatrixId::Wq, 1, 2, 4.5f));
    QCOMPARE(doc.problem().weights.q(1, 2), 4.5f);
    QVERIFY(doc.isModified());
    QCOMPARE(modified.count(), 1);
    QCOMPARE(changed.count(), 1);
    QVERIFY(changed.at(0).at(0).value<Document::Changes>().testFlag(Document::ValuesChanged));
    QVERIFY(!doc.setValue(MatrixId::Wq, 1, 2, 4.5f)); // no change, no command
    QVERIFY(!doc.setValue(MatrixId::Wq, 9, 2, 1.0f)); // out of range
    QCOMPARE(doc.undoStack()->count(), 1);
    doc.undoStack()->undo();
    QCOMPARE(doc.problem().weights.q(1, 2), before);
    QVERIFY(!doc.isModified());
    doc.undoStack()->redo();
    QCOMPARE(doc.problem().weights.q(1, 2), 4.5f);
}

void TestDocument::cellDragMergesIntoOneStep()
{
    Document doc(example(QStringLiteral("self-attention-tutorial.attnscope.json")));
    const float before = doc.problem().xq(0, 0);
    QVERIFY(doc.setValue(MatrixId::Xq, 0, 0, 2.0f, 7));
    QVERIFY(doc.setValue(MatrixId::Xq, 0, 0, 3.0f, 7));
    QVERIFY(doc.setValue(MatrixId::Xq, 0, 0, 4.0f, 7));
    QCOMPARE(doc.undoStack()->count(), 1);
    QVERIFY(doc.setValue(MatrixId::Xq, 0, 0, 5.0f)); // a plain edit does not merge
    QCOMPARE(doc.undoStack()->count(), 2);
    doc.undoStack()->undo();
    doc.undoStack()->undo();
    QCOMPARE(doc.problem().xq(0, 0), before);
}

void TestDocument::tokenLabel()
{
    Document doc(example(QStringLiteral("cross-attention-translation.attnscope.json")));
    QVERIFY(doc.setTokenLabel(TokenSide::Key, 1, QStringLiteral("are")));
    QCOMPARE(doc.project().keyTokens[1], std::string("are"));
    QVERIFY(doc.setTokenLabel(TokenSide::Query, 0, QStringLiteral("<bos>")));
    QCOMPARE(doc.project().queryTokens[0], std::string("<bos>"));
    doc.undoStack()->undo();
    doc.undoStack()->undo();
    QCOMPARE(doc.project().keyTokens[1], std::string("am"));
    QCOMPARE(doc.project().queryTokens[0], std::string("<s>"));
}

void TestDocument::heads_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("heads");
    QTest::newRow("tutorial 1->3") << QStringLiteral("self-attention-tutorial.attnscope.json") << 3;
    QTest::newRow("multihead shrink") << QStringLiteral("multihead-causal.attnscope.json") << 1;
    QTest::newRow("multihead grow") << QStringLiteral("multihead-causal.attnscope.json") << 5;
    QTest::newRow("cross grow") << QStringLiteral("cross-attention-translation.attnscope.json") << 4;
    QTest::newRow("padding grow") << QStringLiteral("padding-mask.attnscope.json") << 3;
}

void TestDocument::heads()
{
    QFETCH(QString, file);
    QFETCH(int, heads);
    Document doc(example(file));
    const Project before = doc.project();
    const int oldHeads = before.problem.spec.heads;
    const int dK = before.problem.spec.headDimQK, dV = before.problem.spec.headDimV;
    QSignalSpy changed(&doc, &Document::changed);
    QVERIFY(doc.setHeads(heads));
    QVERIFY(changed.last().at(0).value<Document::Changes>().testFlag(Document::ShapeChanged));
    const AttentionProblem &p = doc.problem();
    QCOMPARE(p.spec.heads, heads);
    QVERIFY(valid(doc.project()));
    const int kept = std::min(oldHeads, heads);
    // Kept heads keep their columns of W_Q and W_V (and rows of W_O).
    QVERIFY(p.weights.q.leftCols(kept * dK) == before.problem.weights.q.leftCols(kept * dK));
    QVERIFY(p.weights.v.leftCols(kept * dV) == before.problem.weights.v.leftCols(kept * dV));
    if (p.weights.o)
        QVERIFY(p.weights.o->topRows(kept * dV) == before.problem.weights.o->topRows(kept * dV));
    doc.undoStack()->undo();
    QVERIFY(same(doc.project(), before));
    doc.undoStack()->redo();
    QCOMPARE(doc.problem().spec.heads, heads);
}

void TestDocument::headDimsKeepValues()
{
    Document doc(example(QStringLiteral("multihead-causal.attnscope.json")));
    const Project before = doc.project();
    const int H = before.problem.spec.heads, dK = before.problem.spec.headDimQK;
    QVERIFY(doc.setHeadDimQK(dK + 2));
    QVERIFY(valid(doc.project()));
    for (int h = 0; h < H; ++h)
        QVERIFY(doc.problem().weights.k.middleCols(h * (dK + 2), dK) ==
                before.problem.weights.k.middleCols(h * dK, dK));
    QVERIFY(doc.setHeadDimQK(1));
    QVERIFY(valid(doc.project()));
    for (int h = 0; h < H; ++h)
        QCOMPARE(doc.problem().weights.q(0, h), before.problem.weights.q(0, h * dK));
    QVERIFY(doc.setHeadDimV(before.problem.spec.headDimV + 1));
    QVERIFY(valid(doc.project()));
    doc.undoStack()->setIndex(0);
    QVERIFY(same(doc.project(), before));
}

void TestDocument::headsKeepKeyValueGroupsValid()
{
    // Issue 23: setHeads regrouped K and V by the query heads, so a grouped project came out
    // with H·dK key columns, and a head count G no longer divides was kept.
    Project grouped = groupedProject(2);
    grouped.problem.weights.sinks = VectorF{{0.5f, -1.0f, 0.25f, 2.0f}};
    QVERIFY(valid(grouped));
    Document doc(grouped);
    const AttentionWeights &old = grouped.problem.weights;
    QVERIFY(doc.setHeads(6)); // 2 still divides 6: keys and values untouched
    QCOMPARE(doc.problem().spec.keyValueHeads(), 2);
    QVERIFY(doc.problem().weights.k == old.k);
    QVERIFY(doc.problem().weights.v == old.v);
    QVERIFY(*doc.problem().weights.kBias == *old.kBias);
    // Sinks follow the heads: kept where both exist, 0 for the new heads.
    QCOMPARE(doc.problem().weights.sinks->size(), 6);
    QVERIFY(doc.problem().weights.sinks->head(4) == *old.sinks);
    QCOMPARE((*doc.problem().weights.sinks)(5), 0.0f);
    QVERIFY(valid(doc.project()));
    QVERIFY(doc.setHeads(3)); // gcd(3, 2) = 1: multi-query, key/value head 0 kept
    QCOMPARE(doc.problem().spec.keyValueHeads(), 1);
    const int dK = grouped.problem.spec.headDimQK, dV = grouped.problem.spec.headDimV;
    QVERIFY(doc.problem().weights.k == old.k.leftCols(dK));
    QVERIFY(doc.problem().weights.v == old.v.leftCols(dV));
    QVERIFY(valid(doc.project()));
    QVERIFY(doc.setHeads(2)); // multi-query stays multi-query
    QCOMPARE(doc.problem().spec.keyValueHeads(), 1);
    QVERIFY(valid(doc.project()));
    doc.undoStack()->setIndex(0);
    QVERIFY(same(doc.project(), grouped));
}

void TestDocument::headDimsRegroupKeyValueBlocks()
{
    const Project grouped = groupedProject(2);
    Document doc(grouped);
    const AttentionWeights &old = grouped.problem.weights;
    const int dK = grouped.problem.spec.headDimQK, dV = grouped.problem.spec.headDimV;
    QVERIFY(doc.setHeadDimQK(dK + 2));
    QCOMPARE(doc.problem().weights.k.cols(), 2 * (dK + 2));
    QCOMPARE(doc.problem().weights.q.cols(), 4 * (dK + 2));
    for (int g = 0; g < 2; ++g) {
        QVERIFY(doc.problem().weights.k.middleCols(g * (dK + 2), dK) == old.k.middleCols(g * dK, dK));
        QVERIFY(doc.problem().weights.kBias->segment(g * (dK + 2), dK) == old.kBias->segment(g * dK, dK));
    }
    QVERIFY(valid(doc.project()));
    QVERIFY(doc.setHeadDimV(dV + 1));
    QCOMPARE(doc.problem().weights.v.cols(), 2 * (dV + 1));
    QCOMPARE(doc.problem().weights.o->rows(), 4 * (dV + 1));
    for (int g = 0; g < 2; ++g)
        QVERIFY(doc.problem().weights.v.middleCols(g * (dV + 1), dV) == old.v.middleCols(g * dV, dV));
    QVERIFY(valid(doc.project()));
    doc.undoStack()->setIndex(0);
    QVERIFY(same(doc.project(), grouped));
}

void TestDocument::ropePositionsFollowTokens()
{
    // Given RoPE positions are one per row: inserting a token inserts a position (one past the
    // row before it), removing one removes its entry.
    Project self = example(QStringLiteral("multihead-causal.attnscope.json"));
    self.problem.spec.rope = RopeSpec{};
    self.problem.spec.rope->queryPositions = {0, 1, 5, 6, 7, 8};
    self.problem.spec.rope->queryPositions.resize(size_t(self.problem.tq()));
    QVERIFY(valid(self));
    Document doc(self);
    const auto before = self.problem.spec.rope->queryPositions;
    QVERIFY(doc.insertToken(TokenSide::Query, 2, QStringLiteral("new")));
    auto expected = before;
    expected.insert(expected.begin() + 2, before[1] + 1);
    QCOMPARE(doc.problem().spec.rope->queryPositions, expected);
    QVERIFY(valid(doc.project()));
    QVERIFY(doc.insertToken(TokenSide::Query, 0, QStringLiteral("first")));
    QCOMPARE(doc.problem().spec.rope->queryPositions.front(), std::int64_t(0));
    QVERIFY(valid(doc.project()));
    QVERIFY(doc.removeToken(TokenSide::Query, 0));
    QVERIFY(doc.removeToken(TokenSide::Query, 2));
    QCOMPARE(doc.problem().spec.rope->queryPositions, before);
    QVERIFY(valid(doc.project()));

    Project cross = example(QStringLiteral("cross-attention-translation.attnscope.json"));
    cross.problem.spec.rope = RopeSpec{}; // (its odd dK aside: only the positions' count is checked)
    cross.problem.spec.rope->keyPositions.assign(size_t(cross.problem.tk()), 3);
    Document crossDoc(cross);
    QVERIFY(crossDoc.insertToken(TokenSide::Key, 1, QStringLiteral("!")));
    QCOMPARE(crossDoc.problem().spec.rope->keyPositions.size(), size_t(cross.problem.tk() + 1));
    QVERIFY(crossDoc.problem().spec.rope->queryPositions.empty());
    QVERIFY(crossDoc.removeToken(TokenSide::Key, 0));
    QCOMPARE(crossDoc.problem().spec.rope->keyPositions.size(), size_t(cross.problem.tk()));
}

void TestDocument::inputDims()
{
    Document doc(example(QStringLiteral("cross-attention-translation.attnscope.json")));
    QVERIFY(doc.setInputDim(TokenSide::Key, 5));
    QCOMPARE(doc.problem().xkv.cols(), 5);
    QCOMPARE(doc.problem().weights.k.rows(), 5);
    QVERIFY(valid(doc.project()));
    QVERIFY(doc.setInputDim(TokenSide::Query, 9));
    QCOMPARE(doc.problem().weights.q.rows(), 9);
    QVERIFY(valid(doc.project()));
    Document self(example(QStringLiteral("self-attention-tutorial.attnscope.json")));
    QVERIFY(self.setInputDim(TokenSide::Query, 6));
    QCOMPARE(self.problem().weights.v.rows(), 6);
    QVERIFY(valid(self.project()));
}

void TestDocument::insertRemoveTokenSelf()
{
    Document doc(example(QStringLiteral("multihead-causal.attnscope.json")));
    QVERIFY(doc.setMaskCells({{0, 1}}, false)); // a custom mask that must grow too
    const Project before = doc.project();
    const auto tq = before.problem.tq();
    QVERIFY(doc.insertToken(TokenSide::Query, 1, QStringLiteral("new")));
    QCOMPARE(doc.problem().tq(), tq + 1);
    QCOMPARE(doc.project().queryTokens[1], std::string("new"));
    QCOMPARE(doc.problem().mask.allowed->rows(), tq + 1);
    QCOMPARE(doc.problem().mask.allowed->cols(), tq + 1);
    QVERIFY(doc.problem().xq.row(2) == before.problem.xq.row(1));
    QVERIFY(valid(doc.project()));
    QVERIFY(doc.removeToken(TokenSide::Query, 1));
    QVERIFY(same(doc.project(), before));
    QVERIFY(doc.removeToken(TokenSide::Query, 0));
    QCOMPARE(doc.problem().tq(), tq - 1);
    QVERIFY(valid(doc.project()));
    doc.undoStack()->undo();
    doc.undoStack()->undo();
    doc.undoStack()->undo();
    QVERIFY(same(doc.project(), before));
}

void TestDocument::insertRemoveTokenCross()
{
    Document doc(example(QStringLiteral("cross-attention-translation.attnscope.json")));
    const Project before = doc.project();
    QVERIFY(!before.problem.mask.keyPadding.empty());
    QVERIFY(doc.insertToken(TokenSide::Key, 4, QStringLiteral("!")));
    QCOMPARE(doc.problem().tk(), before.problem.tk() + 1);
    QCOMPARE(doc.problem().tq(), before.problem.tq());
    QCOMPARE(doc.problem().mask.keyPadding.size(), size_t(before.problem.tk() + 1));
    QVERIFY(doc.problem().mask.keyPadding[4]);
    QVERIFY(valid(doc.project()));
    QVERIFY(doc.insertToken(TokenSide::Query, 5, QStringLiteral("</s>")));
    QCOMPARE(doc.problem().tq(), before.problem.tq() + 1);
    QVERIFY(valid(doc.project()));
    QVERIFY(doc.removeToken(TokenSide::Key, 0));
    QVERIFY(valid(doc.project()));
    doc.undoStack()->setIndex(0);
    QVERIFY(same(doc.project(), before));
}

void TestDocument::removingLastTokenIsRefused()
{
    Document doc(example(QStringLiteral("self-attention-tutorial.attnscope.json")));
    QVERIFY(doc.removeToken(TokenSide::Query, 0));
    QVERIFY(doc.removeToken(TokenSide::Query, 0));
    QVERIFY(!doc.removeToken(TokenSide::Query, 0));
    QCOMPARE(doc.problem().tq(), 1);
    QCOMPARE(doc.undoStack()->count(), 2);
}

void TestDocument::modeSwitchKeepsProblemValid()
{
    Document doc(example(QStringLiteral("cross-attention-translation.attnscope.json")));
    const Project before = doc.project();
    QVERIFY(doc.setMode(AttentionMode::Self));
    QCOMPARE(doc.problem().spec.mode, AttentionMode::Self);
    QCOMPARE(doc.problem().tk(), doc.problem().tq());
    QVERIFY(valid(doc.project()));
    QVERIFY(doc.setMode(AttentionMode::Cross));
    QVERIFY(valid(doc.project()));
    QCOMPARE(doc.project().keyTokens, doc.project().queryTokens);
    doc.undoStack()->setIndex(0);
    QVERIFY(same(doc.project(), before));
}

void TestDocument::maskStrokeIsOneUndoStep()
{
    Document doc(example(QStringLiteral("self-attention-tutorial.attnscope.json")));
    QVERIFY(!doc.problem().mask.allowed);
    QVERIFY(doc.setMaskCells({{0, 1}}, false, 42));
    QVERIFY(doc.setMaskCells({{0, 2}}, false, 42));
    QVERIFY(!doc.setMaskCells({{0, 2}}, false, 42)); // already masked
    QCOMPARE(doc.undoStack()->count(), 1);
    const MaskMatrix m = effectiveMask(doc.problem());
    QCOMPARE(int(m(0, 0)), 1);
    QCOMPARE(int(m(0, 1)), 0);
    QCOMPARE(int(m(0, 2)), 0);
    QCOMPARE(int(m(1, 2)), 1);
    QVERIFY(doc.setMaskCells({{0, 0}}, false, 43));
    QCOMPARE(emptyMaskRows(effectiveMask(doc.problem()))[0], true);
    QCOMPARE(doc.undoStack()->count(), 2);
    doc.undoStack()->undo();
    doc.undoStack()->undo();
    QVERIFY(!doc.problem().mask.allowed);
}

void TestDocument::maskPresets()
{
    Document doc(example(QStringLiteral("cross-attention-translation.attnscope.json")));
    QVERIFY(doc.applyMaskPreset(MaskPreset::None));
    QVERIFY((effectiveMask(doc.problem()).array() == 1).all());
    QVERIFY(doc.applyMaskPreset(MaskPreset::PaddingFromTokens));
    const auto &pad = doc.problem().mask.keyPadding;
    QCOMPARE(pad, (std::vector<bool>{true, true, true, true, false, false}));
    QVERIFY(doc.applyMaskPreset(MaskPreset::Causal));
    MaskMatrix m = effectiveMask(doc.problem());
    QCOMPARE(int(m(0, 1)), 0);
    QCOMPARE(int(m(3, 3)), 1);
    QCOMPARE(int(m(4, 4)), 0); // padding AND causal
    QVERIFY(doc.applyMaskPreset(MaskPreset::None));
    // Issue 23: the sliding window is the structural field mask.window, causal as Mistral
    // has it (keys i - W < j <= i), no longer a band written into the custom matrix.
    QVERIFY(doc.applyMaskPreset(MaskPreset::SlidingWindow, 2));
    QCOMPARE(doc.problem().mask.window, std::int64_t(2));
    QVERIFY(doc.problem().mask.causal);
    QVERIFY(!doc.problem().mask.allowed);
    m = effectiveMask(doc.problem());
    QCOMPARE(int(m(2, 1)), 1);
    QCOMPARE(int(m(2, 2)), 1);
    QCOMPARE(int(m(2, 3)), 0);
    QCOMPARE(int(m(2, 0)), 0);
    QVERIFY(valid(doc.project()));
    QVERIFY(!doc.applyMaskPreset(MaskPreset::SlidingWindow, 2)); // nothing to change
}

void TestDocument::noneClearsTheWindow()
{
    Document doc(example(QStringLiteral("multihead-causal.attnscope.json")));
    QVERIFY(doc.applyMaskPreset(MaskPreset::SlidingWindow, 3));
    QCOMPARE(doc.problem().mask.window, std::int64_t(3));
    QVERIFY(doc.applyMaskPreset(MaskPreset::None));
    QCOMPARE(doc.problem().mask.window, std::int64_t(0));
    QVERIFY(!doc.problem().mask.causal);
    QVERIFY((effectiveMask(doc.problem()).array() == 1).all());
    doc.undoStack()->undo();
    QCOMPARE(doc.problem().mask.window, std::int64_t(3));
}

void TestDocument::reinitialiseUsesSeed()
{
    Document doc(example(QStringLiteral("self-attention-tutorial.attnscope.json")));
    const Project before = doc.project();
    doc.setInitOptions({InitKind::Gaussian, 1234, 0.5});
    QVERIFY(doc.reinitialise(MatrixId::Wk));
    // Issue 8: the stream is derived from the seed and the matrix (so W_K's is not W_Q's):
    // the same seed gives the same numbers, another seed others.
    const MatrixF k1234 = doc.problem().weights.k;
    QCOMPARE(k1234.rows(), 4);
    QCOMPARE(k1234.cols(), 3);
    Document again(example(QStringLiteral("self-attention-tutorial.attnscope.json")));
    again.setInitOptions({InitKind::Gaussian, 1234, 0.5});
    QVERIFY(again.reinitialise(MatrixId::Wk));
    QVERIFY(again.problem().weights.k == k1234);
    again.setInitOptions({InitKind::Gaussian, 1235, 0.5});
    QVERIFY(again.reinitialise(MatrixId::Wk));
    QVERIFY(again.problem().weights.k != k1234);
    doc.setInitOptions({InitKind::Zeros, 1, 1.0});
    QVERIFY(doc.reinitialise(MatrixId::Xq));
    QVERIFY(doc.problem().xq.isZero());
    QVERIFY(!doc.reinitialise(MatrixId::Wo)); // absent
    doc.undoStack()->setIndex(0);
    QVERIFY(same(doc.project(), before));
}

void TestDocument::scaleAndFill()
{
    Document doc(example(QStringLiteral("self-attention-tutorial.attnscope.json")));
    QVERIFY(doc.setScale(ScaleMode::InvSqrtDk, 1.0));
    QVERIFY(doc.setScale(ScaleMode::Custom, 0.5, 3));
    QVERIFY(doc.setScale(ScaleMode::Custom, 0.25, 3));
    QVERIFY(doc.setScale(ScaleMode::Custom, 0.2, 3));
    // Issue 8: the switch to custom is a step of its own (a mode switch never merges); the
    // value edits after it merge into one.
    QCOMPARE(doc.undoStack()->count(), 3);
    QVERIFY(doc.setScale(ScaleMode::Custom, 0.25, 3));
    QCOMPARE(doc.problem().spec.scale(), 0.25);
    QVERIFY(!doc.setScale(ScaleMode::Custom, 0.0));
    QVERIFY(doc.setMaskFill(MaskFill::NegLarge));
    QCOMPARE(doc.problem().spec.maskFill, MaskFill::NegLarge);
    doc.undoStack()->setIndex(0);
    QCOMPARE(doc.problem().spec.scaleMode, ScaleMode::None);
    QCOMPARE(doc.problem().spec.maskFill, MaskFill::NegInf);
}

void TestDocument::optionalMatrices()
{
    Document doc(example(QStringLiteral("self-attention-tutorial.attnscope.json")));
    QVERIFY(!doc.setMatrixPresent(MatrixId::BiasO, true)); // needs W_O
    QVERIFY(doc.setMatrixPresent(MatrixId::Wo, true));
    QVERIFY(doc.setMatrixPresent(MatrixId::BiasO, true));
    QVERIFY(doc.setMatrixPresent(MatrixId::BiasQ, true));
    QVERIFY(valid(doc.project()));
    QVERIFY(doc.setHeads(2)); // biases follow the head count
    QVERIFY(valid(doc.project()));
    QVERIFY(doc.setOutputDim(7));
    QVERIFY(valid(doc.project()));
    QVERIFY(doc.setMatrixPresent(MatrixId::Wo, false));
    QVERIFY(!doc.problem().weights.oBias);
    QVERIFY(valid(doc.project()));
}

void TestDocument::saveRoundTripKeepsUnknownFields()
{
    QTemporaryDir dir;
    Document doc(example(QStringLiteral("self-attention-tutorial.attnscope.json")));
    QVERIFY(doc.setValue(MatrixId::Wv, 0, 0, 0.125f));
    QVERIFY(doc.insertToken(TokenSide::Query, 3, QStringLiteral("fast")));
    QVERIFY(doc.isModified());
    const QString path = dir.filePath(QStringLiteral("saved.attnscope.json"));
    QSignalSpy pathSpy(&doc, &Document::filePathChanged);
    QVERIFY(doc.save(path).ok());
    QVERIFY(!doc.isModified());
    QCOMPARE(pathSpy.count(), 1);
    QCOMPARE(doc.displayName(), QStringLiteral("saved.attnscope.json"));
    auto reread = Document::readProject(path);
    QVERIFY2(reread.ok(), reread ? "" : reread.message().c_str());
    QVERIFY(same(*reread, doc.project()));
    QCOMPARE(reread->problem.weights.v(0, 0), 0.125f);
    QCOMPARE(reread->queryTokens.back(), std::string("fast"));
    QVERIFY(reread->extra.contains("notes"));
    QVERIFY(!doc.save(dir.filePath(QStringLiteral("no/such/dir/x.json"))).ok());
}

void TestDocument::malformedFileNamesTheField()
{
    QTemporaryDir dir;
    Project p = example(QStringLiteral("self-attention-tutorial.attnscope.json"));
    std::string text = serializeProject(p);
    const auto at = text.find("\"headDimQK\": 3");
    QVERIFY(at != std::string::npos);
    text.replace(at, 14, "\"headDimQK\": 2");
    const QString path = dir.filePath(QStringLiteral("bad.attnscope.json"));
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(text.data(), qint64(text.size()));
    f.close();
    auto r = Document::readProject(path);
    QVERIFY(!r.ok());
    QVERIFY2(r.message().find("weights.q") != std::string::npos, r.message().c_str());
    QVERIFY(r.message().find("bad.attnscope.json") != std::string::npos);
    QVERIFY(!Document::readProject(dir.filePath(QStringLiteral("missing.json"))).ok());
}

void TestDocument::everyCommandHasALabel()
{
    Document doc(example(QStringLiteral("multihead-causal.attnscope.json")));
    doc.setValue(MatrixId::Wq, 0, 0, 9.f);
    doc.setTokenLabel(TokenSide::Query, 0, QStringLiteral("x"));
    doc.insertToken(TokenSide::Query, 0, QStringLiteral("y"));
    doc.setHeads(3);
    doc.setHeadDimV(2);
    doc.setMode(AttentionMode::Cross);
    doc.setMaskCells({{0, 0}}, false);
    doc.applyMaskPreset(MaskPreset::None); // (causal already: Causal would change nothing)
    doc.reinitialise(MatrixId::Wv);
    doc.setTitle(QStringLiteral("t"));
    doc.setKeyValueHeads(1);
    doc.setRopeEnabled(true);
    doc.setRopeBase(100.0);
    doc.setRopePositionsText(TokenSide::Query, QStringLiteral("0 1 2 3 4 5 6"));
    doc.setSoftcap(30.0);
    doc.setMaskWindow(2);
    doc.setMatrixPresent(MatrixId::Sinks, true);
    QCOMPARE(doc.undoStack()->count(), 17);
    for (int i = 0; i < doc.undoStack()->count(); ++i)
        QVERIFY2(!doc.undoStack()->text(i).isEmpty(), qPrintable(QString::number(i)));
}

void TestDocument::npyReferencesOpenAndSaveKeepsThem()
{
    // A project whose input is a {"npy": ...} reference beside it: the GUI opens it from the
    // file's folder (it refused references before), and saving keeps the reference.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const float x[] = {1, 0, 1, 0, 0, 2, 0, 2, 1, 1, 1, 1};
    {
        QFile f(dir.filePath(QStringLiteral("x.npy")));
        QVERIFY(f.open(QIODevice::WriteOnly));
        const std::string bytes = npyBytes({3, 4}, x);
        f.write(bytes.data(), qint64(bytes.size()));
    }
    const QByteArray json = R"({"format": "attnscope", "version": 1, "mode": "self", "heads": 1, "headDimQK": 2,
        "headDimV": 2, "query": {"tokens": ["a", "b", "c"], "x": {"npy": "x.npy"}},
        "weights": {"q": [[1, 0], [0, 1], [1, 0], [0, 1]], "k": [[1, 0], [0, 1], [1, 0], [0, 1]],
                    "v": [[1, 0], [0, 1], [1, 0], [0, 1]]}})";
    const QString path = dir.filePath(QStringLiteral("p.attnscope.json"));
    {
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(json);
    }
    auto project = Document::readProject(path);
    QVERIFY2(project.ok(), project.ok() ? "" : project.message().c_str());
    QCOMPARE(project->problem.xq(1, 1), 2.0f);
    Document doc(std::move(*project));
    const QString saved = dir.filePath(QStringLiteral("saved.attnscope.json"));
    QVERIFY(doc.save(saved).ok());
    const QByteArray text = test::readAll(saved);
    QVERIFY2(text.contains(R"("npy": "x.npy")"), text.constData());
}

namespace {

void writeNpy(const QString &path, const std::vector<std::int64_t> &shape, const std::vector<float> &values)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    const std::string bytes = npyBytes(shape, values.data());
    f.write(bytes.data(), qint64(bytes.size()));
}

} // namespace

void TestDocument::saveWritesWhatWasShownWhenTheNpyChanged_data()
{
    QTest::addColumn<QString>("change");
    QTest::addColumn<bool>("edited"); // the referenced matrix was edited in the window first
    QTest::newRow("rewritten on disk") << "rewrite" << false;
    QTest::newRow("deleted") << "delete" << false;
    QTest::newRow("rewritten, edited, edit undone") << "rewrite" << true;
    QTest::newRow("deleted, edited, edit undone") << "delete" << true;
    QTest::newRow("unchanged") << "none" << false;
}

void TestDocument::saveWritesWhatWasShownWhenTheNpyChanged()
{
    // The project was opened, then the script that wrote x.npy ran again (or the file was
    // deleted), then the user saved: the saved project must reopen with the values the window
    // showed, not with the file's new values or not at all.
    QFETCH(QString, change);
    QFETCH(bool, edited);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString npy = dir.filePath(QStringLiteral("x.npy"));
    writeNpy(npy, {3, 4}, {1, 0, 1, 0, 0, 2, 0, 2, 1, 1, 1, 1});
    const QByteArray json = R"({"format": "attnscope", "version": 1, "mode": "self", "heads": 1, "headDimQK": 2,
        "headDimV": 2, "query": {"tokens": ["a", "b", "c"], "x": {"npy": "x.npy"}},
        "weights": {"q": [[1, 0], [0, 1], [1, 0], [0, 1]], "k": [[1, 0], [0, 1], [1, 0], [0, 1]],
                    "v": [[1, 0], [0, 1], [1, 0], [0, 1]]}})";
    const QString path = dir.filePath(QStringLiteral("p.attnscope.json"));
    {
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(json);
    }
    auto project = Document::readProject(path);
    QVERIFY2(project.ok(), project.ok() ? "" : project.message().c_str());
    Document doc(std::move(*project));
    doc.setFilePath(path);
    const MatrixF shown = doc.problem().xq;
    if (change == "rewrite")
        writeNpy(npy, {3, 4}, std::vector<float>(12, 5.0f));
    else if (change == "delete")
        QVERIFY(QFile::remove(npy));
    if (edited) { // an edit and its undo: the matrix is the one read again
        QVERIFY(doc.setValue(MatrixId::Xq, 0, 0, 9.0f));
        doc.undoStack()->undo();
    }
    QVERIFY(doc.setTitle(QStringLiteral("saved")));
    QVERIFY(doc.save(path).ok());
    const QByteArray text = test::readAll(path);
    QCOMPARE(text.contains(R"("npy": "x.npy")"), change == "none");
    auto reopened = Document::readProject(path);
    QVERIFY2(reopened.ok(), reopened.ok() ? "" : reopened.message().c_str());
    QCOMPARE(reopened->problem.xq, shown);
}

void TestDocument::keyValueHeadsRegroupAndUndo()
{
    Document doc(example(QStringLiteral("multihead-causal.attnscope.json")));
    QVERIFY(doc.setHeads(4));
    const Project before = doc.project();
    const AttentionWeights &old = before.problem.weights;
    const int dK = before.problem.spec.headDimQK, dV = before.problem.spec.headDimV;
    QSignalSpy changed(&doc, &Document::changed);
    QVERIFY(doc.setKeyValueHeads(1)); // multi-query: key/value head 0 kept
    QVERIFY(changed.last().at(0).value<Document::Changes>().testFlag(Document::ShapeChanged));
    QCOMPARE(doc.problem().spec.kvHeads, 1);
    QVERIFY(doc.problem().weights.k == old.k.leftCols(dK));
    QVERIFY(doc.problem().weights.v == old.v.leftCols(dV));
    QVERIFY(*doc.problem().weights.kBias == old.kBias->head(dK));
    QVERIFY(*doc.problem().weights.vBias == old.vBias->head(dV));
    QVERIFY(doc.problem().weights.q == old.q);
    QVERIFY(valid(doc.project()));
    QVERIFY(doc.setKeyValueHeads(2));
    QCOMPARE(doc.problem().weights.k.cols(), 2 * dK);
    QVERIFY(doc.problem().weights.k.leftCols(dK) == old.k.leftCols(dK));
    QVERIFY(valid(doc.project()));
    QVERIFY(doc.setKeyValueHeads(4)); // one per head: stored as 0, as a file without kvHeads
    QCOMPARE(doc.problem().spec.kvHeads, 0);
    QCOMPARE(doc.problem().weights.k.cols(), 4 * dK);
    QVERIFY(valid(doc.project()));
    // New key/value heads get their own numbers: per matrix and per head.
    const MatrixF &k = doc.problem().weights.k, &v = doc.problem().weights.v;
    QVERIFY(k.middleCols(2 * dK, dK) != k.middleCols(3 * dK, dK));
    QVERIFY(k.middleCols(1 * dK, dK) != k.middleCols(2 * dK, dK));
    QVERIFY(k.middleCols(2 * dK, dK) != v.middleCols(2 * dV, dV));
    QVERIFY(doc.problem().weights.kBias->segment(2 * dK, dK).isZero()); // new bias blocks are 0
    const MatrixF regrown = k;
    QCOMPARE(doc.undoStack()->count(), 4);
    doc.undoStack()->setIndex(1);
    QVERIFY(same(doc.project(), before));
    doc.undoStack()->setIndex(4);
    QVERIFY(doc.problem().weights.k == regrown);
}

void TestDocument::keyValueHeadsRefusedUnlessADivisor()
{
    Document doc(example(QStringLiteral("multihead-causal.attnscope.json")));
    QVERIFY(doc.setHeads(4));
    const Project before = doc.project();
    const int steps = doc.undoStack()->count();
    QSignalSpy refused(&doc, &Document::editRefused);
    QVERIFY(!doc.setKeyValueHeads(3));
    QCOMPARE(doc.lastRefusal(), QStringLiteral("kvHeads: expected a whole number that divides heads (4), found 3"));
    QVERIFY(!doc.setKeyValueHeads(0));
    QVERIFY(!doc.setKeyValueHeads(8));
    QCOMPARE(refused.count(), 3);
    QVERIFY(!doc.setKeyValueHeads(4)); // already: no change, no refusal
    QCOMPARE(refused.count(), 3);
    QVERIFY(same(doc.project(), before));
    QCOMPARE(doc.undoStack()->count(), steps);
}

void TestDocument::ropeOnOffBaseAndPositions()
{
    Document doc(example(QStringLiteral("self-attention-tutorial.attnscope.json")));
    const Project original = doc.project();
    QVERIFY(!doc.setRopeEnabled(true)); // dK = 3: refused with core's message
    QCOMPARE(doc.lastRefusal(),
             QStringLiteral("rope: needs an even headDimQK (dimension i turns with dimension i + dK/2), found 3"));
    QVERIFY(same(doc.project(), original));
    QCOMPARE(doc.undoStack()->count(), 0);
    QVERIFY(doc.setHeadDimQK(4));
    QSignalSpy changed(&doc, &Document::changed);
    QVERIFY(doc.setRopeEnabled(true));
    QVERIFY(changed.last().at(0).value<Document::Changes>().testFlag(Document::SpecChanged));
    QCOMPARE(doc.problem().spec.rope->base, 10000.0);
    QVERIFY(doc.problem().spec.rope->queryPositions.empty());
    QVERIFY(valid(doc.project()));
    QVERIFY(!doc.setHeadDimQK(5)); // odd while RoPE is on
    QVERIFY2(doc.lastRefusal().startsWith(QStringLiteral("rope: needs an even headDimQK")),
             qPrintable(doc.lastRefusal()));
    QCOMPARE(doc.problem().spec.headDimQK, 4);
    QVERIFY(doc.setHeadDimQK(6));
    QVERIFY(valid(doc.project()));
    const int steps = doc.undoStack()->count();
    QVERIFY(doc.setRopeBase(500000.0, 1));
    QVERIFY(doc.setRopeBase(1e6, 1)); // the same field, the same key: one step
    QCOMPARE(doc.undoStack()->count(), steps + 1);
    QVERIFY(!doc.setRopeBase(0.0));
    QCOMPARE(doc.lastRefusal(), QStringLiteral("rope.base: expected a number above 0, found 0"));
    QVERIFY(!doc.setRopeBase(-1.0));
    QCOMPARE(doc.problem().spec.rope->base, 1e6);
    QVERIFY(doc.setRopePositionsText(TokenSide::Query, QStringLiteral(" 0, 2 7 ")));
    QCOMPARE(doc.problem().spec.rope->queryPositions, (std::vector<std::int64_t>{0, 2, 7}));
    QVERIFY(changed.last().at(0).value<Document::Changes>().testFlag(Document::MaskChanged));
    QVERIFY(valid(doc.project()));
    QVERIFY(!doc.setRopePositionsText(TokenSide::Query, QStringLiteral("0,2,7"))); // the same
    QVERIFY(doc.setRopePositionsText(TokenSide::Query, QString()));                // 0..T-1 again
    QVERIFY(doc.problem().spec.rope->queryPositions.empty());
    QVERIFY(doc.setRopeEnabled(false));
    QVERIFY(!doc.problem().spec.rope);
    QVERIFY(!doc.setRopeBase(2.0)); // nothing to set while off
    doc.undoStack()->setIndex(0);
    QVERIFY(same(doc.project(), original));
}

void TestDocument::ropePositionsRefused_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("message");
    QTest::newRow("too few") << "0 1"
                             << "rope.queryPositions: expected 3 positions (one per row), found 2";
    QTest::newRow("too many") << "0 1 2 3"
                              << "rope.queryPositions: expected 3 positions (one per row), found 4";
    QTest::newRow("negative") << "0 -1 2"
                              << "rope.queryPositions[1]: expected a whole number of 0 or more, found -1";
    QTest::newRow("a word") << "0, x, 2"
                            << "rope.queryPositions[1]: expected a whole number of 0 or more, found x";
    QTest::newRow("a fraction") << "0 1 2.5"
                                << "rope.queryPositions[2]: expected a whole number of 0 or more, found 2.5";
}

void TestDocument::ropePositionsRefused()
{
    QFETCH(QString, text);
    QFETCH(QString, message);
    Project p = example(QStringLiteral("self-attention-tutorial.attnscope.json"));
    Document grown(p);
    QVERIFY(grown.setHeadDimQK(4));
    Document doc(grown.project());
    QVERIFY(doc.setRopeEnabled(true));
    QVERIFY(doc.setRopePositionsText(TokenSide::Query, QStringLiteral("3 4 5")));
    const Project before = doc.project();
    const int steps = doc.undoStack()->count();
    QSignalSpy refused(&doc, &Document::editRefused);
    QVERIFY(!doc.setRopePositionsText(TokenSide::Query, text));
    QCOMPARE(refused.count(), 1);
    QCOMPARE(doc.lastRefusal(), message);
    QVERIFY(same(doc.project(), before));
    QCOMPARE(doc.undoStack()->count(), steps);
}

void TestDocument::softcapOnOffAndValue()
{
    Document doc(example(QStringLiteral("self-attention-tutorial.attnscope.json")));
    const Project original = doc.project();
    QSignalSpy changed(&doc, &Document::changed);
    QVERIFY(doc.setSoftcap(50.0));
    QVERIFY(changed.last().at(0).value<Document::Changes>().testFlag(Document::SpecChanged));
    QVERIFY(doc.setSoftcap(30.0, 1));
    QVERIFY(doc.setSoftcap(20.0, 1)); // value edits merge; turning it on was a step of its own
    QCOMPARE(doc.undoStack()->count(), 2);
    QVERIFY(!doc.setSoftcap(0.0));
    QCOMPARE(doc.lastRefusal(), QStringLiteral("softcap: expected a number above 0, found 0"));
    QVERIFY(!doc.setSoftcap(-2.0));
    QVERIFY(!doc.setSoftcap(std::numeric_limits<double>::infinity()));
    QCOMPARE(doc.problem().spec.softcap, std::optional<double>(20.0));
    QVERIFY(valid(doc.project()));
    QVERIFY(doc.setSoftcap(std::nullopt));
    QVERIFY(!doc.problem().spec.softcap);
    QCOMPARE(doc.undoStack()->count(), 3);
    doc.undoStack()->undo();
    QCOMPARE(doc.problem().spec.softcap, std::optional<double>(20.0));
    doc.undoStack()->undo();
    QCOMPARE(doc.problem().spec.softcap, std::optional<double>(50.0));
    doc.undoStack()->undo();
    QVERIFY(same(doc.project(), original));
}

void TestDocument::sinksAddEditRemove()
{
    Document doc(example(QStringLiteral("multihead-causal.attnscope.json")));
    const Project original = doc.project();
    QVERIFY(!matrixExists(doc.project(), MatrixId::Sinks));
    QVERIFY(!matrixName(MatrixId::Sinks).isEmpty());
    QSignalSpy changed(&doc, &Document::changed);
    QVERIFY(doc.setMatrixPresent(MatrixId::Sinks, true));
    QVERIFY(changed.last().at(0).value<Document::Changes>().testFlag(Document::ShapeChanged));
    QCOMPARE(matrixRows(doc.project(), MatrixId::Sinks), 1);
    QCOMPARE(matrixCols(doc.project(), MatrixId::Sinks), 2);
    QVERIFY(doc.problem().weights.sinks->isZero());
    QVERIFY(valid(doc.project()));
    QVERIFY(doc.setValue(MatrixId::Sinks, 0, 1, 0.75f));
    QCOMPARE((*doc.problem().weights.sinks)(1), 0.75f);
    QVERIFY(doc.setHeads(3)); // sinks follow the heads
    QCOMPARE(doc.problem().weights.sinks->size(), 3);
    QCOMPARE((*doc.problem().weights.sinks)(1), 0.75f);
    QCOMPARE((*doc.problem().weights.sinks)(2), 0.0f);
    QVERIFY(valid(doc.project()));
    QVERIFY(doc.setMatrixPresent(MatrixId::Sinks, false));
    QVERIFY(!doc.problem().weights.sinks);
    QVERIFY(valid(doc.project()));
    doc.undoStack()->setIndex(0);
    QVERIFY(same(doc.project(), original));
}

void TestDocument::maskWindowField()
{
    Document doc(example(QStringLiteral("multihead-causal.attnscope.json"))); // causal, six tokens
    const Project original = doc.project();
    QSignalSpy changed(&doc, &Document::changed);
    QVERIFY(doc.setMaskWindow(3, 5));
    QVERIFY(changed.last().at(0).value<Document::Changes>().testFlag(Document::MaskChanged));
    QCOMPARE(doc.problem().mask.window, std::int64_t(3));
    const MaskMatrix m = effectiveMask(doc.problem());
    QCOMPARE(int(m(5, 2)), 0); // 2 > 5 - 3 fails
    QCOMPARE(int(m(5, 3)), 1);
    QCOMPARE(int(m(5, 5)), 1);
    QCOMPARE(int(m(3, 4)), 0); // still causal
    QVERIFY(valid(doc.project()));
    QVERIFY(doc.setMaskWindow(2, 5)); // the same field, the same key: one step
    QCOMPARE(doc.undoStack()->count(), 1);
    QVERIFY(doc.setMaskWindow(4));
    QCOMPARE(doc.undoStack()->count(), 2);
    QVERIFY(!doc.setMaskWindow(-1));
    QCOMPARE(doc.lastRefusal(), QStringLiteral("mask.window: expected a whole number of at least 1, found -1"));
    QVERIFY(doc.setMaskWindow(0)); // no window
    QVERIFY((effectiveMask(doc.problem()).array() == effectiveMask(original.problem).array()).all());
    doc.undoStack()->undo();
    QCOMPARE(doc.problem().mask.window, std::int64_t(4));
    doc.undoStack()->undo();
    QCOMPARE(doc.problem().mask.window, std::int64_t(2));
    doc.undoStack()->undo();
    QVERIFY(same(doc.project(), original));
}

QTEST_GUILESS_MAIN(TestDocument)
#include "tst_document.moc"
