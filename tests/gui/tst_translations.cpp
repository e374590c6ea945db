// The Chinese interface: the catalogue is complete for the sources as they are now (lupdate is
// run over them into a temporary copy), placeholders and accelerators survive translation, the
// zh_CN catalogue and Qt's own load for a Chinese locale or the View > Language override, and
// core/'s error codes reach the user translated.

#include "../common/VulkanFaults.h"

#include "app/engine/BackendChoice.h"
#include "app/gui/views/HelpMenu.h"
#include "app/gui/views/Language.h"
#include "app/gui/views/MainWindow.h"
#include "app/render/ErrorText.h"
#include "app/render/FigureExporter.h"
#include "core/ErrorCode.h"
#include "core/formats/AttentionFile.h"
#include "core/formats/ProjectFile.h"
#include "core/io/MemoryLimits.h"

#include <QDialogButtonBox>
#include <QDirIterator>
#include <QMenuBar>
#include <QMessageBox>
#include <QProcess>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QUndoStack>
#include <QXmlStreamReader>

#include <fstream>

using namespace attnscope;

namespace {

const QString kCatalogue = QStringLiteral(ATTNSCOPE_SOURCE_DIR "/resources/translations/attnscope_zh_CN.ts");

struct Message {
    QString context;
    QString source;
    QStringList translations; // one per numerus form, or one
    bool unfinished = false;
    bool stale = false; // vanished or obsolete: no longer in the sources
    QString where() const { return context + QStringLiteral(" | \"") + source + QLatin1Char('"'); }
};

QList<Message> readCatalogue(const QString &path, QString *error)
{
    QList<Message> out;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = path + QStringLiteral(": ") + file.errorString();
        return out;
    }
    QXmlStreamReader xml(&file);
    QString context;
    while (!xml.atEnd()) {
        xml.readNext();
        if (!xml.isStartElement())
            continue;
        if (xml.name() == QLatin1String("name")) {
            context = xml.readElementText();
        } else if (xml.name() == QLatin1String("message")) {
            Message m;
            m.context = context;
            while (!(xml.isEndElement() && xml.name() == QLatin1String("message")) && !xml.atEnd()) {
                xml.readNext();
                if (!xml.isStartElement())
                    continue;
                if (xml.name() == QLatin1String("source")) {
                    m.source = xml.readElementText();
                } else if (xml.name() == QLatin1String("translation")) {
                    const QString type = xml.attributes().value(QLatin1String("type")).toString();
                    m.unfinished = type == QLatin1String("unfinished");
                    m.stale = type == QLatin1String("vanished") || type == QLatin1String("obsolete");
                    // Plain text, or <numerusform> children.
                    QString text;
                    while (!(xml.isEndElement() && xml.name() == QLatin1String("translation")) && !xml.atEnd()) {
                        xml.readNext();
                        if (xml.isCharacters())
                            text += xml.text();
                        else if (xml.isStartElement() && xml.name() == QLatin1String("numerusform"))
                            m.translations << xml.readElementText();
                    }
                    if (m.translations.isEmpty())
                        m.translations << text;
                }
            }
            out << m;
        }
    }
    if (xml.hasError())
        *error = path + QStringLiteral(": ") + xml.errorString();
    return out;
}

// %1..%99 and %n, sorted, as a placeholder signature.
QStringList placeholders(const QString &text)
{
    static const QRegularExpression re(QStringLiteral("%(\\d{1,2}|n)"));
    QStringList out;
    for (auto it = re.globalMatch(text); it.hasNext();)
        out << it.next().captured(0);
    out.sort();
    return out;
}

// Keyboard accelerators: "&F", not "&&" (a literal ampersand).
int accelerators(const QString &text)
{
    int n = 0;
    for (qsizetype i = 0; i + 1 < text.size(); ++i) {
        if (text[i] != QLatin1Char('&'))
            continue;
        if (text[i + 1] == QLatin1Char('&')) {
            ++i;
            continue;
        }
        if (text[i + 1].isLetterOrNumber())
            ++n;
    }
    return n;
}

