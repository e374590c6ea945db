// Autosave and crash recovery: the Autosaver through the Document API, then the real
// application killed with SIGKILL and started again. Copies are told apart by run, not by
// process id alone (a PID namespace gives every start the same one), read back wherever they
// are (every matrix inline), and an unreadable one is offered with its error.

#include "app/gui/document/Autosave.h"
#include "app/gui/document/Document.h"
#include "core/formats/Npy.h"

#include "../common/TestUtil.h"

#include <QDir>
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
    void copyOfAProjectWithNpyReferencesIsRecovered();
    void largeReferencedMatrixStaysAReferenceInTheCopy();
    void copyOfAnEarlierRunWithOurPidIsOfferedNotDeleted();
    void copyWhoseWriterHoldsItsLockIsNotOffered();
    void unreadableCopyIsOfferedWithItsError();
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
    QCoreApplication::processEvents();
    QVERIFY(!saver.isSavePending()); // clean: nothing to keep, no write scheduled
    QCOMPARE(saved.count(), 0);
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
    // Edits in a row, each delivered before the next: the first schedules the write, the others
    // join it instead of writing or scheduling one of their own.
    for (int i = 0; i < 5; ++i) {
        QVERIFY(doc.setValue(MatrixId::Xq, 0, 0, float(i + 10)));
        QCoreApplication::processEvents();
        QVERIFY(saver.isSavePending());
    }
    QVERIFY(saved.wait(5000));
    QVERIFY(!saver.isSavePending()); // the one write took every edit: nothing more is scheduled
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
    QVERIFY(!saver.isSavePending()); // and no later write brings it back
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
    auto orphans = Autosaver::orphanedCopies();
    QCOMPARE(orphans.size(), 2); // the dead one, and the junk with its error (unreadableCopyIsOfferedWithItsError)
    std::sort(orphans.begin(), orphans.end(), [](const auto &a, const auto &b) { return a.error < b.error; });
    QCOMPARE(QFileInfo(orphans[0].recoveryPath).fileName(), QStringLiteral("dead.attnscope.json"));
    QVERIFY(orphans[0].error.isEmpty());
    QVERIFY(!orphans[1].error.isEmpty());
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
        // Until its copy holds the edits, or it ends (the timeout only bounds a failure).
        bool found = false;
        const bool settled = QTest::qWaitFor(
            [&] {
                for (const QString &name : copiesIn(recoveryDir())) {
                    auto copy = Autosaver::readCopy(QDir(recoveryDir()).filePath(name));
                    found = found || (copy && copy->second.pid == app.processId() && done(copy->first));
                }
                return found || app.state() != QProcess::Running;
            },
            30000);
        app.kill();
        app.waitForFinished(10000);
        return settled && found && app.exitStatus() == QProcess::CrashExit;
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

namespace {

void writeNpy(const QString &path, const MatrixF &m)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    const std::string bytes = npyBytes({m.rows(), m.cols()}, m.data());
    f.write(bytes.data(), qint64(bytes.size()));
}

// A recovery copy as a version before instance ids wrote it: named and marked with the
// process id alone.
void writeOldStyleCopy(const QString &path, const Project &project, qint64 pid)
{
    nlohmann::ordered_json root = nlohmann::ordered_json::parse(serializeProject(project));
    root["attnscopeRecovery"] = {
        {"originalPath", "/projects/earlier.attnscope.json"}, {"pid", pid}, {"saved", "2026-01-02T03:04:05.000Z"}};
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QByteArray::fromStdString(root.dump(1)));
}

} // namespace

