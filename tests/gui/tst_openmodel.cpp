// File > Open Model: the models already in the Hugging Face cache. A fake cache made in a temporary
// folder as huggingface_hub makes it (snapshot files are links into blobs/): the fixture GPT-2 copied
// in, a model of a type AttnScope does not open, a snapshot with no config.json. The list, its
// sizes and its one-line reasons are checked in a real window; a screenshot is kept.

#include "app/gui/document/ModelCache.h"
#include "app/gui/sources/ModelRunSource.h"
#include "app/gui/views/MainWindow.h"
#include "app/gui/views/OpenModelDialog.h"

#include "../common/ModelFixtures.h"
#include "../common/TestUtil.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QHeaderView>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QTreeWidget>

#include <filesystem>

using namespace attnscope;
namespace fs = std::filesystem;

namespace {

// A cache under `root`: models--test--tiny-gpt2 (the GPT-2 fixture, every file a link to a blob,
// plus a second name for the vocabulary's blob), models--test--odd-mamba (model_type "mamba") and
// models--test--no-config. Returns the bytes of the GPT-2 snapshot's distinct blobs.
std::int64_t makeCache(const QString &root)
{
    const fs::path hub = root.toStdString();
    const fs::path gpt2 = hub / "models--test--tiny-gpt2";
    fs::create_directories(gpt2 / "blobs");
    fs::create_directories(gpt2 / "snapshots" / "abc");
    fs::create_directories(gpt2 / "refs");
    std::int64_t bytes = 0;
    int n = 0;
    const fs::path fixture = test::sourcePath(QStringLiteral("tests/fixtures/models/gpt2-f32")).toStdString();
    for (const char *name : {"config.json", "model.safetensors", "vocab.json", "merges.txt"}) {
        const std::string blob = "0123456789abcdef" + std::to_string(n++);
        fs::copy_file(fixture / name, gpt2 / "blobs" / blob);
        bytes += std::int64_t(fs::file_size(gpt2 / "blobs" / blob));
        fs::create_symlink(fs::path("../../blobs") / blob, gpt2 / "snapshots" / "abc" / name);
    }
    // The same blob under two names counts once.
    fs::create_symlink(fs::path("../../blobs") / "0123456789abcdef2", gpt2 / "snapshots" / "abc" / "vocab-copy.json");

    const fs::path odd = hub / "models--test--odd-mamba" / "snapshots" / "def";
    fs::create_directories(odd);
    QFile config(QString::fromStdString((odd / "config.json").string()));
    if (!config.open(QIODevice::WriteOnly) || config.write(R"({"model_type": "mamba", "hidden_size": 64})") < 0)
        qFatal("cannot write the fake cache");
    config.close();
    fs::create_directories(hub / "models--test--no-config" / "snapshots" / "123");
    fs::create_directories(hub / "datasets--test--ignored" / "snapshots" / "1"); // not a model
    return bytes;
}

} // namespace

class TestOpenModel : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(QDir().mkpath(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR)));
    }
    void cacheFolderFromTheEnvironment_data();
    void cacheFolderFromTheEnvironment();
    void scanListsEverySnapshotWithSizeAndReason();
    void scanReadsATranslationModelsConfig();
    void dialogListsTheCacheAndOpensAModel();
    void fileOpenModelOpensTheChosenSnapshot();
};

void TestOpenModel::cacheFolderFromTheEnvironment_data()
{
    QTest::addColumn<QString>("hfHome");
    QTest::addColumn<QString>("hubCache");
    QTest::addColumn<QString>("expected");
    QTest::newRow("HF_HOME first") << "/h"
                                   << "/c"
                                   << "/h/hub";
    QTest::newRow("HF_HUB_CACHE") << ""
                                  << "/c"
                                  << "/c";
    QTest::newRow("neither") << ""
                             << "" << QDir::home().filePath(".cache/huggingface/hub");
}

void TestOpenModel::cacheFolderFromTheEnvironment()
{
    QFETCH(QString, hfHome);
    QFETCH(QString, hubCache);
    QFETCH(QString, expected);
    QProcessEnvironment env;
    if (!hfHome.isEmpty())
        env.insert("HF_HOME", hfHome);
    if (!hubCache.isEmpty())
        env.insert("HF_HUB_CACHE", hubCache);
    QCOMPARE(hubCacheDir(env), expected);
}

void TestOpenModel::scanListsEverySnapshotWithSizeAndReason()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const std::int64_t bytes = makeCache(tmp.path());
    const auto models = scanHubCache(tmp.path());
    QCOMPARE(models.size(), std::size_t(3));
    // Sorted by name: no-config, odd-mamba, tiny-gpt2.
    QCOMPARE(models[0].name, QString("test/no-config"));
    QVERIFY(!models[0].openable);
    QVERIFY2(models[0].whyNot.contains("config.json"), qPrintable(models[0].whyNot));
    QCOMPARE(models[1].name, QString("test/odd-mamba"));
    QCOMPARE(models[1].family, QString("mamba"));
    QVERIFY(!models[1].openable);
    QVERIFY2(models[1].whyNot.contains("mamba"), qPrintable(models[1].whyNot));
    QVERIFY(!models[1].whyNot.contains('\n'));
    QVERIFY2(models[1].whyNot.startsWith("config.json: "), qPrintable(models[1].whyNot)); // not the whole path
    const CachedModel &gpt2 = models[2];
    QCOMPARE(gpt2.name, QString("test/tiny-gpt2"));
    QCOMPARE(gpt2.revision, QString("abc"));
    QCOMPARE(gpt2.family, QString("gpt2"));
    QVERIFY2(gpt2.openable, qPrintable(gpt2.whyNot));
    QCOMPARE(gpt2.bytes, bytes); // links followed into blobs/, the shared blob once
    QVERIFY(gpt2.path.endsWith("models--test--tiny-gpt2/snapshots/abc"));
    QVERIFY(scanHubCache(tmp.filePath("no-such-folder")).empty());
}

