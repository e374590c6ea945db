// attnscope-cli against hostile input and a hostile machine (issue 8): memory caps, inputs that
// never end, hostile project files, outputs that would overwrite inputs, interrupted and
// failing writes, results that overflow. Every case is one line on stderr, a non-zero exit
// and nothing half-written.

#include "../common/CliRunner.h"
#include "../common/TestUtil.h"

#include <QDir>
#include <QElapsedTimer>
#include <QObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

using namespace attnscope;
using attnscope::test::runCli;
using Run = attnscope::test::CliRun;

namespace {

using test::example;
using test::readAll;

const QStringList kTensorFiles = {"q.npy", "k.npy", "v.npy", "scores.npy", "weights.npy", "context.npy", "output.npy"};

// attnscope-cli under `prlimit` (address space or file size caps), or with a short timeout.
Run runLimited(const QStringList &limits, const QStringList &args, int timeoutMs = 120000)
{
    if (limits.isEmpty())
        return test::runProgram(QStringLiteral(ATTNSCOPE_CLI), args, timeoutMs);
    return test::runProgram(QStringLiteral("prlimit"), limits + QStringList{QStringLiteral(ATTNSCOPE_CLI)} + args,
                            timeoutMs);
}

// A self-attention project of `tokens` one-dimensional tokens and `heads` heads of size 1.
QString writeLongProject(const QString &path, int tokens, int heads)
{
    nlohmann::ordered_json x = nlohmann::ordered_json::array(), labels = nlohmann::ordered_json::array(),
                           row = nlohmann::ordered_json::array();
    for (int i = 0; i < tokens; ++i) {
        x.push_back({double((i * 37) % 101) / 101.0});
        labels.push_back(QStringLiteral("t%1").arg(i).toStdString());
    }
    for (int h = 0; h < heads; ++h)
        row.push_back(0.25 * (h + 1));
    const nlohmann::ordered_json project = {{"format", "attnscope"},
                                            {"version", 1},
                                            {"mode", "self"},
                                            {"heads", heads},
                                            {"headDimQK", 1},
                                            {"headDimV", 1},
                                            {"scale", "none"},
                                            {"query", {{"tokens", labels}, {"x", x}}},
                                            {"weights", {{"q", {row}}, {"k", {row}}, {"v", {row}}}}};
    QFile f(path);
    if (f.open(QIODevice::WriteOnly))
        f.write(QByteArray::fromStdString(project.dump()));
    return path;
}

void writeFile(const QString &path, const QByteArray &bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
}

// Every file of a folder (hidden ones too) with its bytes.
std::map<QString, QByteArray> folderContents(const QString &dir)
{
    std::map<QString, QByteArray> files;
    for (const QString &name : QDir(dir).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden))
        files[name] = readAll(QDir(dir).filePath(name));
    return files;
}

} // namespace

class TestCliSafety : public QObject
{
    Q_OBJECT

private slots:
    void computeRefusesWhatMemoryCannotHold();
    void exportJsonStreamsUnderMemoryCap();
    void benchRefusesWhatMemoryCannotHold();
    void showDevZeroAndFifoReturnQuickly();
    void projectFileLargerThanTheCapIsRefusedBySize();
    void hostileProjectFileGivesOneLine();
    void exportOntoItsProjectIsRefused_data();
    void exportOntoItsProjectIsRefused();
    void computeOntoItsProjectIsRefused();
    void computeRemovesStalePartialFolders();
    void computeIsWholeOrNothingWhenAWriteFails_data();
    void computeIsWholeOrNothingWhenAWriteFails();
    void exportToAFullDiskGivesTheReason();
    void nonFiniteResultsExitNonZero_data();
    void nonFiniteResultsExitNonZero();
};

void TestCliSafety::computeRefusesWhatMemoryCannotHold()
{
    ATTNSCOPE_SKIP_IF_ADDRESS_SPACE_LIMITS_UNUSABLE();
    // 40,000 tokens: a 480 KB file whose trace needs 14.4 GB. The fixed 16 GiB limit let it
    // through and the CLI died with bad_alloc under a memory cap.
    QTemporaryDir tmp;
    const QString project = writeLongProject(tmp.filePath("long.attnscope.json"), 40000, 1);
    Run r = runLimited({"--as=4294967296"}, {"compute", project, "--out", tmp.filePath("out"), "--backend", "cpu"});
    QCOMPARE(r.code, 1);
    static const QRegularExpression message(
        "^attnscope-cli: .*long\\.attnscope\\.json: size: this problem needs 13\\.4 GiB for its intermediate tensors; "
        "this machine allows [0-9.]+ [MG]iB \\(for long sequences: compute --pool N writes pooled weights without "
        "the full trace\\)$");
    QVERIFY2(message.match(r.err.trimmed()).hasMatch(), qPrintable(r.err));
    QVERIFY(!QFile::exists(tmp.filePath("out")));
}

