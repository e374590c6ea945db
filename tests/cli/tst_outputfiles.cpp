// Output files of every writer (core's AtomicFileWriter: export, stats, compute, render, the
// GUI's save and recovery copies) appear whole or not at all, and a writer killed at any moment
// leaves nothing behind (issue 20, item 7). Before, the temporary was a named mkstemp file
// beside the target, and a SIGKILL during `export` or `stats` left TARGET.attnscope-XXXXXX for
// good (337 MB in one case). Real processes are killed once they are seen writing: the CLI on a
// large input, and output_writer, which stops half-way until told to go on.

#include "../common/CliRunner.h"
#include "../common/TestUtil.h"

#include "core/io/FileIo.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

using namespace attnscope;

namespace {

// What is in a folder, but for the inputs a test put there.
QStringList entriesBesides(const QString &dir, const QStringList &inputs)
{
    QStringList out = QDir(dir).entryList(QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot);
    for (const QString &input : inputs)
        out.removeAll(input);
    return out;
}

// The files that process `pid` has open in `dir` (as /proc/PID/fd shows them: an unnamed
// temporary as "DIR/#INODE (deleted)").
QStringList openFilesIn(qint64 pid, const QString &dir)
{
    QStringList out;
    const QDir fds(QStringLiteral("/proc/%1/fd").arg(pid));
    const QString prefix = QDir(dir).canonicalPath() + QLatin1Char('/');
    for (const QString &fd : fds.entryList(QDir::AllEntries | QDir::System | QDir::NoDotAndDotDot)) {
        const QString target = QFile::symLinkTarget(fds.filePath(fd));
        if (target.startsWith(prefix))
            out << target;
    }
    return out;
}

// A [4, 8, 1024, 1024] float16 attention file (64 MiB of zeros, sparse): its export writes
// 128 MiB and its statistics take a while, so the writer can be seen at work.
QString writeLargeAttentionFile(const QString &path)
{
    QByteArray header = "{'descr': '<f2', 'fortran_order': False, 'shape': (4, 8, 1024, 1024), }";
    while ((10 + header.size() + 1) % 64 != 0)
        header += ' ';
    header += '\n';
    QByteArray start("\x93NUMPY\x01\x00", 8);
    start += char(header.size() & 0xff);
    start += char(header.size() >> 8);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(start + header) != start.size() + header.size() ||
        !f.resize(start.size() + header.size() + qint64(4) * 8 * 1024 * 1024 * 2))
        return {};
    return path;
}

// Starts output_writer and waits until it says it is half-way ("writing named|unnamed").
bool startWriter(QProcess &p, const QString &target, qint64 bytes, bool named, QString *said)
{
    QStringList args{target, QString::number(bytes)};
    if (named)
        args << QStringLiteral("named");
    p.start(QStringLiteral(ATTNSCOPE_OUTPUT_WRITER), args);
    if (!p.waitForStarted())
        return false;
    while (!p.canReadLine())
        if (!p.waitForReadyRead(60000))
            return false;
    *said = QString::fromUtf8(p.readLine()).trimmed();
    return said->startsWith(QLatin1String("writing"));
}

void killAndReap(QProcess &p)
{
    ::kill(pid_t(p.processId()), SIGKILL);
    p.waitForFinished(60000);
}

} // namespace

class TestOutputFiles : public QObject
{
    Q_OBJECT

private slots:
    void killedWriterLeavesNoTemporary();
    void killedCliLeavesNoTemporary_data();
    void killedCliLeavesNoTemporary();
    void statsSaysItCannotWriteBeforeReading();
    void abandonedNamedTemporaryIsSwept();
    void liveWritersTemporaryIsKept_data();
    void liveWritersTemporaryIsKept();
    void computeStagingIsToldByItsLockNotItsPid();
};

