// Translation models in the window (issue 27), on the random-weight Marian folders of
// tests/fixtures/marian: opening one translates the source text as typed, teacher-forces a typed
// target and shows the model's greedy translation otherwise; the views show the cross-attention,
// the encoder's or the decoder's self-attention, equal to the float64 reference; a newer text
// supersedes an older one; the alignment dock draws the cross-attention of the decoder layer in
// view; a cross-attention head opens in the editor as a cross-attention project that computes the
// same map.

#include "app/gui/sources/TranslationSource.h"
#include "app/gui/views/AlignmentView.h"
#include "app/gui/views/MainWindow.h"
#include "core/formats/Npy.h"

#include "../common/TestUtil.h"
#include "../common/TranslationFixtures.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace attnscope;

namespace {

// Opens a fixture folder in w and waits for its first translation; the source in front.
TranslationSource *openTranslation(MainWindow &w, const QString &folder)
{
    QSignalSpy opened(&w, &MainWindow::attentionOpened);
    if (!w.openModel(test::translationFixture(folder)) || !opened.wait(60000))
        return nullptr;
    return qobject_cast<TranslationSource *>(w.source());
}

// Types source and target into the boxes and waits until the translation of both is shown.
bool translate(TranslationSource *source, const QString &text, const QString &target)
{
    QSignalSpy shown(source, &TranslationSource::translationShown);
    source->targetEdit()->setText(target);
    source->sourceEdit()->setText(text);
    return QTest::qWaitFor(
        [&] {
            return !shown.isEmpty() && source->jobs()->waitForIdle(0) && source->translation().run &&
                   source->translation().greedy == target.isEmpty();
        },
        60000);
}

// The largest difference between a kind's set (every layer and head) and the reference's tensor.
double differenceFromReference(const AttentionSet &set, const QString &folder, const QString &caseName,
                               const char *tensor)
{
    auto expected =
        readNpyFile((test::translationFixture(folder) + "/" + caseName + "." + tensor + ".npy").toStdString());
    if (!expected || expected->shape.size() != 4 || expected->shape[0] != set.layers() ||
        expected->shape[1] != set.heads() || expected->shape[2] != set.queries() || expected->shape[3] != set.keys())
        return 1e9;
    double worst = 0;
    std::size_t at = 0;
    for (int l = 0; l < set.layers(); ++l)
        for (int h = 0; h < set.heads(); ++h) {
            const MatrixF m = set.map(0, l, h);
            for (Eigen::Index i = 0; i < m.rows(); ++i)
                for (Eigen::Index j = 0; j < m.cols(); ++j)
                    worst = std::max(worst, std::abs(double(m(i, j)) - expected->data[at++]));
        }
    return worst;
}

} // namespace