QString menuTitle(MainWindow &w, int index)
{
    const QList<QAction *> menus = w.menuBar()->actions();
    return index < menus.size() ? menus[index]->text() : QString();
}

// Three English words in a row: core's English prose left inside a translated message.
bool hasEnglishProse(const QString &text)
{
    static const QRegularExpression prose(QStringLiteral("\\b[a-z]{2,} [a-z]{2,} [a-z]{2,}\\b"));
    return text.contains(prose);
}
} // namespace

class TestTranslations : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanup();
    void catalogueCoversTheSources();
    void placeholdersAndAcceleratorsMatch();
    void trEscapesReadAsTheCompilerDoes();
    void chineseLocaleTranslatesTheWindowAndQt();
    void overrideWinsOverTheSystem();
    void languageMenuSavesTheChoice();
    void chineseRowAxisTitleStandsUpright();
    void coreErrorsTranslate_data();
    void coreErrorsTranslate();
    void fileAndBackendErrorsTranslate_data();
    void fileAndBackendErrorsTranslate();
    void unknownCodeShowsTheEnglishMessage();
    void coreAndAppTemplatesAgree();
};

void TestTranslations::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("AttnScopeTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_translations"));
    QSettings().clear();
    QSettings().setValue(QStringLiteral("compute/backend"), int(BackendRequest::Cpu));
}

void TestTranslations::cleanup()
{
    installTranslators(QLocale(QLocale::English, QLocale::UnitedStates));
    setLanguageSetting(QString());
}

void TestTranslations::catalogueCoversTheSources()
{
    // lupdate over the sources into a copy: what a developer's scripts/update-translations.sh would
    // write. A new tr() string comes in unfinished; a changed or removed one leaves the
    // checked-in catalogue with an entry lupdate no longer finds.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString fresh = dir.filePath(QStringLiteral("attnscope_zh_CN.ts"));
    QProcess lupdate;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("LUPDATE"), QStringLiteral(ATTNSCOPE_LUPDATE));
    lupdate.setProcessEnvironment(env);
    lupdate.start(QStringLiteral(ATTNSCOPE_SOURCE_DIR "/scripts/update-translations.sh"), {fresh});
    QVERIFY(lupdate.waitForFinished(120000));
    QVERIFY2(lupdate.exitCode() == 0, lupdate.readAllStandardError().constData());

    QString error;
    const QList<Message> now = readCatalogue(fresh, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const QList<Message> checkedIn = readCatalogue(kCatalogue, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QVERIFY(now.size() > 300);

    QStringList problems;
    QSet<QString> current;
    for (const Message &m : now) {
        current.insert(m.where());
        const bool empty = std::all_of(m.translations.begin(), m.translations.end(),
                                       [](const QString &t) { return t.trimmed().isEmpty(); });
        if (m.unfinished || empty)
            problems << QStringLiteral("untranslated: ") + m.where();
    }
    for (const Message &m : checkedIn)
        if (m.stale || !current.contains(m.where()))
            problems << QStringLiteral("no longer in the sources: ") + m.where();
    if (!problems.isEmpty())
        QFAIL(qPrintable(QStringLiteral("resources/translations/attnscope_zh_CN.ts does not match the sources. Run "
                                        "scripts/update-translations.sh, then translate (Qt Linguist, or the "
                                        "<translation> elements) each of these (context | source):\n  ") +
                         problems.join(QStringLiteral("\n  "))));
}

void TestTranslations::placeholdersAndAcceleratorsMatch()
{
    QString error;
    const QList<Message> messages = readCatalogue(kCatalogue, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QStringList problems;
    for (const Message &m : messages) {
        for (const QString &t : m.translations) {
            if (t.isEmpty())
                continue; // reported by catalogueCoversTheSources
            if (placeholders(t) != placeholders(m.source))
                problems << QStringLiteral("placeholders %1 vs %2: %3 -> \"%4\"")
                                .arg(placeholders(m.source).join(QLatin1Char(',')),
                                     placeholders(t).join(QLatin1Char(',')), m.where(), t);
            if (accelerators(t) != accelerators(m.source))
                problems << QStringLiteral("accelerator lost or added: %1 -> \"%2\"").arg(m.where(), t);
        }
    }
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QLatin1Char('\n'))));
}