void TestAutosave::copyOfAProjectWithNpyReferencesIsRecovered()
{
    // The project's query.x and weights.k are .npy files beside it. The copy used to keep
    // the references, which resolved against the recovery folder: the copy never read back
    // and was silently never offered.
    App app;
    QVERIFY(app.home.isValid());
    Project p = tutorial();
    const MatrixF x = p.problem.xq, k = p.problem.weights.k;
    writeNpy(app.home.filePath(QStringLiteral("x.npy")), x);
    writeNpy(app.home.filePath(QStringLiteral("k.npy")), k);
    nlohmann::ordered_json root = nlohmann::ordered_json::parse(serializeProject(p));
    root["query"]["x"] = {{"npy", "x.npy"}};
    root["weights"]["k"] = {{"npy", "k.npy"}};
    const QString project = app.home.filePath(QStringLiteral("refs.attnscope.json"));
    {
        QFile f(project);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray::fromStdString(root.dump(1)));
    }
    QVERIFY(Document::readProject(project).ok());
    QVERIFY(app.editAndKill(project, QStringLiteral("value=Xq:0:0:7.5;value=Wq:0:0:2.5;title=Unsaved work"),
                            [](const Project &q) { return q.title == "Unsaved work"; }));
    // The script that wrote x.npy runs again before the restart: the recovered document has
    // the values the user edited, not the file's new ones.
    writeNpy(app.home.filePath(QStringLiteral("x.npy")), MatrixF::Constant(x.rows(), x.cols(), 9.0f));

    const QJsonObject state = app.restart(project, QStringLiteral("recover"));
    QVERIFY2(!state.isEmpty(), "the application did not report its state");
    QCOMPARE(state.value(QStringLiteral("modified")).toBool(), true);
    QCOMPARE(state.value(QStringLiteral("filePath")).toString(), QFileInfo(project).absoluteFilePath());
    const std::string text = state.value(QStringLiteral("project")).toString().toStdString();
    // The unchanged weights.k is still a reference (saving keeps it as before); the edited x
    // is inline.
    QVERIFY2(nlohmann::ordered_json::parse(text)["weights"]["k"] == nlohmann::ordered_json({{"npy", "k.npy"}}),
             text.c_str());
    ProjectReadOptions options;
    options.folder = app.home.path().toStdString();
    auto recovered = parseProject(text, options);
    QVERIFY2(recovered.ok(), recovered ? "" : recovered.message().c_str());
    MatrixF edited = x;
    edited(0, 0) = 7.5f;
    QCOMPARE(recovered->problem.xq, edited);
    QCOMPARE(recovered->problem.weights.q(0, 0), 2.5f);
    QCOMPARE(recovered->problem.weights.k, k);
    QCOMPARE(recovered->title, std::string("Unsaved work"));
    QVERIFY2(copiesIn(app.recoveryDir()).isEmpty(), qPrintable(copiesIn(app.recoveryDir()).join(QLatin1Char(' '))));
}

void TestAutosave::largeReferencedMatrixStaysAReferenceInTheCopy()
{
    // Written inline, a long input would make every autosave take seconds: an unchanged matrix
    // of more than kMaxInlineValues values stays a reference to the original folder, and
    // recovery checks that its file still holds it (else the copy is offered with that error).
    QTemporaryDir folder;
    Project p;
    p.title = "wide";
    p.queryTokens = {"a", "b", "c"};
    AttentionProblem &pr = p.problem;
    pr.spec.heads = 1;
    pr.spec.headDimQK = 256;
    pr.spec.headDimV = 2;
    pr.xq = MatrixF::Random(3, 1100);
    pr.weights.q = MatrixF::Random(1100, 256);
    pr.weights.k = MatrixF::Random(1100, 256);
    pr.weights.v = MatrixF::Random(1100, 2);
    QVERIFY(pr.weights.q.size() > Autosaver::kMaxInlineValues);
    const QString npy = folder.filePath(QStringLiteral("wq.npy"));
    writeNpy(npy, pr.weights.q);
    p.folder = folder.path().toStdString();
    p.npyReferences["weights.q"] = NpyReference{"wq.npy", 1100, 256, matrixFingerprint(pr.weights.q), 0};

    QVERIFY(QDir().mkpath(Autosaver::recoveryDirectory()));
    const QString path =
        QDir(Autosaver::recoveryDirectory()).filePath(QStringLiteral("1-00000000000000ff-1.attnscope.json"));
    QVERIFY(Autosaver::writeCopy(path, p, QString(), 1, QStringLiteral("1-00000000000000ff")).ok());
    const auto text = nlohmann::ordered_json::parse(test::readAll(path).toStdString());
    QVERIFY2(text["weights"]["q"] == nlohmann::ordered_json({{"npy", "wq.npy"}}), text["weights"]["q"].dump().c_str());
    auto copy = Autosaver::readCopy(path);
    QVERIFY2(copy.ok(), copy ? "" : copy.message().c_str());
    QCOMPARE(copy->first.problem.weights.q, pr.weights.q);
    QCOMPARE(copy->first.problem.xq, pr.xq);
    QCOMPARE(copy->first.folder, p.folder);
    QCOMPARE(copy->first.npyReferences.at("weights.q").path, std::string("wq.npy"));

    writeNpy(npy, MatrixF::Zero(1100, 256));
    auto changed = Autosaver::readCopy(path);
    QVERIFY(!changed.ok());
    QVERIFY2(QString::fromStdString(changed.message())
                 .contains(QStringLiteral("weights.q: wq.npy: the file changed after this copy was written")),
             changed.message().c_str());
    const auto orphans = Autosaver::orphanedCopies();
    QCOMPARE(orphans.size(), 1);
    QVERIFY(orphans[0].error.contains(QStringLiteral("the file changed after this copy was written")));
}

