// Autosave and crash recovery: the Autosaver through the Document API, then the real
// application killed with SIGKILL and started again.

#include "app/gui/document/Autosave.h"
#include "app/gui/document/Document.h"

#include "../common/TestUtil.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

using namespace attnscope;

namespace {

Project tutorial()
{
    return *Document::readProject(
        test::sourcePath(QStringLiteral("resources/examples/self-attention-tutorial.attnscope.json")));
}

bool same(const Project &a, const Project &b)
{
    return serializeProject(a) == serializeProject(b);
}

// A process id that is certainly not running: a child that has exited and been reaped.
qint64 deadPid()
{
    QProcess p;
    p.start(QStringLiteral("true"), {});
    p.waitForFinished();
    return p.processId() ? p.processId() : 999999;
}

QStringList copiesIn(const QString &dir)
{
    return QDir(dir).entryList({QStringLiteral("*.attnscope.json")}, QDir::Files);
}

} // namespace

class TestAutosave : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void modifiedDocumentIsSavedWithinTheInterval();
    void atMostOneWritePerInterval();
    void cleanSaveRemovesTheCopy();
    void undoToCleanRemovesTheCopy();
    void orphansAreCopiesOfProcessesThatAreGone();
    void killedApplicationOffersRecovery();
    void discardedRecoveryIsGone();
};

void TestAutosave::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("AttnScopeTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_autosave"));
    QVERIFY(Autosaver::defaultInterval() <= 60000);
}

void TestAutosave::init()
{
    QDir(Autosaver::recoveryDirectory()).removeRecursively();
}

void TestAutosave::modifiedDocumentIsSavedWithinTheInterval()
{
    Document doc(tutorial());
    doc.setFilePath(QStringLiteral("/projects/tutorial.attnscope.json"));
    Autosaver saver;
    saver.setInterval(50);
    saver.setDocument(&doc);
    QSignalSpy saved(&saver, &Autosaver::saved);
    QTest::qWait(150);
    QCOMPARE(saved.count(), 0); // clean: nothing to keep
    QVERIFY(!QFile::exists(saver.recoveryPath()));
    QVERIFY(doc.setValue(MatrixId::Wq, 0, 0, 2.5f));
    QVERIFY(doc.setHeads(2));
    QVERIFY(saved.wait(5000));
    auto copy = Autosaver::readCopy(saver.recoveryPath());
    QVERIFY2(copy.ok(), copy ? "" : copy.message().c_str());
    QVERIFY(same(copy->first, doc.project()));
    QCOMPARE(copy->second.originalPath, QStringLiteral("/projects/tutorial.attnscope.json"));
    QCOMPARE(copy->second.pid, QCoreApplication::applicationPid());
    QVERIFY(Autosaver::orphanedCopies().isEmpty()); // this process's own copy is not offered
}

void TestAutosave::atMostOneWritePerInterval()
{
    Document doc(tutorial());
    Autosaver saver;
    saver.setInterval(400);
    saver.setDocument(&doc);
    QSignalSpy saved(&saver, &Autosaver::saved);
    QElapsedTimer timer;
    timer.start();
    for (int i = 0; i < 5; ++i) {
        QVERIFY(doc.setValue(MatrixId::Xq, 0, 0, float(i + 10)));
        QTest::qWait(20);
    }
    QVERIFY(saved.wait(5000));
    QVERIFY(timer.elapsed() >= 380);
    QCOMPARE(saved.count(), 1);
    auto copy = Autosaver::readCopy(saver.recoveryPath());
    QVERIFY(copy.ok());
    QCOMPARE(copy->first.problem.xq(0, 0), 14.0f); // every edit before the write is in it
}

void TestAutosave::cleanSaveRemovesTheCopy()
{
    QTemporaryDir dir;
    Document doc(tutorial());
    Autosaver saver;
    saver.setInterval(20);
    saver.setDocument(&doc);
    QSignalSpy saved(&saver, &Autosaver::saved);
    QVERIFY(doc.setTitle(QStringLiteral("changed")));
    QVERIFY(saved.wait(5000));
    QVERIFY(QFile::exists(saver.recoveryPath()));
    QVERIFY(doc.save(dir.filePath(QStringLiteral("saved.attnscope.json"))).ok());
    QVERIFY(!QFile::exists(saver.recoveryPath()));
    QTest::qWait(60);
    QVERIFY(!QFile::exists(saver.recoveryPath()));
    // Closing (destroying) the autosaver with a modified document removes its copy too.
    QVERIFY(doc.setTitle(QStringLiteral("again")));
    QVERIFY(saved.wait(5000));
    const QString path = saver.recoveryPath();
    saver.setDocument(nullptr);
    QVERIFY(!QFile::exists(path));
}