void TestCliSafety::exportJsonStreamsUnderMemoryCap()
{
    ATTNSCOPE_SKIP_IF_ADDRESS_SPACE_LIMITS_UNUSABLE();
    // The .json export took ~13x the trace (a DOM of every number, then its text): a 32 MB
    // trace died under a 400 MB cap. Streamed, it needs little more than the trace.
    QTemporaryDir tmp;
    const QString project = writeLongProject(tmp.filePath("mid.attnscope.json"), 1000, 4);
    const QString out = tmp.filePath("all.json");
    Run r = runLimited({"--as=419430400"}, {"export", project, "--out", out, "--backend", "cpu"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QByteArray text = readAll(out);
    QVERIFY(text.size() > 50 << 20);
    QVERIFY(text.startsWith("{\"format\":\"attnscope-trace\",\"version\":1,\"queryTokens\":[\"t0\",\"t1\""));
    QVERIFY(text.endsWith("}}\n"));
    QVERIFY(nlohmann::json::accept(text.constData(), text.constData() + text.size()));
}

void TestCliSafety::benchRefusesWhatMemoryCannotHold()
{
    // bench had no size check: its random inputs alone (2^20 x 2^16 floats) are 256 GiB.
    Run r = runCli({"bench", "--tokens", "1048576", "--dim", "65536", "--heads", "1", "--backend", "cpu"});
    QCOMPARE(r.code, 1);
    static const QRegularExpression message("^attnscope-cli: size: this problem needs [0-9.]+ [TP]iB for its inputs "
                                            "and intermediate tensors; this machine allows [0-9.]+ [MGT]iB$");
    QVERIFY2(message.match(r.err.trimmed()).hasMatch(), qPrintable(r.err));
}

void TestCliSafety::showDevZeroAndFifoReturnQuickly()
{
    // `show /dev/zero` read without limit; a FIFO with no writer blocked in open().
    QElapsedTimer timer;
    timer.start();
    Run zero = runLimited({}, {"show", "/dev/zero"}, 20000);
    QCOMPARE(zero.code, 1);
    QCOMPARE(zero.err.trimmed(), QStringLiteral("attnscope-cli: /dev/zero: not a text file (a NUL byte at offset 0)"));
    QTemporaryDir tmp;
    const QString fifo = tmp.filePath("p.attnscope.json");
    QVERIFY(::mkfifo(fifo.toLocal8Bit().constData(), 0600) == 0);
    Run pipe = runLimited({}, {"show", fifo}, 20000);
    QCOMPARE(pipe.code, 1);
    QVERIFY2(pipe.err.startsWith("attnscope-cli: " + fifo + ": not valid JSON"), qPrintable(pipe.err));
    QVERIFY(timer.elapsed() < 20000);
}

void TestCliSafety::projectFileLargerThanTheCapIsRefusedBySize()
{
    QTemporaryDir tmp;
    const QString path = tmp.filePath("huge.attnscope.json");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    QVERIFY(f.resize(qint64(3) << 30)); // sparse
    f.close();
    Run r = runLimited({}, {"show", path}, 20000);
    QCOMPARE(r.code, 1);
    static const QRegularExpression message(
        "^attnscope-cli: .*huge\\.attnscope\\.json: the file is 3\\.0 GiB; files up to [0-9.]+ [MG]iB can be read "
        "on this machine$");
    QVERIFY2(message.match(r.err.trimmed()).hasMatch(), qPrintable(r.err));
}

void TestCliSafety::hostileProjectFileGivesOneLine()
{
    // 1e400 threw nlohmann::out_of_range through the reader: the CLI aborted.
    QTemporaryDir tmp;
    const QString path = tmp.filePath("p.attnscope.json");
    QByteArray text = readAll(example("self-attention-tutorial"));
    text.replace("\"heads\": 1", "\"heads\": 1e400");
    writeFile(path, text);
    Run r = runCli({"show", path});
    QCOMPARE(r.code, 1);
    QCOMPARE(r.err, QStringLiteral("attnscope-cli: %1: heads: the number 1e400 is out of range (numbers must be "
                                   "finite; float32 holds at most 3.4e38)\n")
                        .arg(path));
}

void TestCliSafety::exportOntoItsProjectIsRefused_data()
{
    QTest::addColumn<QString>("out"); // relative to the folder holding p.json
    QTest::newRow("same path") << "p.json";
    QTest::newRow("other spelling") << "sub/../p.json";
    QTest::newRow("symbolic link") << "link.json";
    QTest::newRow("hard link") << "hard.json";
}

void TestCliSafety::exportOntoItsProjectIsRefused()
{
    // `export P --out P` overwrote the project with trace JSON and exited 0.
    QFETCH(QString, out);
    QTemporaryDir tmp;
    QVERIFY(QDir(tmp.path()).mkdir("sub"));
    const QString project = tmp.filePath("p.json");
    QVERIFY(QFile::copy(example("self-attention-tutorial"), project));
    QVERIFY(QFile::link(project, tmp.filePath("link.json")));
    QVERIFY(::link(project.toLocal8Bit().constData(), tmp.filePath("hard.json").toLocal8Bit().constData()) == 0);
    const QByteArray before = readAll(project);
    Run r = runCli({"export", project, "--out", tmp.filePath(out)});
    QCOMPARE(r.code, 2);
    QCOMPARE(r.err.trimmed(), QStringLiteral("attnscope-cli: export: --out %1 is the project file itself; it would be "
                                             "overwritten")
                                  .arg(tmp.filePath(out)));
    QCOMPARE(readAll(project), before);
}

void TestCliSafety::computeOntoItsProjectIsRefused()
{
    QTemporaryDir tmp;
    const QString project = tmp.filePath("weights.npy");
    QVERIFY(QFile::copy(example("self-attention-tutorial"), project));
    const QByteArray before = readAll(project);
    Run r = runCli({"compute", project, "--out", tmp.path()});
    QCOMPARE(r.code, 2);
    QCOMPARE(r.err.trimmed(), QStringLiteral("attnscope-cli: compute: --out %1 would overwrite the project file %2 "
                                             "(weights.npy)")
                                  .arg(tmp.path(), project));
    QCOMPARE(readAll(project), before);
}

void TestCliSafety::computeRemovesStalePartialFolders()
{
    // A killed compute left .attnscope-partial-* folders (hundreds of MB) behind for good.
    QTemporaryDir tmp;
    QProcess sleeper; // a pid that existed and is gone
    sleeper.start("true");
    QVERIFY(sleeper.waitForFinished());
    const qint64 dead = sleeper.processId() > 0 ? sleeper.processId() : 999999;
    QVERIFY(::kill(pid_t(dead), 0) != 0);
    const QString out = tmp.filePath("out");
    QVERIFY(QDir(tmp.path()).mkpath("out"));
    const QString staleBeside = QStringLiteral(".attnscope-partial-%1-out").arg(dead);
    const QString staleInside = QStringLiteral(".attnscope-partial-%1").arg(dead);
    const QString live = QStringLiteral(".attnscope-partial-%1-other").arg(QCoreApplication::applicationPid());
    for (const QString &folder : {tmp.filePath(staleBeside), QDir(out).filePath(staleInside), tmp.filePath(live)}) {
        QVERIFY(QDir().mkpath(folder));
        writeFile(folder + "/q.npy", QByteArray(1000, 'x'));
    }
    // A running compute holds its staging folder's lock; the folders of killed ones nobody holds.
    const int held = ::open(QFile::encodeName(tmp.filePath(live)).constData(), O_RDONLY | O_DIRECTORY);
    QVERIFY(held >= 0 && ::flock(held, LOCK_EX) == 0);
    Run r = runCli({"compute", example("padding-mask"), "--out", out});
    ::close(held);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(!QFile::exists(tmp.filePath(staleBeside)));
    QVERIFY(!QFile::exists(QDir(out).filePath(staleInside)));
    QVERIFY2(QFile::exists(tmp.filePath(live)), "a running process's staging folder was removed");
    QCOMPARE(QDir(out).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden).size(), kTensorFiles.size());
}

void TestCliSafety::computeIsWholeOrNothingWhenAWriteFails_data()
{
    QTest::addColumn<bool>("existing");
    QTest::newRow("new folder") << false;
    QTest::newRow("existing folder") << true;
}

void TestCliSafety::computeIsWholeOrNothingWhenAWriteFails()
{
    // The README promises whole or nothing; in an existing folder each file was replaced on
    // its own, so a failure left new and old files mixed. A file-size limit (`ulimit -f`)
    // makes the largest file fail after smaller ones were written.
    QFETCH(bool, existing);
    QTemporaryDir tmp;
    const QString bigger = example("cross-attention-translation");
    Run sizes = runCli({"compute", bigger, "--out", tmp.filePath("sizes")});
    QVERIFY2(sizes.code == 0, qPrintable(sizes.err));
    qint64 largest = 0, smallest = 1 << 30;
    for (const QString &file : kTensorFiles) {
        largest = std::max(largest, QFileInfo(tmp.filePath("sizes/" + file)).size());
        smallest = std::min(smallest, QFileInfo(tmp.filePath("sizes/" + file)).size());
    }
    QVERIFY(smallest < largest);

    QVERIFY(QDir(tmp.path()).mkdir("work"));
    const QString work = tmp.filePath("work");
    const QString out = QDir(work).filePath("out");
    if (existing) {
        Run first = runCli({"compute", example("self-attention-tutorial"), "--out", out});
        QVERIFY2(first.code == 0, qPrintable(first.err));
        writeFile(out + "/notes.txt", "mine");
    }
    const auto before = folderContents(out);
    Run r = runLimited({QStringLiteral("--fsize=%1").arg(largest - 1)}, {"compute", bigger, "--out", out});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains(": write failed (File too large)"), qPrintable(r.err));
    QCOMPARE(r.err.count('\n'), 1);
    QVERIFY2(folderContents(out) == before, "the output folder changed although compute failed");
    QCOMPARE(QDir(work).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden),
             existing ? QStringList{"out"} : QStringList{});
}

