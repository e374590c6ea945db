// A batched project in the main window (design.md, "A batch"; real widgets, offscreen): it
// opens showing sequence 0 with a visible notice, the "Sequence" spin box shows another
// sequence (what is computed follows), the step view gives the tutorials' 4-D shapes, and
// saving writes the whole batch whichever sequence is shown. A 2-D project has no bar.

#include "app/gui/document/ProjectEdit.h"
#include "app/gui/sources/ProjectSource.h"
#include "app/gui/views/AttentionViews.h"
#include "app/gui/views/BatchBar.h"
#include "app/gui/views/MainWindow.h"
#include "app/gui/views/TeachingView.h"
#include "core/attention/CpuBackend.h"
#include "core/formats/BatchedProject.h"

#include "../common/TestUtil.h"

#include <QDir>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

using namespace attnscope;

namespace {

const QString kFixture = QStringLiteral("tests/fixtures/tutorial/seed000_mha_batch_padding/project.attnscope.json");

bool settle(MainWindow &w)
{
    if (!w.computeController()->waitForIdle(20000))
        return false;
    return w.currentResult() && w.currentResult()->generation == w.computeController()->latestGeneration() &&
           serializeProject(w.currentResult()->project) == serializeProject(w.document()->project());
}

} // namespace

class TestBatchBar : public QObject
{
    Q_OBJECT

private slots:
    void batchOpensWithNoticeAndSequenceSelector();
    void unbatchedProjectHasNoBar();
    void valueInputFollowsKeyEdits();
};

void TestBatchBar::batchOpensWithNoticeAndSequenceSelector()
{
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    const QString path = test::sourcePath(kFixture);
    QVERIFY(w.openFile(path));
    QVERIFY(settle(w));
    BatchBar *bar = w.project()->batchBar();
    QVERIFY(bar->isVisible());
    QVERIFY2(bar->noticeText().contains(QStringLiteral("batch of 2 sequences")), qPrintable(bar->noticeText()));
    QCOMPARE(bar->sequenceBox()->maximum(), 1);
    QCOMPARE(bar->sequenceBox()->value(), 0);
    auto file = readProjectFile(path.toStdString());
    QVERIFY(file.ok());
    const BatchedProject batch(*file);
    QVERIFY(w.currentResult()->project.problem.xq == batch.problemForSequence(0).xq);

    // Sequence 1: what is computed is that sequence, with its padded keys.
    bar->sequenceBox()->setValue(1);
    QVERIFY(settle(w));
    QCOMPARE(w.document()->project().batch->shown, 1);
    QVERIFY(w.currentResult()->project.problem.xq == batch.problemForSequence(1).xq);
    auto expected = CpuBackend().compute(batch.problemForSequence(1));
    QVERIFY(expected.ok());
    QVERIFY(w.currentResult()->trace.weights[0] == expected->weights[0]);
    QCOMPARE(w.currentResult()->trace.weights[0](0, 1), 0.0f); // key 1 is padding in sequence 1
    QVERIFY(!w.document()->isModified());
    QVERIFY(bar->noticeText().contains(QStringLiteral("sequence 1 is shown")));

    // The step view opens with the tutorials' 4-D shapes.
    w.views()->tabs()->setCurrentWidget(w.views()->teaching());
    const QString html = w.views()->teaching()->html();
    QVERIFY2(html.contains(QStringLiteral("[2, 2, 3, 4] [B, H, Tq, dK]")), qPrintable(html.left(600)));
    QVERIFY(html.contains(QStringLiteral("[2, 2, 3, 3] [B, H, Tq, Tk]")));

    // Saving while sequence 1 is shown writes the same batch the file held.
    QTemporaryDir dir;
    const QString saved = dir.filePath(QStringLiteral("saved.attnscope.json"));
    QVERIFY(w.project()->saveTo(saved));
    auto reread = readProjectFile(saved.toStdString());
    QVERIFY2(reread.ok(), reread.ok() ? "" : reread.message().c_str());
    QCOMPARE(serializeProject(*reread), serializeProject(*file));

    const QImage shot = w.grab().toImage();
    QDir().mkpath(QStringLiteral(ATTNSCOPE_BATCH_SCREENSHOT_DIR));
    QVERIFY(shot.save(QStringLiteral(ATTNSCOPE_BATCH_SCREENSHOT_DIR "/batch-sequence-1.png")));
}

void TestBatchBar::unbatchedProjectHasNoBar()
{
    MainWindow w;
    w.show();
    QVERIFY(w.openFile(QStringLiteral(":/examples/self-attention-tutorial.attnscope.json")));
    QVERIFY(settle(w));
    QVERIFY(!w.project()->batchBar()->isVisible());
    w.views()->tabs()->setCurrentWidget(w.views()->teaching());
    QVERIFY(!w.views()->teaching()->html().contains(QStringLiteral("[B, H, Tq, dK]")));
}

// Edits of the key side keep a separate value input usable: one value row per key, Wv's rows
// following the value width (not d_kv), and no value input left behind in self-attention.
void TestBatchBar::valueInputFollowsKeyEdits()
{
    auto project = readProjectFile(
        test::sourcePathStd(QStringLiteral("tests/fixtures/tutorial/seed004_mha_three_inputs/project.attnscope.json")));
    QVERIFY2(project.ok(), project.ok() ? "" : project.message().c_str());
    Project single = withSequenceShown(*project, 0);
    single.batch.reset(); // one sequence is enough here
    const InitOptions init;
    const Eigen::Index tk = single.problem.tk();
    Project p = edit::insertToken(single, TokenSide::Key, 1, QStringLiteral("new"), init);
    QCOMPARE(p.problem.xv->rows(), tk + 1);
    QVERIFY(validateProblem(p.problem).ok());
    p = edit::removeToken(p, TokenSide::Key, 0);
    QCOMPARE(p.problem.xv->rows(), tk);
    QVERIFY(validateProblem(p.problem).ok());
    p = edit::setInputDim(p, TokenSide::Key, 10, init);
    QCOMPARE(p.problem.weights.v.rows(), p.problem.xv->cols());
    const Status valid = validateProblem(p.problem);
    QVERIFY2(valid.ok(), valid.ok() ? "" : valid.message().c_str());
    p = edit::setMode(p, AttentionMode::Self, init);
    QVERIFY(!p.problem.xv);
    p = edit::setMode(p, AttentionMode::Cross, init);
    QVERIFY(validateProblem(p.problem).ok());
    QVERIFY(CpuBackend().compute(p.problem).ok());
}

QTEST_MAIN(TestBatchBar)
#include "tst_batchbar.moc"