void TestAutosave::undoToCleanRemovesTheCopy()
{
    Document doc(tutorial());
    Autosaver saver;
    saver.setInterval(20);
    saver.setDocument(&doc);
    QSignalSpy saved(&saver, &Autosaver::saved);
    QVERIFY(doc.setValue(MatrixId::Wk, 1, 1, -3.0f));
    QVERIFY(saved.wait(5000));
    doc.undoStack()->undo();
    QVERIFY(!doc.isModified());
    QVERIFY(!QFile::exists(saver.recoveryPath()));
}

void TestAutosave::orphansAreCopiesOfProcessesThatAreGone()
{
    QVERIFY(QDir().mkpath(Autosaver::recoveryDirectory()));
    const QDir dir(Autosaver::recoveryDirectory());
    Project p = tutorial();
    p.title = "recovered";
    QVERIFY(Autosaver::writeCopy(dir.filePath(QStringLiteral("dead.attnscope.json")), p, QStringLiteral("/a/b.json"),
                                 deadPid())
                .ok());
    QVERIFY(Autosaver::writeCopy(dir.filePath(QStringLiteral("alive.attnscope.json")), p, QString(),
                                 QCoreApplication::applicationPid())
                .ok());
    QFile junk(dir.filePath(QStringLiteral("junk.attnscope.json")));
    QVERIFY(junk.open(QIODevice::WriteOnly));
    junk.write("{ not json");
    junk.close();
    const auto orphans = Autosaver::orphanedCopies();
    QCOMPARE(orphans.size(), 1);
    QCOMPARE(QFileInfo(orphans[0].recoveryPath).fileName(), QStringLiteral("dead.attnscope.json"));
    QCOMPARE(orphans[0].originalPath, QStringLiteral("/a/b.json"));
    auto copy = Autosaver::readCopy(orphans[0].recoveryPath);
    QVERIFY(copy.ok());
    QCOMPARE(copy->first.title, std::string("recovered"));
    QVERIFY(!copy->first.extra.contains("attnscopeRecovery")); // the bookkeeping is not the user's
    Project plain = tutorial();
    plain.title = "recovered";
    QVERIFY(same(copy->first, plain));
}

namespace {

// The real application, offscreen, with its own data and settings folders.
struct App {
    QTemporaryDir home;
    QString recoveryDir() const { return home.filePath(QStringLiteral("data/AttnScope/AttnScope/recovery")); }

    QProcessEnvironment environment() const
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        env.insert(QStringLiteral("XDG_DATA_HOME"), home.filePath(QStringLiteral("data")));
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), home.filePath(QStringLiteral("config")));
        env.insert(QStringLiteral("XDG_CACHE_HOME"), home.filePath(QStringLiteral("cache")));
        env.insert(QStringLiteral("ATTNSCOPE_AUTOSAVE_MS"), QStringLiteral("200"));
        env.remove(QStringLiteral("ATTNSCOPE_TEST_EDITS"));
        env.remove(QStringLiteral("ATTNSCOPE_TEST_RECOVERY"));
        env.remove(QStringLiteral("ATTNSCOPE_TEST_DUMP"));
        return env;
    }

    // Starts the application on `project` with `edits`, waits for its recovery copy to hold
    // them, and kills it (SIGKILL: no destructor, no prompt runs).
    bool editAndKill(const QString &project, const QString &edits, const std::function<bool(const Project &)> &done)
    {
        QProcess app;
        QProcessEnvironment env = environment();
        env.insert(QStringLiteral("ATTNSCOPE_TEST_EDITS"), edits);
        app.setProcessEnvironment(env);
        app.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        app.start(QStringLiteral(ATTNSCOPE_GUI), {project});
        if (!app.waitForStarted(10000))
            return false;
        QElapsedTimer timer;
        timer.start();
        bool found = false;
        while (!found && timer.elapsed() < 30000 && app.state() == QProcess::Running) {
            QTest::qWait(100);
            for (const QString &name : copiesIn(recoveryDir())) {
                auto copy = Autosaver::readCopy(QDir(recoveryDir()).filePath(name));
                found = found || (copy && copy->second.pid == app.processId() && done(copy->first));
            }
        }
        app.kill();
        app.waitForFinished(10000);
        return found && app.exitStatus() == QProcess::CrashExit;
    }

    // Starts it again, answering the recovery offer, and reads the state it had.
    QJsonObject restart(const QString &project, const QString &answer)
    {
        QProcess app;
        QProcessEnvironment env = environment();
        env.insert(QStringLiteral("ATTNSCOPE_TEST_RECOVERY"), answer);
        const QString dump = home.filePath(QStringLiteral("state.json"));
        QFile::remove(dump);
        env.insert(QStringLiteral("ATTNSCOPE_TEST_DUMP"), dump);
        app.setProcessEnvironment(env);
        app.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        app.start(QStringLiteral(ATTNSCOPE_GUI), {project});
        if (!app.waitForFinished(60000) || app.exitCode() != 0)
            return {};
        QFile f(dump);
        if (!f.open(QIODevice::ReadOnly))
            return {};
        return QJsonDocument::fromJson(f.readAll()).object();
    }
};

} // namespace

