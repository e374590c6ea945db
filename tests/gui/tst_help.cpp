// The Help menu: the shortcuts list is generated from the window's actions (a new action shows
// up, every listed key is a real action's), the guide is the bundled page with its images, and
// About names the version, Qt and the backend. Real MainWindow, real dialogs (offscreen).

#include "app/gui/views/HelpMenu.h"
#include "app/gui/views/MainWindow.h"

#include <QAction>
#include <QFile>
#include <QImage>
#include <QMenuBar>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>

#include <cmath>

using namespace attnscope;

class TestHelp : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void helpMenuHasGuideShortcutsAbout();
    void shortcutsComeFromTheActions();
    void shortcutsDialogListsEveryRow();
    void guideIsBundledWithItsImages();
    void aboutNamesVersionQtAndBackend();
    void eachGuideHasFiguresInItsLanguage();
    void guideFiguresAreCurrent();
};

void TestHelp::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("AttnScopeTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_help"));
}

static QMenu *menuNamed(MainWindow &w, const QString &title)
{
    for (QAction *a : w.menuBar()->actions())
        if (a->menu() && a->menu()->title().remove(QLatin1Char('&')) == title)
            return a->menu();
    return nullptr;
}

void TestHelp::helpMenuHasGuideShortcutsAbout()
{
    MainWindow w;
    QMenu *help = menuNamed(w, QStringLiteral("Help"));
    QVERIFY(help);
    QStringList texts;
    for (QAction *a : help->actions())
        texts << a->text().remove(QLatin1Char('&'));
    for (const char *want : {"AttnScope Guide", "Keyboard Shortcuts", "About AttnScope"})
        QVERIFY2(texts.contains(QLatin1String(want)), qPrintable(texts.join(QLatin1Char('|'))));
}

void TestHelp::shortcutsComeFromTheActions()
{
    MainWindow w;
    const QString save = QKeySequence(QKeySequence::Save).toString(QKeySequence::NativeText);
    QList<ShortcutEntry> rows = collectShortcuts(&w);
    bool found = false;
    for (const ShortcutEntry &e : rows)
        found |= e.menu == QLatin1String("File") && e.action == QLatin1String("Save") && e.keys == save;
    QVERIFY2(found, "File > Save with its key is not listed");

    // Every listed key belongs to an action of the window with exactly that text.
    QSet<QString> real;
    for (QAction *a : w.findChildren<QAction *>())
        for (const QKeySequence &k : a->shortcuts())
            real.insert(k.toString(QKeySequence::NativeText));
    for (const ShortcutEntry &e : rows)
        for (const QString &k : e.keys.split(QStringLiteral(", ")))
            QVERIFY2(real.contains(k), qPrintable(k));

    // An action added now is listed too, under its submenu's path.
    QMenu *sub = menuNamed(w, QStringLiteral("View"))->addMenu(QStringLiteral("&Extra"));
    sub->addAction(QStringLiteral("&Zap\u2026"))->setShortcut(QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_Z));
    rows = collectShortcuts(&w);
    const auto zap = std::find_if(rows.cbegin(), rows.cend(),
                                  [](const ShortcutEntry &e) { return e.action == QLatin1String("Zap"); });
    QVERIFY(zap != rows.cend());
    QCOMPARE(zap->menu, QStringLiteral("View \u25b8 Extra"));
    QCOMPARE(zap->keys, QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_Z).toString(QKeySequence::NativeText));
}

void TestHelp::shortcutsDialogListsEveryRow()
{
    MainWindow w;
    QDialog *d = createShortcutsDialog(&w);
    auto *table = d->findChild<QTableWidget *>(QStringLiteral("ShortcutsTable"));
    QVERIFY(table);
    const QList<ShortcutEntry> rows = collectShortcuts(&w);
    QVERIFY(rows.size() >= 5); // new, open, save, save as, quit, undo, redo, ...
    QCOMPARE(table->rowCount(), int(rows.size()));
    for (int r = 0; r < table->rowCount(); ++r)
        QCOMPARE(table->item(r, 2)->text(), rows[r].keys);
    delete d;
}

void TestHelp::guideIsBundledWithItsImages()
{
    QDialog *d = createGuideDialog(nullptr);
    auto *browser = d->findChild<QTextBrowser *>(QStringLiteral("GuideBrowser"));
    QVERIFY(browser);
    QCOMPARE(browser->source().scheme(), QStringLiteral("qrc"));
    const QString html = browser->toHtml();
    QVERIFY2(browser->toPlainText().contains(QLatin1String("AttnScope")), qPrintable(browser->toPlainText()));
    // Every picture the page names loads from the bundle, none from the network.
    static const QRegularExpression img(QStringLiteral("<img src=\"([^\"]+)\""));
    int images = 0;
    for (auto it = img.globalMatch(html); it.hasNext();) {
        const QString src = it.next().captured(1);
        QVERIFY2(!src.contains(QLatin1String("://")) || src.startsWith(QLatin1String("qrc:")), qPrintable(src));
        const QVariant res = browser->loadResource(QTextDocument::ImageResource, QUrl(src));
        QImage image = res.value<QImage>();
        if (image.isNull())
            image = QImage::fromData(res.toByteArray());
        QVERIFY2(!image.isNull() && image.width() > 100, qPrintable(src));
        ++images;
    }
    QVERIFY2(images >= 2, qPrintable(html.left(400)));
    delete d;
}