void TestTranslations::trEscapesReadAsTheCompilerDoes()
{
    // lupdate 6.4 reads "\u00b7dK" as U+0B7D followed by "K" (it takes more than four hex
    // digits), so the catalogue's key never matches the compiled string and the text stays
    // English. Such a literal must be split: "\u00b7" "dK".
    static const QRegularExpression bad(QStringLiteral("\\\\u[0-9a-fA-F]{4}[0-9a-fA-F]"));
    QStringList found;
    for (const QString &folder : {QStringLiteral("app/gui"), QStringLiteral("app/render")}) {
        QDirIterator it(QStringLiteral(ATTNSCOPE_SOURCE_DIR "/") + folder,
                        {QStringLiteral("*.cpp"), QStringLiteral("*.h")}, QDir::Files, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            QFile f(it.next());
            QVERIFY(f.open(QIODevice::ReadOnly));
            int line = 0;
            while (!f.atEnd()) {
                const QString text = QString::fromUtf8(f.readLine());
                ++line;
                if (bad.match(text).hasMatch())
                    found << QStringLiteral("%1:%2: %3").arg(it.filePath()).arg(line).arg(text.trimmed());
            }
        }
    }
    QVERIFY2(found.isEmpty(), qPrintable(QStringLiteral("lupdate reads these \\u escapes with more than four hex "
                                                        "digits; write the character itself:\n") +
                                         found.join(QLatin1Char('\n'))));
}

