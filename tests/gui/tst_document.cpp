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
    void inputDims();
    void insertRemoveTokenSelf();
    void insertRemoveTokenCross();
    void removingLastTokenIsRefused();
    void modeSwitchKeepsProblemValid();
    void maskStrokeIsOneUndoStep();
    void maskPresets();
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
    QVERIFY(doc.applyMaskPreset(MaskPreset::SlidingWindow, 2)); // a custom mask that must grow too
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
    QVERIFY(doc.applyMaskPreset(MaskPreset::SlidingWindow, 2));
    m = effectiveMask(doc.problem());
    QCOMPARE(int(m(2, 1)), 1);
    QCOMPARE(int(m(2, 3)), 1);
    QCOMPARE(int(m(2, 4)), 0);
    QCOMPARE(int(m(2, 0)), 0);
    QVERIFY(valid(doc.project()));
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
    doc.applyMaskPreset(MaskPreset::Causal);
    doc.reinitialise(MatrixId::Wv);
    doc.setTitle(QStringLiteral("t"));
    QCOMPARE(doc.undoStack()->count(), 10);
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

QTEST_GUILESS_MAIN(TestDocument)
#include "tst_document.moc"
