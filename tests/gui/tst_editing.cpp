// Undoable edits through the Document API, with no widget: new values drawn independently per
// matrix and region, one undo merge id per field, sizes the machine cannot hold refused before
// allocating, non-finite cells refused.

#include "app/gui/document/Document.h"
#include "app/gui/document/MemoryBudget.h"
#include "core/attention/Validation.h"

#include "../common/TestUtil.h"

#include <QRegularExpression>
#include <QSignalSpy>
#include <QTest>
#include <QUndoStack>

#include <cmath>
#include <limits>
#include <optional>
#include <set>

using namespace attnscope;

namespace {

Project example(const QString &name)
{
    auto p = Document::readProject(test::sourcePath(QStringLiteral("resources/examples/") + name));
    if (!p)
        qFatal("%s", p.message().c_str());
    return *p;
}

bool same(const Project &a, const Project &b)
{
    return serializeProject(a) == serializeProject(b);
}

// a · bᵀ with plain loops (Eigen's gemm trips GCC 12's maybe-uninitialized warning).
MatrixF timesTransposed(const MatrixF &a, const MatrixF &b)
{
    MatrixF out = MatrixF::Zero(a.rows(), b.rows());
    for (Eigen::Index i = 0; i < a.rows(); ++i)
        for (Eigen::Index j = 0; j < b.rows(); ++j)
            for (Eigen::Index k = 0; k < a.cols(); ++k)
                out(i, j) += a(i, k) * b(j, k);
    return out;
}

MatrixF times(const MatrixF &a, const MatrixF &b)
{
    return timesTransposed(a, MatrixF(b.transpose()));
}

// Equal shapes and values (Eigen's == requires equal shapes).
bool same(const MatrixF &a, const MatrixF &b)
{
    return a.rows() == b.rows() && a.cols() == b.cols() && a == b;
}

bool same(const std::optional<MatrixF> &a, const std::optional<MatrixF> &b)
{
    return a.has_value() == b.has_value() && (!a || same(*a, *b));
}

// Without serialising: the large projects here would make megabytes of JSON.
bool sameData(const Project &a, const Project &b)
{
    const AttentionProblem &x = a.problem, &y = b.problem;
    return x.spec.heads == y.spec.heads && x.spec.headDimQK == y.spec.headDimQK && x.spec.headDimV == y.spec.headDimV &&
           same(x.xq, y.xq) && same(x.xkv, y.xkv) && same(x.weights.q, y.weights.q) && same(x.weights.k, y.weights.k) &&
           same(x.weights.v, y.weights.v) && same(x.weights.o, y.weights.o) && a.queryTokens == b.queryTokens;
}

MatrixF block(const MatrixF &m, int head, int width)
{
    return m.middleCols(Eigen::Index(head) * width, width);
}

} // namespace

class TestEditing : public QObject
{
    Q_OBJECT

private slots:
    void newHeadsAreIndependent_data();
    void newHeadsAreIndependent();
    void grownHeadDimsAreIndependent();
    void reinitialiseDiffersPerMatrix();
    void insertedTokensGetDistinctRows();
    void fillsAreDeterministic();
    void scaleModeSwitchNeverMerges();
    void everyFieldHasItsOwnMergeId();
    void nonFiniteCellValuesRefused_data();
    void nonFiniteCellValuesRefused();
    void sizeBeyondMemoryRefused_data();
    void sizeBeyondMemoryRefused();
    void sizeWithinBudgetAccepted();
};

void TestEditing::newHeadsAreIndependent_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("init");
    QTest::newRow("tutorial 1->3 xavier")
        << QStringLiteral("self-attention-tutorial.attnscope.json") << 3 << int(InitKind::Xavier);
    QTest::newRow("tutorial 1->4 gaussian")
        << QStringLiteral("self-attention-tutorial.attnscope.json") << 4 << int(InitKind::Gaussian);
    QTest::newRow("multihead 2->4 kaiming")
        << QStringLiteral("multihead-causal.attnscope.json") << 4 << int(InitKind::Kaiming);
    QTest::newRow("cross 1->3 xavier") << QStringLiteral("cross-attention-translation.attnscope.json") << 3
                                       << int(InitKind::Xavier);
}