void TestAutosave::copyOfAnEarlierRunWithOurPidIsOfferedNotDeleted()
{
    // In a PID namespace (Flatpak, a container) every start has the same process id: the
    // copy a crashed run left, named after that id, is not this run's. It used to be skipped
    // as ours, and then replaced and deleted by this run's own copy of the same name.
    QVERIFY(QDir().mkpath(Autosaver::recoveryDirectory()));
    const QDir dir(Autosaver::recoveryDirectory());
    const qint64 pid = QCoreApplication::applicationPid();
    Project earlier = tutorial();
    earlier.title = "earlier run";
    const QString left = dir.filePath(QStringLiteral("%1-1.attnscope.json").arg(pid));
    writeOldStyleCopy(left, earlier, pid);
    const QByteArray before = test::readAll(left);

    auto orphans = Autosaver::orphanedCopies();
    QCOMPARE(orphans.size(), 1);
    QCOMPARE(orphans[0].recoveryPath, left);
    QVERIFY(orphans[0].error.isEmpty());

    {
        Document doc(tutorial());
        Autosaver saver;
        saver.setInterval(20);
        saver.setDocument(&doc);
        QSignalSpy saved(&saver, &Autosaver::saved);
        QVERIFY(doc.setTitle(QStringLiteral("this run")));
        QVERIFY(saved.wait(5000));
        QVERIFY(saver.recoveryPath() != left);
        Document other(tutorial());
        saver.setDocument(&other); // removes this run's copy of doc, and only that
    }                              // and destroying the saver removes its copy (a normal exit)
    QCOMPARE(test::readAll(left), before);
    orphans = Autosaver::orphanedCopies();
    QCOMPARE(orphans.size(), 1);
    auto copy = Autosaver::readCopy(orphans[0].recoveryPath);
    QVERIFY2(copy.ok(), copy ? "" : copy.message().c_str());
    QCOMPARE(copy->first.title, std::string("earlier run"));
}

void TestAutosave::copyWhoseWriterHoldsItsLockIsNotOffered()
{
    // A run is running while it holds INSTANCE.lock, whatever its process id: here another
    // process (flock(1)) holds the lock of a made-up run, which ends when its stdin closes.
    QVERIFY(QDir().mkpath(Autosaver::recoveryDirectory()));
    const QDir dir(Autosaver::recoveryDirectory());
    const QString instance = QStringLiteral("%1-00000000deadbeef").arg(QCoreApplication::applicationPid());
    Project p = tutorial();
    p.title = "other run";
    QVERIFY(Autosaver::writeCopy(dir.filePath(instance + QStringLiteral("-1.attnscope.json")), p, QString(),
                                 QCoreApplication::applicationPid(), instance)
                .ok());
    QCOMPARE(Autosaver::orphanedCopies().size(), 1); // no lock file: that run is gone
    const QString lock = dir.filePath(instance + QStringLiteral(".lock"));
    QProcess holder;
    holder.start(QStringLiteral("flock"),
                 {lock, QStringLiteral("sh"), QStringLiteral("-c"), QStringLiteral("echo locked; exec cat")});
    QVERIFY(holder.waitForStarted(10000));
    QVERIFY(holder.waitForReadyRead(10000)); // the lock is held once it speaks
    QCOMPARE(holder.readAll(), QByteArray("locked\n"));
    QVERIFY(Autosaver::orphanedCopies().isEmpty());
    holder.closeWriteChannel(); // cat ends, and the kernel releases the lock
    QVERIFY(holder.waitForFinished(10000));
    const auto orphans = Autosaver::orphanedCopies();
    QCOMPARE(orphans.size(), 1);
    QCOMPARE(orphans[0].instance, instance);
}

void TestAutosave::unreadableCopyIsOfferedWithItsError()
{
    // A copy that does not read back (spoilt on disk) used to be skipped for good: it is
    // listed with its error, and nothing deletes it but the user.
    QVERIFY(QDir().mkpath(Autosaver::recoveryDirectory()));
    const QDir dir(Autosaver::recoveryDirectory());
    const QString name = QStringLiteral("%1-0123456789abcdef-1.attnscope.json").arg(deadPid());
    QFile spoilt(dir.filePath(name));
    QVERIFY(spoilt.open(QIODevice::WriteOnly));
    spoilt.write("{\"format\": \"attnscope\", \"version\": 1, \"mode\": \"self\", \"heads\": ");
    spoilt.close();
    const auto orphans = Autosaver::orphanedCopies();
    QCOMPARE(orphans.size(), 1);
    QCOMPARE(QFileInfo(orphans[0].recoveryPath).fileName(), name);
    QVERIFY2(orphans[0].error.contains(QStringLiteral("not valid JSON")), qPrintable(orphans[0].error));
    QVERIFY(orphans[0].error.startsWith(dir.filePath(name)));
    {
        Document doc(tutorial());
        Autosaver saver;
        saver.setInterval(20);
        saver.setDocument(&doc);
        QSignalSpy saved(&saver, &Autosaver::saved);
        QVERIFY(doc.setTitle(QStringLiteral("this run")));
        QVERIFY(saved.wait(5000));
    }
    QVERIFY(QFile::exists(dir.filePath(name)));
    QCOMPARE(Autosaver::orphanedCopies().size(), 1);
}

QTEST_GUILESS_MAIN(TestAutosave)
#include "tst_autosave.moc"