// A Marian snapshot is read with the translation model's config (openable); one whose config it
// refuses says why in one line.
void TestOpenModel::scanReadsATranslationModelsConfig()
{
    QTemporaryDir tmp;
    const fs::path hub = tmp.path().toStdString();
    const fs::path fixture = test::sourcePath(QStringLiteral("tests/fixtures/marian/marian-f32")).toStdString();
    for (const char *name : {"opus-mt-en-zh", "opus-mt-broken"}) {
        const fs::path snapshot = hub / (std::string("models--test--") + name) / "snapshots" / "abc";
        fs::create_directories(snapshot);
        for (const char *file : {"config.json", "generation_config.json"})
            fs::copy_file(fixture / file, snapshot / file);
    }
    const fs::path broken = hub / "models--test--opus-mt-broken" / "snapshots" / "abc" / "config.json";
    QJsonObject config = test::readJson(QString::fromStdString(broken.string()));
    config["activation_function"] = "gelu_fast";
    test::writeJson(QString::fromStdString(broken.string()), config);
    const auto models = scanHubCache(tmp.path());
    QCOMPARE(models.size(), std::size_t(2));
    QCOMPARE(models[0].name, QString("test/opus-mt-broken"));
    QVERIFY(!models[0].openable);
    QVERIFY2(models[0].whyNot.startsWith("config.json: activation_function"), qPrintable(models[0].whyNot));
    QCOMPARE(models[1].family, QString("marian"));
    QVERIFY2(models[1].openable, qPrintable(models[1].whyNot));
}

void TestOpenModel::dialogListsTheCacheAndOpensAModel()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const std::int64_t bytes = makeCache(tmp.path());
    QWidget window;
    window.resize(900, 520);
    window.show();
    OpenModelDialog dialog(tmp.path(), tmp.path(), &window);
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    QTRY_VERIFY(dialog.isScanned()); // scanned on a worker, shown when it arrives
    QTreeWidget *list = dialog.list();
    QCOMPARE(list->topLevelItemCount(), 3);
    QCOMPARE(list->topLevelItem(2)->text(0), QString("test/tiny-gpt2"));
    QCOMPARE(list->topLevelItem(2)->text(1), QString("gpt2"));
    QCOMPARE(list->topLevelItem(2)->text(2), OpenModelDialog::sizeText(bytes));
    QCOMPARE(list->topLevelItem(2)->text(3), QString("Yes"));
    QVERIFY(list->topLevelItem(1)->text(3).contains("mamba"));
    // The first model it can open is selected; one it cannot open cannot be opened.
    QCOMPARE(list->currentItem(), list->topLevelItem(2));
    QVERIFY(dialog.openButton()->isEnabled());
    list->setCurrentItem(list->topLevelItem(1));
    QVERIFY(!dialog.openButton()->isEnabled());
    list->setCurrentItem(list->topLevelItem(2));
    QApplication::processEvents();
    QVERIFY(dialog.grab().save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/open-model-cache.png")));
    dialog.openButton()->click();
    QCOMPARE(dialog.result(), int(QDialog::Accepted));
    QCOMPARE(dialog.chosenDir(), dialog.models()[2].path);

    // "Open Folder…" is the folder chooser beside the list.
    OpenModelDialog other(tmp.path(), tmp.path(), &window);
    other.chooseFolder = [] { return QStringLiteral("/some/folder"); };
    other.show();
    auto *folder = other.findChild<QPushButton *>("openModelFolder");
    QVERIFY(folder);
    folder->click();
    QCOMPARE(other.result(), int(QDialog::Accepted));
    QCOMPARE(other.chosenDir(), QStringLiteral("/some/folder"));
}

void TestOpenModel::fileOpenModelOpensTheChosenSnapshot()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    makeCache(tmp.path());
    // HF_HOME/hub is what is listed: make the cache that folder.
    QTemporaryDir home;
    QVERIFY(QDir().rename(tmp.path(), home.filePath("hub")));
    qputenv("HF_HOME", home.path().toUtf8());
    MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QSignalSpy shown(&w, &MainWindow::modelRunShown);
    bool answered = false;
    std::function<void()> answer = [&] {
        auto *dialog = qobject_cast<OpenModelDialog *>(QApplication::activeModalWidget());
        if (!dialog) {
            QTimer::singleShot(10, answer);
            return;
        }
        if (!dialog->isScanned()) {
            QTimer::singleShot(10, answer);
            return;
        }
        answered = true;
        dialog->openButton()->click();
    };
    QTimer::singleShot(0, answer);
    auto *trigger = w.findChild<QAction *>(QStringLiteral("openModel"));
    QVERIFY(trigger);
    trigger->trigger();
    QVERIFY(answered);
    QVERIFY(w.modelSource());
    QTRY_VERIFY(shown.count() > 0);
    QDir(home.filePath("hub")).removeRecursively();
}

QTEST_MAIN(TestOpenModel)
#include "tst_openmodel.moc"