void TestEditing::newHeadsAreIndependent()
{
    QFETCH(QString, file);
    QFETCH(int, heads);
    QFETCH(int, init);
    Document doc(example(file));
    doc.setInitOptions({InitKind(init), 5, 1.0});
    const int oldHeads = doc.problem().spec.heads;
    QVERIFY(doc.setHeads(heads));
    const AttentionProblem &p = doc.problem();
    const int dK = p.spec.headDimQK, dV = p.spec.headDimV;
    for (int h = oldHeads; h < heads; ++h) {
        const MatrixF q = block(p.weights.q, h, dK), k = block(p.weights.k, h, dK), v = block(p.weights.v, h, dV);
        // In cross-attention W_Q and W_K have different input widths: they differ by shape.
        const bool sameShape = q.rows() == k.rows() && q.cols() == k.cols();
        QVERIFY2(!sameShape || q != k, qPrintable(QStringLiteral("head %1: W_Q block equals W_K block").arg(h)));
        if (dK == dV && p.weights.q.rows() == p.weights.v.rows()) {
            QVERIFY(q != v);
            QVERIFY(k != v);
        }
        // Q = K gave a symmetric score matrix: not any more.
        const MatrixF &xkv = p.spec.mode == AttentionMode::Cross ? p.xkv : p.xq;
        if (p.spec.mode == AttentionMode::Self) {
            const MatrixF scores = timesTransposed(times(p.xq, q), times(xkv, k));
            QVERIFY2(!scores.isApprox(MatrixF(scores.transpose()), 1e-4f), qPrintable(QString::number(h)));
        }
        for (int g = oldHeads; g < h; ++g) {
            QVERIFY(block(p.weights.q, g, dK) != q);
            QVERIFY(block(p.weights.k, g, dK) != k);
            QVERIFY(block(p.weights.v, g, dV) != v);
        }
    }
}

void TestEditing::grownHeadDimsAreIndependent()
{
    Document doc(example(QStringLiteral("multihead-causal.attnscope.json")));
    const int H = doc.problem().spec.heads, dK = doc.problem().spec.headDimQK;
    QVERIFY(doc.setHeadDimQK(dK + 2));
    const AttentionProblem &p = doc.problem();
    for (int h = 0; h < H; ++h) {
        const MatrixF newQ = p.weights.q.middleCols(Eigen::Index(h) * (dK + 2) + dK, 2);
        const MatrixF newK = p.weights.k.middleCols(Eigen::Index(h) * (dK + 2) + dK, 2);
        QVERIFY(newQ != newK);
        if (h > 0)
            QVERIFY(newQ != p.weights.q.middleCols(Eigen::Index(h - 1) * (dK + 2) + dK, 2));
    }
    const int dV = p.spec.headDimV;
    QVERIFY(doc.setHeadDimV(dV + 1));
    QVERIFY(doc.problem().weights.v.col(dV) != doc.problem().weights.v.col(2 * (dV + 1) - 1));
}

void TestEditing::reinitialiseDiffersPerMatrix()
{
    Document doc(example(QStringLiteral("self-attention-tutorial.attnscope.json")));
    doc.setInitOptions({InitKind::Gaussian, 1234, 0.5});
    QVERIFY(doc.reinitialise(MatrixId::Wq));
    QVERIFY(doc.reinitialise(MatrixId::Wk));
    QVERIFY(doc.reinitialise(MatrixId::Wv));
    const AttentionWeights &w = doc.problem().weights;
    QVERIFY(w.q != w.k);
    QVERIFY(w.k != w.v);
    QVERIFY(w.q != w.v);
    // Gaussian with the chosen spread: the mean square is near 0.25 (12 values, loose bound).
    const double meanSquare = double(w.q.squaredNorm()) / double(w.q.size());
    QVERIFY2(meanSquare > 0.02 && meanSquare < 1.5, qPrintable(QString::number(meanSquare)));
}

void TestEditing::insertedTokensGetDistinctRows()
{
    Document doc(example(QStringLiteral("self-attention-tutorial.attnscope.json")));
    doc.setInitOptions({InitKind::Gaussian, 3, 1.0});
    QVERIFY(doc.insertToken(TokenSide::Query, 1, QStringLiteral("a")));
    QVERIFY(doc.insertToken(TokenSide::Query, 1, QStringLiteral("b")));
    QVERIFY(doc.insertToken(TokenSide::Query, 5, QStringLiteral("c")));
    const MatrixF &x = doc.problem().xq;
    QVERIFY(x.row(1) != x.row(2));
    QVERIFY(x.row(1) != x.row(5));
    QVERIFY(x.row(2) != x.row(5));
}