void TestTranslations::chineseLocaleTranslatesTheWindowAndQt()
{
    // What main() does under LANG=zh_CN.UTF-8 with no override.
    const QLocale system(QStringLiteral("zh_CN"));
    QVERIFY(installTranslators(interfaceLocale(QString(), system)));
    {
        MainWindow w;
        QCOMPARE(menuTitle(w, 0), QStringLiteral("\u6587\u4ef6(&F)")); // 文件(&F)
        QCOMPARE(menuTitle(w, 1), QStringLiteral("\u7f16\u8f91(&E)")); // 编辑(&E)
        w.document()->undoStack()->setClean();
    }
    // Qt's own buttons: qtbase_zh_CN.qm from qt6-translations-l10n.
    QDialogButtonBox box(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    QCOMPARE(box.button(QDialogButtonBox::Cancel)->text(), QStringLiteral("\u53d6\u6d88")); // 取消
    // The guide in Chinese (guide_zh.html, chosen by the default locale installTranslators sets).
    {
        QDialog *guide = createGuideDialog(nullptr);
        auto *browser = guide->findChild<QTextBrowser *>(QStringLiteral("GuideBrowser"));
        QVERIFY(browser);
        QCOMPARE(browser->source().fileName(), QStringLiteral("guide_zh.html"));
        QVERIFY(browser->toPlainText().contains(
            QStringLiteral("\u7f29\u653e\u70b9\u79ef\u6ce8\u610f\u529b"))); // 缩放点积注意力
        delete guide;
    }
    // The teaching text and the figures' words.
    QCOMPARE(QCoreApplication::translate("attnscope::Heatmap", "query"), QStringLiteral("\u67e5\u8be2")); // 查询

    QVERIFY(!installTranslators(QLocale(QLocale::English, QLocale::UnitedStates)));
    MainWindow english;
    QCOMPARE(menuTitle(english, 0), QStringLiteral("&File"));
    english.document()->undoStack()->setClean();
}

void TestTranslations::overrideWinsOverTheSystem()
{
    const QLocale chinese(QStringLiteral("zh_CN")), english(QStringLiteral("en_US"));
    setLanguageSetting(QStringLiteral("en"));
    QCOMPARE(interfaceLocale(languageSetting(), chinese).language(), QLocale::English);
    setLanguageSetting(QStringLiteral("zh_CN"));
    QCOMPARE(interfaceLocale(languageSetting(), english).language(), QLocale::Chinese);
    QVERIFY(installTranslators(interfaceLocale(languageSetting(), english)));
    MainWindow w;
    QCOMPARE(menuTitle(w, 0), QStringLiteral("\u6587\u4ef6(&F)"));
    w.document()->undoStack()->setClean();
    setLanguageSetting(QString());
    QCOMPARE(interfaceLocale(languageSetting(), chinese), chinese);
}

void TestTranslations::languageMenuSavesTheChoice()
{
    MainWindow w;
    w.show();
    QMenu *language = nullptr;
    for (QMenu *m : w.findChildren<QMenu *>())
        if (m->title() == QLatin1String("&Language"))
            language = m;
    QVERIFY(language);
    QStringList names;
    for (QAction *a : language->actions())
        names << a->text();
    QCOMPARE(names, (QStringList{QStringLiteral("System default"), QStringLiteral("English"),
                                 QStringLiteral("\u7b80\u4f53\u4e2d\u6587")}));
    QVERIFY(language->actions()[0]->isChecked());
    language->actions()[2]->trigger();
    QCOMPARE(languageSetting(), QStringLiteral("zh_CN"));
    // The choice applies at the next start, and the window says so.
    QTRY_VERIFY(w.findChild<QMessageBox *>(QStringLiteral("languageNotice")));
    QVERIFY(
        w.findChild<QMessageBox *>(QStringLiteral("languageNotice"))->text().contains(QLatin1String("starts again")));
    w.findChild<QMessageBox *>(QStringLiteral("languageNotice"))->close();
    w.document()->undoStack()->setClean();
}

void TestTranslations::chineseRowAxisTitleStandsUpright()
{
    // "query" beside the rows turns on its side; its Chinese 查询 is set upright, one character
    // under the other: in the SVG, two text elements, not one rotated.
    auto project = parseProject(R"({"format": "attnscope", "version": 1, "mode": "self", "heads": 1, "headDimQK": 2,
        "headDimV": 2, "query": {"tokens": ["a", "b", "c"], "x": [[1, 0], [0, 1], [1, 1]]},
        "weights": {"q": [[1, 0], [0, 1]], "k": [[1, 0], [0, 1]], "v": [[1, 0], [0, 1]]}})");
    QVERIFY(project);
    auto backend = createBackend(BackendRequest::Cpu, {});
    QVERIFY(backend);
    auto trace = backend->backend->compute(project->problem);
    QVERIFY(trace);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("head.svg"));
    auto svgText = [&] {
        QString error;
        if (!FigureExporter(*project, *trace).write(path, FigureOptions(), FigureSize(), &error))
            return error;
        QFile f(path);
        return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : f.errorString();
    };
    const QString english = svgText();
    QVERIFY2(english.contains(QLatin1String(">query<")), qPrintable(english.left(200)));
    QVERIFY(installTranslators(QLocale(QStringLiteral("zh_CN"))));
    const QString chinese = svgText();
    QVERIFY(chinese.contains(QStringLiteral(">\u67e5<"))); // 查
    QVERIFY(chinese.contains(QStringLiteral(">\u8be2<"))); // 询
    QVERIFY(!chinese.contains(QStringLiteral(">\u67e5\u8be2<")));
    QVERIFY(chinese.contains(QStringLiteral(">\u952e<"))); // 键, above the columns, as it was
}

