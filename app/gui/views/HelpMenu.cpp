#include "app/gui/views/HelpMenu.h"

#include <QAction>
#include <QApplication>
#include <QDialogButtonBox>
#include <QFile>
#include <QHeaderView>
#include <QIcon>
#include <QLabel>
#include <QLocale>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QRegularExpression>
#include <QSet>
#include <QTableWidget>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace attnscope {

namespace {

QString plainText(const QString &menuText)
{
    QString t = menuText;
    t.remove(QRegularExpression(QStringLiteral("&(?!&)")));
    t.replace(QStringLiteral("&&"), QStringLiteral("&"));
    if (t.endsWith(QChar(0x2026)))
        t.chop(1);
    return t;
}

QString keysText(const QAction *a)
{
    QStringList keys;
    for (const QKeySequence &k : a->shortcuts())
        if (!k.isEmpty())
            keys << k.toString(QKeySequence::NativeText);
    return keys.join(QStringLiteral(", "));
}

void collectMenu(const QMenu *menu, const QString &path, QList<ShortcutEntry> &out, QSet<const QAction *> &seen)
{
    for (QAction *a : menu->actions()) {
        if (a->isSeparator() || seen.contains(a))
            continue;
        seen.insert(a);
        if (QMenu *sub = a->menu()) {
            collectMenu(sub, path + QStringLiteral(" \u25b8 ") + plainText(sub->title()), out, seen);
            continue;
        }
        if (const QString keys = keysText(a); !keys.isEmpty())
            out.push_back({path, plainText(a->text()), keys});
    }
}

QDialog *dialogWithClose(QWidget *parent, const QString &title, QWidget *content)
{
    auto *d = new QDialog(parent);
    d->setAttribute(Qt::WA_DeleteOnClose);
    d->setWindowTitle(title);
    auto *layout = new QVBoxLayout(d);
    layout->addWidget(content);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    QObject::connect(buttons, &QDialogButtonBox::rejected, d, &QDialog::reject);
    layout->addWidget(buttons);
    return d;
}

} // namespace

QList<ShortcutEntry> collectShortcuts(QWidget *window)
{
    QList<ShortcutEntry> out;
    QSet<const QAction *> seen;
    if (auto *main = qobject_cast<QMainWindow *>(window))
        for (QAction *top : main->menuBar()->actions())
            if (QMenu *menu = top->menu())
                collectMenu(menu, plainText(menu->title()), out, seen);
    // Actions with keys that are in no menu (added to the window itself).
    for (QAction *a : window->actions())
        if (!seen.contains(a))
            if (const QString keys = keysText(a); !keys.isEmpty())
                out.push_back({QString(), plainText(a->text()), keys});
    return out;
}

AboutDialog::AboutDialog(const QString &backend, QWidget *parent) : QDialog(parent)
{
    setWindowTitle(tr("About AttnScope"));
    m_text = tr("<h3>AttnScope %1</h3>"
                "<p>See every attention head: scaled dot-product attention computed for problems you "
                "type in or load, shown as heatmaps.</p>"
                "<p>Built with Qt %2, running on Qt %3.<br>%4</p>"
                "<p>Licence: none stated yet (the source has no licence file).</p>")
                 .arg(QStringLiteral(ATTNSCOPE_VERSION), QStringLiteral(QT_VERSION_STR),
                      QString::fromLatin1(qVersion()), backend.toHtmlEscaped());
    auto *layout = new QVBoxLayout(this);
    auto *icon = new QLabel;
    icon->setPixmap(QIcon(QStringLiteral(":/icons/attnscope.svg")).pixmap(64, 64));
    auto *label = new QLabel;
    label->setTextFormat(Qt::RichText); // its one outside text, the backend's name, is escaped above
    label->setText(m_text);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    label->setWordWrap(true);
    layout->addWidget(icon);
    layout->addWidget(label);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
}

QDialog *createShortcutsDialog(QWidget *window)
{
    const QList<ShortcutEntry> rows = collectShortcuts(window);
    auto *table = new QTableWidget(int(rows.size()), 3);
    table->setObjectName(QStringLiteral("ShortcutsTable"));
    table->setHorizontalHeaderLabels({AboutDialog::tr("Menu"), AboutDialog::tr("Action"), AboutDialog::tr("Shortcut")});
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->verticalHeader()->hide();
    for (int r = 0; r < rows.size(); ++r) {
        table->setItem(r, 0, new QTableWidgetItem(rows[r].menu));
        table->setItem(r, 1, new QTableWidgetItem(rows[r].action));
        table->setItem(r, 2, new QTableWidgetItem(rows[r].keys));
    }
    table->resizeColumnsToContents();
    table->horizontalHeader()->setStretchLastSection(true);
    QDialog *d = dialogWithClose(window, AboutDialog::tr("Keyboard Shortcuts"), table);
    d->resize(520, 420);
    return d;
}

QDialog *createGuideDialog(QWidget *parent)
{
    auto *browser = new QTextBrowser;
    browser->setObjectName(QStringLiteral("GuideBrowser"));
    browser->setOpenExternalLinks(false); // offline: nothing leaves the bundled pages
    browser->setSearchPaths({QStringLiteral(":/guide")});
    const QString localized = QStringLiteral("guide_%1.html").arg(QLocale().name().section(QLatin1Char('_'), 0, 0));
    browser->setSource(
        QUrl(QStringLiteral("qrc:/guide/") +
             (QFile::exists(QStringLiteral(":/guide/") + localized) ? localized : QStringLiteral("guide.html"))));
    QDialog *d = dialogWithClose(parent, AboutDialog::tr("AttnScope Guide"), browser);
    d->resize(640, 720);
    return d;
}

void fillHelpMenu(QMenu *help, QWidget *window, std::function<QString()> backend)
{
    QAction *guide =
        help->addAction(AboutDialog::tr("AttnScope &Guide"), window, [window] { createGuideDialog(window)->show(); });
    guide->setShortcut(QKeySequence::HelpContents);
    help->addAction(AboutDialog::tr("&Keyboard Shortcuts"), window,
                    [window] { createShortcutsDialog(window)->show(); });
    help->addSeparator();
    help->addAction(AboutDialog::tr("&About AttnScope"), window, [window, backend] {
        auto *d = new AboutDialog(backend(), window);
        d->setAttribute(Qt::WA_DeleteOnClose);
        d->show();
    });
    help->addAction(AboutDialog::tr("About &Qt"), window, [] { QApplication::aboutQt(); });
}

} // namespace attnscope