void TestEditing::fillsAreDeterministic()
{
    auto edits = [](std::uint64_t seed) {
        Document doc(example(QStringLiteral("multihead-causal.attnscope.json")));
        doc.setInitOptions({InitKind::Xavier, seed, 1.0});
        doc.setHeads(3);
        doc.setHeadDimQK(5);
        doc.insertToken(TokenSide::Query, 2, QStringLiteral("x"));
        doc.reinitialise(MatrixId::Wv);
        doc.setInputDim(TokenSide::Query, 10);
        return doc.project();
    };
    QVERIFY(same(edits(9), edits(9)));
    QVERIFY(!same(edits(9), edits(10)));
}

void TestEditing::scaleModeSwitchNeverMerges()
{
    Document doc(example(QStringLiteral("self-attention-tutorial.attnscope.json")));
    QCOMPARE(doc.problem().spec.scaleMode, ScaleMode::None);
    const int key = 1; // the key the scale editor passes for every edit of the scale value
    QVERIFY(doc.setScale(ScaleMode::Custom, 0.5, key)); // none -> custom: a mode switch
    QCOMPARE(doc.undoStack()->count(), 1);
    QVERIFY(doc.setScale(ScaleMode::Custom, 0.25, key));
    QVERIFY(doc.setScale(ScaleMode::Custom, 0.3, key)); // dragging the value: one step
    QCOMPARE(doc.undoStack()->count(), 2);
    QVERIFY(doc.setScale(ScaleMode::InvSqrtDk, 0.3, key)); // a mode switch: its own step
    QCOMPARE(doc.undoStack()->count(), 3);
    QVERIFY(doc.setScale(ScaleMode::Custom, 0.125, key)); // and back: again its own step
    QCOMPARE(doc.undoStack()->count(), 4);
    QVERIFY(doc.setScale(ScaleMode::Custom, 0.75, key));
    QCOMPARE(doc.undoStack()->count(), 5);
    doc.undoStack()->undo();
    QCOMPARE(doc.problem().spec.scale(), 0.125);
    doc.undoStack()->undo();
    QCOMPARE(doc.problem().spec.scaleMode, ScaleMode::InvSqrtDk);
    doc.undoStack()->undo();
    QCOMPARE(doc.problem().spec.scaleMode, ScaleMode::Custom);
    QCOMPARE(doc.problem().spec.scale(), 0.3);
    doc.undoStack()->undo();
    QCOMPARE(doc.problem().spec.scale(), 0.5);
    doc.undoStack()->undo();
    QCOMPARE(doc.problem().spec.scaleMode, ScaleMode::None);
}

void TestEditing::everyFieldHasItsOwnMergeId()
{
    Document doc(example(QStringLiteral("self-attention-tutorial.attnscope.json")));
    // The same merge key on different fields never merges them.
    QVERIFY(doc.setScale(ScaleMode::Custom, 0.5, 1));
    QVERIFY(doc.setValue(MatrixId::Wq, 0, 0, 2.0f, 1));
    QVERIFY(doc.setMaskCells({{0, 1}}, false, 1));
    QVERIFY(doc.setScale(ScaleMode::Custom, 0.6, 1));
    QCOMPARE(doc.undoStack()->count(), 4);
    std::set<int> ids;
    for (int i = 0; i < doc.undoStack()->count(); ++i)
        if (const int id = doc.undoStack()->command(i)->id(); id != -1)
            ids.insert(id);
    QCOMPARE(int(ids.size()), 3); // scale value, cell value, mask stroke
    QVERIFY(doc.setMaskFill(MaskFill::NegLarge));
    QVERIFY(doc.setTitle(QStringLiteral("t")));
    QVERIFY(doc.setTokenLabel(TokenSide::Query, 0, QStringLiteral("x")));
    QCOMPARE(doc.undoStack()->count(), 7);
    QCOMPARE(doc.undoStack()->command(4)->id(), -1); // one-off edits never merge
    QCOMPARE(doc.undoStack()->command(5)->id(), -1);
}

void TestEditing::nonFiniteCellValuesRefused_data()
{
    QTest::addColumn<float>("value");
    QTest::newRow("+inf") << std::numeric_limits<float>::infinity();
    QTest::newRow("-inf") << -std::numeric_limits<float>::infinity();
    QTest::newRow("nan") << std::numeric_limits<float>::quiet_NaN();
}

void TestEditing::nonFiniteCellValuesRefused()
{
    QFETCH(float, value);
    Document doc(example(QStringLiteral("self-attention-tutorial.attnscope.json")));
    const Project before = doc.project();
    QVERIFY(!doc.setValue(MatrixId::Wq, 0, 0, value));
    QVERIFY(!doc.setValue(MatrixId::Xq, 1, 1, value, 3));
    QCOMPARE(doc.undoStack()->count(), 0);
    QVERIFY(same(doc.project(), before));
    QVERIFY(validateProblem(doc.problem()).ok());
}