void TestTranslations::coreErrorsTranslate_data()
{
    QTest::addColumn<QString>("project"); // written to a file and read; empty: the case below
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("chinese"); // a piece the Chinese text has
    QTest::addColumn<QString>("kept");    // a piece both languages keep (field, path, number)
    const QString head = QStringLiteral(R"({"format": "attnscope", "version": 1, "mode": "self", "heads": 1,
        "headDimQK": 2, "headDimV": 2, "query": {"tokens": ["a", "b"], "x": [[1, 0], [0, 1]]},)");
    QTest::newRow("shape") << head + QStringLiteral(R"("weights": {"q": [[1, 0], [0, 1]], "k": [[1, 0, 0], [0, 1, 0]],
        "v": [[1, 0], [0, 1]]}})")
                           << "validation.shape" << QStringLiteral("\u5f62\u72b6\u5e94\u4e3a") // 形状应为
                           << "weights.k";
    QTest::newRow("missing") << head + QStringLiteral(R"("weights": {"q": [[1, 0], [0, 1]]}})") << "project.missing"
                             << QStringLiteral("\u7f3a\u5931") << "weights.k"; // 缺失
    QTest::newRow("type") << QStringLiteral(R"({"format": "attnscope", "version": 1, "mode": "self", "heads": "two"})")
                          << "project.expected"
                          << QStringLiteral("\u4e0d\u5c0f\u4e8e 1 \u7684\u6574\u6570") // 不小于 1 的整数
                          << "heads";
    QTest::newRow("open") << QString() << "file.open" << QStringLiteral("\u65e0\u6cd5\u6253\u5f00\u6587\u4ef6")
                          << "missing.attnscope.json"; // 无法打开文件
    // JSON syntax: the line and column stay, the frame is translated.
    QTest::newRow("json syntax") << QStringLiteral("{\"format\": \"attnscope\",\n \"version\": 1,,}") << "json.syntax"
                                 << QStringLiteral("\u7b2c 2 \u884c\u7b2c") << "\u504f\u79fb 38"; // 第 2 行第, 偏移 38
    QTest::newRow("json ends early") << QStringLiteral("{\"format\": \"attnscope\", ") << "json.syntax.end"
                                     << QStringLiteral("\u5c31\u7ed3\u675f\u4e86") << "25"; // 就结束了
    QTest::newRow("json NaN") << head + QStringLiteral(R"("weights": {"q": [[NaN, 0], [0, 1]]}})")
                              << "json.syntax.nonNumber" << QStringLiteral("NaN \u548c Infinity") << "NaN"; // NaN 和
    QTest::newRow("json duplicate key") << QStringLiteral(R"({"format": "attnscope", "format": "attnscope"})")
                                        << "json.duplicateKey" << QStringLiteral("\u51fa\u73b0\u4e86\u4e24\u6b21")
                                        << "format"; // 出现了两次
    QTest::newRow("json too deep") << QString(100, QLatin1Char('[')) + QString(100, QLatin1Char(']')) << "json.depth"
                                   << QStringLiteral("\u5d4c\u5957\u4e86") << "65"; // 嵌套了
}

void TestTranslations::coreErrorsTranslate()
{
    QFETCH(QString, project);
    QFETCH(QString, code);
    QFETCH(QString, chinese);
    QFETCH(QString, kept);
    QTemporaryDir dir;
    QString path = dir.filePath(QStringLiteral("missing.attnscope.json"));
    if (!project.isEmpty()) {
        path = dir.filePath(QStringLiteral("bad.attnscope.json"));
        std::ofstream(path.toStdString()) << project.toStdString();
    }
    auto read = readProjectFile(path.toStdString());
    QVERIFY(!read);
    QCOMPARE(QString::fromStdString(read.error().code), code);

    // English: exactly core's message.
    QCOMPARE(errorText(read.error()), QString::fromStdString(read.message()));
    QVERIFY(installTranslators(QLocale(QStringLiteral("zh_CN"))));
    const QString text = errorText(read.error());
    QVERIFY2(text.contains(chinese), qPrintable(text));
    QVERIFY2(text.contains(kept), qPrintable(text));
    QVERIFY2(text.contains(path), qPrintable(text)); // the file name before the message is kept
    QVERIFY2(!hasEnglishProse(text), qPrintable(text));
}