void TestCliSafety::exportToAFullDiskGivesTheReason()
{
    // A full disk was reported as "Unknown error". The link points at a private copy of the
    // /dev/full device where mknod is allowed: a CLI that replaced the link's target instead of
    // writing through it (QSaveFile does) must not clobber the system's /dev/full.
    QTemporaryDir tmp;
    QString full = tmp.filePath("full");
    if (::mknod(full.toLocal8Bit().constData(), S_IFCHR | 0666, makedev(1, 7)) != 0)
        full = QStringLiteral("/dev/full");
    const QString out = tmp.filePath("weights.npy");
    QVERIFY(QFile::link(full, out));
    Run r = runCli({"export", example("padding-mask"), "--out", out});
    QCOMPARE(r.code, 1);
    QCOMPARE(r.err.trimmed(), QStringLiteral("attnscope-cli: %1: write failed (No space left on device)").arg(out));
    QVERIFY(QFileInfo(full).exists() && !QFileInfo(full).isFile()); // still the device
}

void TestCliSafety::nonFiniteResultsExitNonZero_data()
{
    QTest::addColumn<QString>("command");
    QTest::newRow("compute") << "compute";
    QTest::newRow("export") << "export";
    QTest::newRow("show") << "show";
}

void TestCliSafety::nonFiniteResultsExitNonZero()
{
    // Finite inputs of 3e38 make Q·Kᵀ overflow float32: 30 fuzzer runs exited 0 with NaN.
    QFETCH(QString, command);
    QTemporaryDir tmp;
    const QString project = tmp.filePath("overflow.attnscope.json");
    writeFile(project, R"({"format": "attnscope", "version": 1, "mode": "self", "heads": 1, "headDimQK": 2,
        "headDimV": 2, "scale": "none", "query": {"tokens": ["a", "b"], "x": [[3e38, 3e38], [1, 2]]},
        "weights": {"q": [[1, 0], [0, 1]], "k": [[1, 0], [0, 1]], "v": [[1, 0], [0, 1]]}})");
    const QString out = tmp.filePath(command == "export" ? "all.npz" : "out");
    QStringList args = {command, project, "--backend", "cpu"};
    if (command != "show")
        args << "--out" << out;
    Run r = runCli(args);
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.startsWith("attnscope-cli: result: ") && r.err.contains(" values are not finite, the first in "),
             qPrintable(r.err));
    QCOMPARE(r.err.count('\n'), 1);
    QVERIFY(!QFile::exists(out));
    if (command == "show")
        QVERIFY(r.out.contains("scores")); // the steps are printed, so the overflow can be seen
}

QTEST_GUILESS_MAIN(TestCliSafety)
#include "tst_cli_safety.moc"