// Killed half-way, with its file open and written to: nothing of it stays.
void TestOutputFiles::killedWriterLeavesNoTemporary()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QProcess writer;
    QString said;
    QVERIFY2(startWriter(writer, dir.filePath(QStringLiteral("out.npy")), 64 << 20, false, &said), qPrintable(said));
    QCOMPARE(said, QStringLiteral("writing unnamed")); // /tmp allows O_TMPFILE
    const QStringList open = openFilesIn(writer.processId(), dir.path());
    QCOMPARE(open.size(), 1);
    QVERIFY2(open.first().endsWith(QLatin1String("(deleted)")), qPrintable(open.first()));
    QVERIFY2(entriesBesides(dir.path(), {}).isEmpty(), qPrintable(entriesBesides(dir.path(), {}).join(' ')));
    killAndReap(writer);
    QVERIFY2(entriesBesides(dir.path(), {}).isEmpty(), qPrintable(entriesBesides(dir.path(), {}).join(' ')));
}

void TestOutputFiles::killedCliLeavesNoTemporary_data()
{
    QTest::addColumn<QStringList>("args"); // INPUT and OUTPUT stand for the paths
    QTest::newRow("export") << QStringList{"export", "INPUT", "--tensor", "weights", "--out", "OUTPUT/weights.npy"};
    QTest::newRow("stats") << QStringList{"stats", "INPUT", "--out", "OUTPUT/stats.json"};
}

// The CLI killed while its output file is open (seen in /proc/PID/fd): the output folder
// holds nothing afterwards.
void TestOutputFiles::killedCliLeavesNoTemporary()
{
    QFETCH(QStringList, args);
    QTemporaryDir inputs, outputs;
    QVERIFY(inputs.isValid() && outputs.isValid());
    const QString input = writeLargeAttentionFile(inputs.filePath(QStringLiteral("attentions.npy")));
    QVERIFY(!input.isEmpty());
    args.replaceInStrings(QStringLiteral("INPUT"), input);
    args.replaceInStrings(QStringLiteral("OUTPUT"), outputs.path());
    QProcess cli;
    cli.start(QStringLiteral(ATTNSCOPE_CLI), args);
    QVERIFY(cli.waitForStarted());
    QStringList open;
    while (open.isEmpty() && test::isRunning(cli))
        open = openFilesIn(cli.processId(), outputs.path());
    QVERIFY2(!open.isEmpty(), "the command ended before its output file was seen open");
    killAndReap(cli);
    QVERIFY2(entriesBesides(outputs.path(), {}).isEmpty(), qPrintable(entriesBesides(outputs.path(), {}).join(' ')));
}

// `stats` opens its output before it reads and computes (minutes for a long file): a folder it
// cannot write to is reported first, even when the input is wrong too.
void TestOutputFiles::statsSaysItCannotWriteBeforeReading()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString out = dir.filePath(QStringLiteral("missing/stats.json"));
    const test::CliRun run = test::runCli({"stats", dir.filePath(QStringLiteral("absent.npy")), "--out", out});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains(QLatin1String("missing/stats.json")), qPrintable(run.err));
    QVERIFY2(!run.err.contains(QLatin1String("absent.npy")), qPrintable(run.err));
    QCOMPARE(run.err.trimmed().count('\n'), 0);
}

// Where the file system has no O_TMPFILE the temporary has a name; a writer killed with it
// leaves it, and the next writer in that folder removes it (nobody holds its lock).
void TestOutputFiles::abandonedNamedTemporaryIsSwept()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QProcess writer;
    QString said;
    QVERIFY2(startWriter(writer, dir.filePath(QStringLiteral("out.npy")), 8 << 20, true, &said), qPrintable(said));
    QCOMPARE(said, QStringLiteral("writing named"));
    const QStringList during = entriesBesides(dir.path(), {});
    QCOMPARE(during.size(), 1);
    QVERIFY2(during.first().startsWith(QLatin1String("out.npy.attnscope-")), qPrintable(during.first()));
    killAndReap(writer);
    QCOMPARE(entriesBesides(dir.path(), {}), during);
    // Also a file an older version left (no lock was ever taken on it).
    QFile older(dir.filePath(QStringLiteral("other.csv.attnscope-Ab12Cd")));
    QVERIFY(older.open(QIODevice::WriteOnly));
    older.close();

    AtomicFileWriter next(dir.filePath(QStringLiteral("stats.json")).toStdString());
    QVERIFY(next.open().ok());
    next.write(std::string_view("{}"));
    QVERIFY(next.commit().ok());
    QCOMPARE(entriesBesides(dir.path(), {}), QStringList{QStringLiteral("stats.json")});
}