void TestTranslations::fileAndBackendErrorsTranslate_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("chinese");
    QTest::addColumn<QString>("kept");
    const QByteArray npy = QByteArray("\x93NUMPY", 6);
    auto npyWith = [&](char major, const QByteArray &header) {
        QByteArray h = header;
        while ((10 + h.size() + 1) % 16 != 0)
            h += ' ';
        h += '\n';
        return npy + QByteArray(1, major) + QByteArray(1, 0) + QByteArray(1, char(h.size())) + QByteArray(1, 0) + h;
    };
    QTest::newRow("npy version") << "a.npy" << npyWith(7, "{}") << "npy.version"
                                 << QStringLiteral("\u4e0d\u652f\u6301\u7684 .npy \u7248\u672c")
                                 << "7"; // 不支持的 .npy 版本
    QTest::newRow("npy fortran") << "a.npy" << npyWith(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }")
                                 << "npy.order" << QStringLiteral("C \u987a\u5e8f") << "a.npy"; // C 顺序
    QTest::newRow("npy no shape") << "a.npy" << npyWith(1, "{'descr': '<f4', 'fortran_order': False, }")
                                  << "npy.header.entry" << QStringLiteral("\u6ca1\u6709\u201cshape\u201d\u9879")
                                  << "a.npy"; // 没有“shape”项
    QTest::newRow("npy bad shape") << "a.npy"
                                   << npyWith(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }")
                                   << "npy.shape" << QStringLiteral("\u5e94\u4e3a\u7531\u6574\u6570")
                                   << "(2, x)"; // 应为由整数
    QTest::newRow("npz not zip") << "a.npz" << QByteArray(40, 'z') << "zip.noDirectory"
                                 << QStringLiteral("\u76ee\u5f55\u7ed3\u675f\u8bb0\u5f55") << "a.npz"; // 目录结束记录
    QTest::newRow("safetensors short") << "a.safetensors" << QByteArray("abc") << "safetensors.tooShort"
                                       << QStringLiteral("\u4e0d\u662f safetensors \u6587\u4ef6")
                                       << "3"; // 不是 safetensors 文件
    QTest::newRow("safetensors header") << "a.safetensors" << QByteArray("\x02\0\0\0\0\0\0\0[]", 10)
                                        << "safetensors.header.notObject" << QStringLiteral("JSON \u5bf9\u8c61")
                                        << "a.safetensors"; // JSON 对象
    QTest::newRow("safetensors JSON") << "a.safetensors" << QByteArray("\x08\0\0\0\0\0\0\0{\"a\":1,}", 16)
                                      << "json.syntax" << QStringLiteral("\u89e3\u6790\u9519\u8bef")
                                      << "header: "; // 解析错误
    // A Vulkan device that is not there: Auto stays on the CPU with a notice.
    QTest::newRow("backend notice") << QString() << QByteArray() << "backend.usingCpu"
                                    << QStringLiteral("\u6539\u7528 CPU") << "no-such-gpu"; // 改用 CPU
    // Vulkan failing for real on lavapipe (injected faults): the driver's VkResult stays, the
    // sentences around it are translated.
    QTest::newRow("backend start fault") << QString() << QByteArray("create") << "backend.startFailed"
                                         << QStringLiteral("Vulkan \u8c03\u7528") // Vulkan 调用
                                         << "VK_ERROR_INITIALIZATION_FAILED";
    QTest::newRow("backend device lost") << QString() << QByteArray("device-lost") << "backend.fallback.always"
                                         << QStringLiteral("\u4ece\u73b0\u5728\u8d77") // 从现在起
                                         << "VK_ERROR_DEVICE_LOST";
}