void TestEditing::sizeBeyondMemoryRefused_data()
{
    // Each row reaches its size in steps that need a few MiB, then asks for one that needs
    // tens of GiB. d_q 65536 (W_Q alone 256 GiB) is checked against this machine's budget;
    // the others against a fixed 8 GiB budget, so the test means the same on every machine.
    QTest::addColumn<int>("field"); // 0 heads, 1 dK, 2 dV, 3 d_q
    QTest::addColumn<int>("value");
    QTest::addColumn<bool>("machineBudget");
    QTest::newRow("d_q 65536") << 3 << 65536 << true;
    QTest::newRow("heads 256") << 0 << 256 << false;
    QTest::newRow("dK 4096") << 1 << 4096 << false;
    QTest::newRow("dV 4096") << 2 << 4096 << false;
}

void TestEditing::sizeBeyondMemoryRefused()
{
    QFETCH(int, field);
    QFETCH(int, value);
    QFETCH(bool, machineBudget);
    Document doc(example(QStringLiteral("self-attention-tutorial.attnscope.json")));
    MemoryBudget budget;
    budget.fixedBytes = machineBudget ? 0 : std::int64_t(8) << 30; // 0: the machine's
    doc.setMemoryBudget(budget);
    switch (field) {
    case 0:
        QVERIFY(doc.setHeadDimQK(4096));
        QVERIFY(doc.setHeadDimV(4096));
        QVERIFY(doc.setInputDim(TokenSide::Query, 1024));
        break;
    case 1:
    case 2:
        QVERIFY(doc.setHeads(256));
        QVERIFY(doc.setInputDim(TokenSide::Query, 1024));
        break;
    default:
        QVERIFY(doc.setHeads(256));
        QVERIFY(doc.setHeadDimQK(4096));
        break;
    }
    const Project before = doc.project();
    const int steps = doc.undoStack()->count();
    QSignalSpy refused(&doc, &Document::editRefused);
    bool done = true;
    switch (field) {
    case 0:
        done = doc.setHeads(value);
        break;
    case 1:
        done = doc.setHeadDimQK(value);
        break;
    case 2:
        done = doc.setHeadDimV(value);
        break;
    default:
        done = doc.setInputDim(TokenSide::Query, value);
        break;
    }
    // Refused before anything was allocated; nothing lost, and it says what it would need.
    QVERIFY(!done);
    QCOMPARE(doc.undoStack()->count(), steps);
    QVERIFY(sameData(doc.project(), before));
    QCOMPARE(refused.count(), 1);
    const QString message = refused.at(0).at(0).toString();
    QVERIFY2(message.contains(QStringLiteral("GiB")) && message.contains(QString::number(value)), qPrintable(message));
    // "Set d_model to 65536 would need about ..." made the undo text the subject of a sentence;
    // the change is named, then what it would need.
    static const QRegularExpression sentence(QStringLiteral("^Set \\S+ to \\d+: the change would need about "));
    QVERIFY2(sentence.match(message).hasMatch(), qPrintable(message));
    QCOMPARE(doc.lastRefusal(), message);
}

void TestEditing::sizeWithinBudgetAccepted()
{
    // The limit is the machine's, set in one place: the same edit is refused under a tight
    // budget and done under the machine's.
    Document doc(example(QStringLiteral("self-attention-tutorial.attnscope.json")));
    QSignalSpy refused(&doc, &Document::editRefused);
    MemoryBudget tight;
    tight.fixedBytes = std::int64_t(256) << 10;
    doc.setMemoryBudget(tight);
    QVERIFY(!doc.setHeadDimQK(4096)); // W_Q and W_K of 4 x 4096, held in several copies
    QCOMPARE(refused.count(), 1);
    QVERIFY(refused.at(0).at(0).toString().contains(QStringLiteral("dK")));
    QCOMPARE(doc.problem().spec.headDimQK, 3);
    doc.setMemoryBudget(MemoryBudget());
    QVERIFY(doc.setHeadDimQK(4096));
    QCOMPARE(refused.count(), 1);
    QVERIFY(doc.memoryBudget().bytes() > (std::int64_t(256) << 20));
}

QTEST_GUILESS_MAIN(TestEditing)
#include "tst_editing.moc"