void TestAutosave::killedApplicationOffersRecovery()
{
    App app;
    QVERIFY(app.home.isValid());
    const QString project = app.home.filePath(QStringLiteral("mine.attnscope.json"));
    {
        Document d(tutorial());
        QVERIFY(d.save(project).ok());
    }
    QVERIFY(app.editAndKill(project, QStringLiteral("heads=3;value=Wq:0:0:2.5;title=Unsaved work"),
                            [](const Project &p) { return p.problem.spec.heads == 3 && p.title == "Unsaved work"; }));
    QCOMPARE(copiesIn(app.recoveryDir()).size(), 1); // what the killed process left

    const QJsonObject state = app.restart(project, QStringLiteral("recover"));
    QVERIFY2(!state.isEmpty(), "the application did not report its state");
    QCOMPARE(state.value(QStringLiteral("modified")).toBool(), true);
    QCOMPARE(state.value(QStringLiteral("filePath")).toString(), QFileInfo(project).absoluteFilePath());
    const std::string text = state.value(QStringLiteral("project")).toString().toStdString();
    auto recovered = parseProject(text);
    QVERIFY2(recovered.ok(), recovered ? "" : recovered.message().c_str());
    QCOMPARE(recovered->problem.spec.heads, 3);
    QCOMPARE(recovered->problem.weights.q(0, 0), 2.5f);
    QCOMPARE(recovered->title, std::string("Unsaved work"));
    // The file on disk is untouched until the user saves.
    QCOMPARE(Document::readProject(project)->problem.spec.heads, 1);
    // The old copy was replaced by the new process's, which a normal exit removed.
    QVERIFY2(copiesIn(app.recoveryDir()).isEmpty(), qPrintable(copiesIn(app.recoveryDir()).join(QLatin1Char(' '))));
}

void TestAutosave::discardedRecoveryIsGone()
{
    App app;
    const QString project = app.home.filePath(QStringLiteral("mine.attnscope.json"));
    {
        Document d(tutorial());
        QVERIFY(d.save(project).ok());
    }
    QVERIFY(app.editAndKill(project, QStringLiteral("heads=2"),
                            [](const Project &p) { return p.problem.spec.heads == 2; }));
    const QJsonObject state = app.restart(project, QStringLiteral("discard"));
    QVERIFY(!state.isEmpty());
    QCOMPARE(state.value(QStringLiteral("modified")).toBool(), false);
    auto shown = parseProject(state.value(QStringLiteral("project")).toString().toStdString());
    QVERIFY(shown.ok());
    QCOMPARE(shown->problem.spec.heads, 1); // the file as saved
    QVERIFY(copiesIn(app.recoveryDir()).isEmpty());
    // And nothing is offered at the next start.
    const QJsonObject next = app.restart(project, QStringLiteral("recover"));
    QCOMPARE(next.value(QStringLiteral("modified")).toBool(), false);
}

QTEST_GUILESS_MAIN(TestAutosave)
#include "tst_autosave.moc"