// Attention files' rarer errors and the backend's notices reach the user translated (what the
// GUI shows: errorText()), and English stays exactly core's message.
void TestTranslations::fileAndBackendErrorsTranslate()
{
    QFETCH(QString, name);
    QFETCH(QByteArray, bytes);
    QFETCH(QString, code);
    QFETCH(QString, chinese);
    QFETCH(QString, kept);
    Error error;
    if (name.isEmpty()) {
        BackendOptions options;
        options.vulkanDevice = bytes.isEmpty() ? "no-such-gpu" : "0"; // a fault needs a device to start on
        auto fault = test::parseVulkanFault(bytes.toStdString());
        QVERIFY(fault.ok());
        options.vulkan.fault = *fault;
        auto selection = createBackend(BackendRequest::Auto, options);
        QVERIFY(selection.ok());
        error = selection->noticeError;
        QCOMPARE(error.message, selection->notice);
        if (bytes == "device-lost") { // fails while computing
            QVERIFY2(error.message.empty(), error.message.c_str());
            auto project =
                readProjectFile(ATTNSCOPE_SOURCE_DIR "/resources/examples/self-attention-tutorial.attnscope.json");
            QVERIFY(project.ok());
            QVERIFY(selection->backend->compute(project->problem).ok()); // on the CPU
            error = takeBackendNoticeError(*selection->backend);
        }
    } else {
        QTemporaryDir dir;
        const QString path = dir.filePath(name);
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(bytes);
        f.close();
        auto read = readAttentionFile(path.toStdString());
        QVERIFY(!read);
        error = read.error();
    }
    QCOMPARE(QString::fromStdString(error.code), code);
    QCOMPARE(errorText(error), QString::fromStdString(error.message));
    QVERIFY(installTranslators(QLocale(QStringLiteral("zh_CN"))));
    const QString text = errorText(error);
    QVERIFY2(text.contains(chinese), qPrintable(text));
    QVERIFY2(text.contains(kept), qPrintable(text));
    QVERIFY2(!hasEnglishProse(text), qPrintable(text));
}

void TestTranslations::unknownCodeShowsTheEnglishMessage()
{
    QVERIFY(installTranslators(QLocale(QStringLiteral("zh_CN"))));
    Error unknown{"weights.q: something new", ErrorKind::InvalidInput, "project.no-such-code", {"weights.q"}};
    QCOMPARE(errorText(unknown), QStringLiteral("weights.q: something new"));
    // A message changed after it was made (text appended) is no longer its template's.
    Error changed = codedError("file.open", {"x.json"});
    changed.message += " (and more)";
    QCOMPARE(errorText(changed), QStringLiteral("x.json: cannot open the file (and more)"));
    // Memory refusals: the phrase argument is translated too.
    Error memory = codedError("memory.refused", {"9 GiB", "the CSV text", "1 GiB"}, ErrorKind::TooLarge);
    QCOMPARE(errorText(memory), QStringLiteral("\u5927\u5c0f\uff1a\u8be5\u95ee\u9898\u7684CSV \u6587\u672c\u9700\u8981 "
                                               "9 GiB \u5185\u5b58\uff1b\u672c\u673a\u5141\u8bb8 1 GiB"));
}

void TestTranslations::coreAndAppTemplatesAgree()
{
    QMap<QString, QString> core, app;
    for (const ErrorTemplate &t : errorTemplates())
        core.insert(QString::fromLatin1(t.code), QString::fromUtf8(t.english));
    for (const ErrorTextTemplate &t : errorTextTemplates())
        app.insert(t.code, t.english);
    QCOMPARE(app, core);
    // And each fills as core fills it.
    const std::vector<std::string> args = {"A", "B", "C", "D"};
    for (const ErrorTemplate &t : errorTemplates())
        QCOMPARE(QString::fromStdString(codedError(t.code, args).message),
                 QString::fromStdString(fillErrorTemplate(t.english, args)));
}

QTEST_MAIN(TestTranslations)
#include "tst_translations.moc"