class TestTranslationWindow : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("AttnScopeTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_translationwindow"));
        QSettings().clear();
        QSettings().setValue(QStringLiteral("compute/backend"), int(BackendRequest::Cpu));
    }

    void teacherForcedAndGreedyEqualTheReference()
    {
        MainWindow w;
        w.resize(1400, 900);
        w.show();
        TranslationSource *source = openTranslation(w, "marian-f32");
        QVERIFY(source);
        auto *dock = w.findChild<QDockWidget *>(QStringLiteral("alignmentDock"));
        QVERIFY(dock && dock->isVisible());
        QVERIFY(source->sourceEdit()->isVisible() && source->targetEdit()->isVisible());
        for (const test::TranslationCase &c : test::readTranslationCases("marian-f32")) {
            QVERIFY(translate(source, c.source, c.target.value_or(QString())));
            const Translation &t = source->translation();
            QCOMPARE(t.run->source.ids, c.sourceIds);
            QCOMPARE(t.run->target.ids, c.targetIds);
            QCOMPARE(source->translationLabel()->text().isEmpty(), c.target.has_value());
            const struct {
                TranslationAttention kind;
                const char *tensor;
            } kinds[] = {{TranslationAttention::Cross, "cross_attentions"},
                         {TranslationAttention::Encoder, "encoder_attentions"},
                         {TranslationAttention::Decoder, "decoder_attentions"}};
            for (const auto &k : kinds)
                QVERIFY2(differenceFromReference(t.sets[std::size_t(k.kind)], "marian-f32", c.name, k.tensor) < 1e-4,
                         qPrintable(c.name + " " + k.tensor));
        }
    }

    // The views show the kind chosen: the cross-attention first (target by source), then the
    // encoder's (source by source) and the decoder's (target by target).
    void viewsShowTheKindChosen()
    {
        MainWindow w;
        w.resize(1400, 900);
        w.show();
        TranslationSource *source = openTranslation(w, "marian-f16");
        QVERIFY(source);
        const test::TranslationCase c = test::readTranslationCases("marian-f16").front();
        QVERIFY(translate(source, c.source, *c.target));
        const std::int64_t s = std::int64_t(c.sourceIds.size()), t = std::int64_t(c.targetIds.size());
        const auto shape = [&] {
            const ShownAttention &shown = w.shownAttention();
            return std::pair{shown.set.isEmpty() ? std::int64_t(-1) : shown.set.queries(),
                             shown.set.isEmpty() ? std::int64_t(-1) : shown.set.keys()};
        };
        QCOMPARE(source->kind(), TranslationAttention::Cross);
        QTRY_COMPARE_WITH_TIMEOUT(shape(), (std::pair{t, s}), 30000);
        auto *combo = w.findChild<QComboBox *>(QStringLiteral("translationAttention"));
        QVERIFY(combo);
        combo->setCurrentIndex(combo->findData(int(TranslationAttention::Encoder)));
        QTRY_COMPARE_WITH_TIMEOUT(shape(), (std::pair{s, s}), 30000);
        QCOMPARE(w.setSource()->attention()->set.layers(), 3); // the encoder's layers
        combo->setCurrentIndex(combo->findData(int(TranslationAttention::Decoder)));
        QTRY_COMPARE_WITH_TIMEOUT(shape(), (std::pair{t, t}), 30000);
        QCOMPARE(w.setSource()->attention()->set.layers(), 1);
    }

    // Typing quickly: only the last text's translation is shown, whatever finished first.
    void newerTextSupersedesOlder()
    {
        MainWindow w;
        TranslationSource *source = openTranslation(w, "marian-f32");
        QVERIFY(source);
        QSignalSpy shown(source, &TranslationSource::translationShown);
        const QStringList texts = {QStringLiteral("the"), QStringLiteral("the cat"), QStringLiteral("the cat reads"),
                                   QStringLiteral("the cat reads a book.")};
        for (const QString &text : texts)
            source->sourceEdit()->setText(text);
        QVERIFY(source->jobs()->waitForIdle(60000));
        QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), 30000);
        auto last = source->jobs()->model()->encodeSource(texts.back().toStdString());
        QVERIFY(last);
        QCOMPARE(source->translation().run->source.ids, last->ids);
    }

    // The dock draws the cross-attention of the decoder layer in view, with a row per decoder
    // position (one fewer shifted by one step).
    void alignmentFollowsTheTranslation()
    {
        MainWindow w;
        w.resize(1400, 900);
        w.show();
        TranslationSource *source = openTranslation(w, "marian-f32");
        QVERIFY(source);
        const test::TranslationCase c = test::readTranslationCases("marian-f32").front();
        QVERIFY(translate(source, c.source, *c.target));
        AlignmentView *view = source->alignmentView();
        QCOMPARE(view->rows(), int(c.targetIds.size()));
        auto *shift = view->findChild<QCheckBox *>(QStringLiteral("alignmentShift"));
        QVERIFY(shift);
        shift->setChecked(true);
        QCOMPARE(view->rows(), int(c.targetIds.size()) - 1);
        auto *head = view->findChild<QComboBox *>(QStringLiteral("alignmentHead"));
        QVERIFY(head);
        QCOMPARE(head->count(), 2 + 1); // the mean, then each of the decoder's 2 heads
    }

    // Open This Head in the Editor on a cross-attention head: a cross-attention project with the
    // decoder's queries and the encoder's keys and values, whose computed map is the run's.
    void crossHeadOpensInTheEditor()
    {
        MainWindow w;
        w.resize(1400, 900);
        w.show();
        TranslationSource *source = openTranslation(w, "marian-f32");
        QVERIFY(source);
        const test::TranslationCase c = test::readTranslationCases("marian-f32").front();
        QVERIFY(translate(source, c.source, *c.target));
        const TranslationRunPtr run = source->translation().run;
        const AttentionSet cross = source->translation().sets[std::size_t(TranslationAttention::Cross)];
        const int layer = 1, head = 1;
        QSignalSpy computed(&w, &MainWindow::resultShown);
        QVERIFY(w.openHeadInEditor(layer, head));
        QVERIFY(computed.wait(30000));
        const auto result = w.currentResult();
        QCOMPARE(result->project.problem.spec.mode, AttentionMode::Cross);
        QCOMPARE(result->project.queryTokens.size(), c.targetIds.size());
        QCOMPARE(result->project.keyTokens.size(), c.sourceIds.size());
        QCOMPARE(result->trace.heads(), 1);
        const MatrixF expected = cross.map(0, layer, head);
        const MatrixF &got = result->trace.weights[0];
        QCOMPARE(got.rows(), expected.rows());
        QCOMPARE(got.cols(), expected.cols());
        QVERIFY((got - expected).cwiseAbs().maxCoeff() < 1e-5f);
    }

    void brokenFolderChangesNothing()
    {
        MainWindow w;
        const Source *before = w.source();
        QTemporaryDir tmp;
        const QString dir = tmp.filePath("m");
        test::copyFolder(test::translationFixture("marian-f32"), dir);
        QVERIFY(QFile::remove(dir + "/target.spm"));
        QSignalSpy failed(&w, &MainWindow::openFailed);
        QVERIFY(w.openModel(dir));
        QVERIFY(failed.wait(30000));
        QCOMPARE(w.source(), before);
        QVERIFY2(w.lastError().contains("target.spm: no such file"), qPrintable(w.lastError()));
    }
};

QTEST_MAIN(TestTranslationWindow)
#include "tst_translationwindow.moc"