// A writer that is alive keeps its temporary whatever its process id, and commits it whole,
// while other writers in the same folder come and go.
void TestOutputFiles::liveWritersTemporaryIsKept_data()
{
    QTest::addColumn<bool>("named");
    QTest::newRow("named") << true;
    QTest::newRow("unnamed") << false;
}

void TestOutputFiles::liveWritersTemporaryIsKept()
{
    QFETCH(bool, named);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString target = dir.filePath(QStringLiteral("big.npy"));
    QProcess writer;
    QString said;
    const qint64 bytes = 8 << 20;
    QVERIFY2(startWriter(writer, target, bytes, named, &said), qPrintable(said));
    const QStringList during = entriesBesides(dir.path(), {});
    QCOMPARE(during.size(), named ? 1 : 0);

    AtomicFileWriter::setUnnamedTemporariesAllowed(!named);
    AtomicFileWriter other(dir.filePath(QStringLiteral("small.json")).toStdString());
    QVERIFY(other.open().ok());
    other.write(std::string_view("{}"));
    QVERIFY(other.commit().ok());
    AtomicFileWriter::setUnnamedTemporariesAllowed(true);
    QCOMPARE(entriesBesides(dir.path(), {QStringLiteral("small.json")}), during);

    writer.write("go\n");
    QVERIFY(writer.waitForFinished(60000));
    QCOMPARE(writer.exitCode(), 0);
    QCOMPARE(QString::fromUtf8(writer.readAll()).trimmed(), QStringLiteral("committed"));
    QCOMPARE(QFileInfo(target).size(), bytes);
    const QByteArray written = test::readAll(target);
    QVERIFY(written.startsWith("abcdefghijklmnopqrstuvwxyzabc"));
    QCOMPARE(written.back(), char('a' + (bytes - 1) % 26));
    QCOMPARE(entriesBesides(dir.path(), {}), (QStringList{QStringLiteral("big.npy"), QStringLiteral("small.json")}));
}

// compute stages its files in a folder (.attnscope-partial-*) that the next compute removes when
// its run was killed. Told by the process id in its name, a run in another PID namespace (a
// container sharing the folder, where every compute may be process 1) was taken for gone while
// it wrote, and a killed one whose number is alive here was kept for good. A run holds its
// folder's lock instead.
void TestOutputFiles::computeStagingIsToldByItsLockNotItsPid()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString out = tmp.filePath(QStringLiteral("out"));
    QVERIFY(QDir().mkpath(out));
    QProcess gone;
    gone.start(QStringLiteral("true"));
    QVERIFY(gone.waitForFinished());
    // Killed elsewhere, with a number that is a live process here (this one); nobody holds it.
    const QString killed = QStringLiteral(".attnscope-partial-%1").arg(QCoreApplication::applicationPid());
    // Alive elsewhere, with a number that means nothing here; it holds its lock.
    const QString alive = QStringLiteral(".attnscope-partial-%1").arg(gone.processId());
    for (const QString &name : {killed, alive}) {
        QVERIFY(QDir(out).mkpath(name));
        QFile part(QDir(out).filePath(name + QStringLiteral("/q.npy")));
        QVERIFY(part.open(QIODevice::WriteOnly) && part.write(QByteArray(1000, 'x')) == 1000);
    }
    const int held = ::open(QFile::encodeName(QDir(out).filePath(alive)).constData(), O_RDONLY | O_DIRECTORY);
    QVERIFY(held >= 0 && ::flock(held, LOCK_EX) == 0);
    const test::CliRun r =
        test::runCli({QStringLiteral("compute"), test::example("padding-mask"), QStringLiteral("--out"), out});
    ::close(held);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(!QFileInfo::exists(QDir(out).filePath(killed)), "a killed run's folder was kept");
    QVERIFY2(QFileInfo::exists(QDir(out).filePath(alive)), "a running compute's folder was removed");
    QCOMPARE(entriesBesides(out, {alive}).size(), 7); // q, k, v, scores, weights, context, output
}

QTEST_GUILESS_MAIN(TestOutputFiles)
#include "tst_outputfiles.moc"
