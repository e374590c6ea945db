// The built-in translation example (resources/models/tiny-marian-en-zh) in a real window under
// Xvfb, in the interface's language (CTest runs it once in English and once with
// LANG=zh_CN.UTF-8): a sentence translated greedily, its cross-attention in the views, and the
// Alignment dock (the guided head of layer 2 on a sentence whose words move, then a head that
// learnt by itself, shifted by one step, with </s> hidden); captured from the screen into the build
// tree (screenshots/en-translation-*.png, screenshots/zh_CN-translation-*.png).

#include "app/gui/document/ExampleModel.h"
#include "app/gui/sources/TranslationSource.h"
#include "app/gui/views/AlignmentView.h"
#include "app/gui/views/Language.h"
#include "app/gui/views/MainWindow.h"

#include "../common/TestUtil.h"
#include "../common/WindowTestUtil.h"

#include <QCheckBox>
#include <QDir>
#include <QDockWidget>
#include <QGuiApplication>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QScreen>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>

using namespace attnscope;

namespace {

QString shotPath(const QString &name)
{
    const QString prefix = QLocale().language() == QLocale::Chinese ? QStringLiteral("zh_CN-") : QStringLiteral("en-");
    return QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/") + prefix + name;
}

} // namespace

class TestScreenshotsTranslation : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        if (QGuiApplication::platformName() == QLatin1String("offscreen") ||
            QGuiApplication::platformName() == QLatin1String("minimal"))
            QSKIP("needs a real display (run under xvfb-run)");
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("AttnScopeTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_screenshots_translation"));
        QSettings().clear();
        QSettings().setValue(QStringLiteral("compute/backend"), int(BackendRequest::Cpu));
        qunsetenv("ATTNSCOPE_EXAMPLE_MODEL_MARIAN");
        QVERIFY(QDir().mkpath(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR)));
        // main()'s call: the system's language (LANG, set by CTest) with no override. English needs
        // no catalogue; Chinese must find its own.
        const QLocale locale = interfaceLocale(languageSetting());
        const bool installed = installTranslators(locale);
        QVERIFY(installed || locale.language() != QLocale::Chinese);
        QLocale::setDefault(locale);
    }

    void exampleTranslationAndAlignment()
    {
        QVERIFY2(!exampleModelDir(ExampleModelId::TinyMarianEnZh).isEmpty(), "the translation example is missing");
        MainWindow w;
        w.resize(1500, 950);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QSignalSpy opened(&w, &MainWindow::attentionOpened);
        QVERIFY(w.openExampleModel(ExampleModelId::TinyMarianEnZh));
        QVERIFY(opened.wait(60000));
        auto *source = qobject_cast<TranslationSource *>(w.source());
        QVERIFY(source);
        const bool chinese = QLocale().language() == QLocale::Chinese;
        QCOMPARE(w.menuBar()->actions().value(0)->text(),
                 chinese ? QStringLiteral("\u6587\u4ef6(&F)") : QStringLiteral("&File")); // 文件(&F)

        // A newly opened translation model reads this sentence first.
        QCOMPARE(source->sourceEdit()->text(), QString::fromUtf8(kSentence));
        QVERIFY(source->jobs()->waitForIdle(60000));
        QCoreApplication::processEvents();
        // The model translates the sentence as its README says.
        QCOMPARE(source->translationLabel()->text(),
                 (chinese ? QStringLiteral("译文：%1") : QStringLiteral("Translation: %1"))
                     .arg(QString::fromUtf8(kTranslation)));
        AlignmentView *alignment = source->alignmentView();
        const int rows = int(source->translation().run->targetLength());
        QCOMPARE(alignment->rows(), rows);
        QTRY_VERIFY_WITH_TIMEOUT(w.shownAttention().weights() && w.shownAttention().set.queries() == rows, 30000);
        QVERIFY(test::waitForRepaint(&w));
        QVERIFY(w.screen()->grabWindow(w.winId()).save(shotPath(QStringLiteral("translation-window.png"))));

        // A sentence whose time and place move before the verb in Chinese: the lines cross. Layer
        // 2 head 0 (trained towards the alignment, the README says) links each token's own row to
        // its English word: 公 and 园 to "park".
        QSignalSpy shown(source, &TranslationSource::translationShown);
        source->sourceEdit()->setText(QString::fromUtf8(kReordered));
        QVERIFY(shown.wait(60000));
        QVERIFY(source->jobs()->waitForIdle(60000));
        QCoreApplication::processEvents();
        QCOMPARE(source->translationLabel()->text(),
                 (chinese ? QStringLiteral("译文：%1") : QStringLiteral("Translation: %1"))
                     .arg(QString::fromUtf8(kReorderedTranslation)));
        const TranslationRun &run = *source->translation().run;
        const auto park = std::find(run.source.tokens.begin(), run.source.tokens.end(), std::string("\u2581park"));
        const auto gong = std::find(run.target.tokens.begin(), run.target.tokens.end(), std::string("\u516c")); // 公
        QVERIFY(park != run.source.tokens.end() && gong != run.target.tokens.end());
        const MatrixF guided = source->translation().sets[std::size_t(TranslationAttention::Cross)].map(0, 2, 0);
        Eigen::Index strongest = -1;
        guided.row(gong - run.target.tokens.begin()).maxCoeff(&strongest);
        QCOMPARE(strongest, Eigen::Index(park - run.source.tokens.begin()));
        w.setSource()->setLayer(2);
        alignment->setHead(0);
        // The views read the layer on a worker: shot once they show layer 2 of this sentence.
        const auto showsLayer = [&](int layer) {
            const ShownAttention &shown = w.shownAttention();
            return shown.layer == layer && shown.weights() && shown.set.keys() == run.sourceLength() &&
                   shown.set.queries() == run.targetLength();
        };
        QTRY_VERIFY_WITH_TIMEOUT(showsLayer(2), 30000);
        alignment->findChild<QCheckBox *>(QStringLiteral("alignmentHideEos"))->setChecked(true);
        QCOMPARE(alignment->rows(), int(run.targetLength()));
        QVERIFY(test::waitForRepaint(&w));
        QVERIFY(w.screen()->grabWindow(w.winId()).save(shotPath(QStringLiteral("translation-alignment.png"))));
        auto *dock = w.findChild<QDockWidget *>(QStringLiteral("alignmentDock"));
        QVERIFY(dock && dock->isVisible());
        QVERIFY(dock->grab().save(shotPath(QStringLiteral("translation-alignment-dock.png"))));
        // A head that learnt by itself links the row that predicts a token: shifted by one step.
        alignment->setHead(3);
        alignment->findChild<QCheckBox *>(QStringLiteral("alignmentShift"))->setChecked(true);
        QCOMPARE(alignment->rows(), int(run.targetLength()) - 1);
        QVERIFY(test::waitForRepaint(&w));
        QVERIFY(dock->grab().save(shotPath(QStringLiteral("translation-alignment-shifted.png"))));
    }

private:
    static constexpr const char *kSentence = "I have three red apples.";
    static constexpr const char *kTranslation = "我有三个红苹果。";
    static constexpr const char *kReordered = "We play football in the park on Saturday.";
    static constexpr const char *kReorderedTranslation = "我们星期六在公园踢足球。";
};

QTEST_MAIN(TestScreenshotsTranslation)
#include "tst_screenshots_translation.moc"