namespace {

QStringList imagesOf(const QString &page)
{
    QFile f(QStringLiteral(ATTNSCOPE_SOURCE_DIR "/resources/guide/") + page);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    static const QRegularExpression img(QStringLiteral("<img src=\"([^\"]+)\""));
    QStringList out;
    for (auto it = img.globalMatch(QString::fromUtf8(f.readAll())); it.hasNext();)
        out << it.next().captured(1);
    return out;
}

// Mean absolute difference of two images' channels, 0 to 255; -1 when their sizes differ.
double meanDifference(const QImage &a, const QImage &b)
{
    if (a.size() != b.size())
        return -1;
    const QImage x = a.convertToFormat(QImage::Format_RGBA8888), y = b.convertToFormat(QImage::Format_RGBA8888);
    double sum = 0;
    for (int row = 0; row < x.height(); ++row) {
        const uchar *p = x.constScanLine(row), *q = y.constScanLine(row);
        for (int i = 0; i < x.width() * 4; ++i)
            sum += std::abs(int(p[i]) - int(q[i]));
    }
    return sum / (double(x.width()) * x.height() * 4);
}

} // namespace

void TestHelp::eachGuideHasFiguresInItsLanguage()
{
    // The Chinese guide showed the English pictures ("Head 1 / Head 2"): each page has its own.
    const QStringList english = imagesOf(QStringLiteral("guide.html"));
    const QStringList chinese = imagesOf(QStringLiteral("guide_zh.html"));
    QCOMPARE(english, (QStringList{"head.png", "heads.png", "mask.png", "gqa.png", "rope.png", "window.png", "sink.png",
                                   "softcap.png"}));
    QCOMPARE(chinese, (QStringList{"head_zh.png", "heads_zh.png", "mask_zh.png", "gqa_zh.png", "rope_zh.png",
                                   "window_zh.png", "sink_zh.png", "softcap_zh.png"}));
}

void TestHelp::guideFiguresAreCurrent()
{
    // The figures are drawn again by the script that made them: the committed ones must be what
    // the renderer draws today (the old ones numbered heads from 1), in their language.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QProcess script;
    script.start(QStringLiteral("bash"), {QStringLiteral(ATTNSCOPE_SOURCE_DIR "/scripts/make-guide-figures.sh"),
                                          QStringLiteral(ATTNSCOPE_CLI), dir.path()});
    QVERIFY(script.waitForFinished(120000));
    QVERIFY2(script.exitCode() == 0, script.readAllStandardError().constData());
    for (const char *name : {"head", "heads", "mask", "gqa", "rope", "window", "sink", "softcap"})
        for (const char *suffix : {"", "_zh"}) {
            const QString file = QString::fromLatin1(name) + QLatin1String(suffix) + QStringLiteral(".png");
            const QImage drawn(dir.filePath(file));
            const QImage committed(QStringLiteral(ATTNSCOPE_SOURCE_DIR "/resources/guide/") + file);
            QVERIFY2(!drawn.isNull() && !committed.isNull(), qPrintable(file));
            const double difference = meanDifference(drawn, committed);
            QVERIFY2(difference >= 0 && difference < 1.0,
                     qPrintable(QStringLiteral("%1 is stale (mean difference %2): run scripts/make-guide-figures.sh")
                                    .arg(file)
                                    .arg(difference)));
        }
    // The languages differ: the Chinese figures are not the English ones.
    const double languages = meanDifference(QImage(dir.filePath(QStringLiteral("heads.png"))),
                                            QImage(dir.filePath(QStringLiteral("heads_zh.png"))));
    QVERIFY(languages != 0);
}

void TestHelp::aboutNamesVersionQtAndBackend()
{
    const AboutDialog about(QStringLiteral("Backend: CPU \u2014 Eigen 3.4.0"));
    const QString text = about.text();
    QVERIFY2(text.contains(QStringLiteral(ATTNSCOPE_VERSION)), qPrintable(text));
    QVERIFY2(text.contains(QString::fromLatin1(qVersion())), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("Eigen 3.4.0")), qPrintable(text));
}

QTEST_MAIN(TestHelp)
#include "tst_help.moc"
