// The Help menu: the shortcuts list is generated from the window's actions (a new action shows
// up, every listed key is a real action's), the guide is the bundled page with its images, and
// About names the version, Qt and the backend. Real MainWindow, real dialogs (offscreen).

#include "app/gui/views/HelpMenu.h"
#include "app/gui/views/MainWindow.h"

#include <QAction>
#include <QMenuBar>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTest>
#include <QTextBrowser>

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
