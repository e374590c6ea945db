// attnscope-cli against hostile input and a hostile machine (issue 8): memory caps, inputs that
// never end, hostile project files, outputs that would overwrite inputs, interrupted and
// failing writes, results that overflow. Every case is one line on stderr, a non-zero exit
// and nothing half-written.

#include "../common/CliRunner.h"
#include "../common/TestUtil.h"

#include <QDir>
#include <QObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <algorithm>

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
using test::sourcePath;

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

// A float32 .npy of a rows x cols matrix whose entries are 0.1 * (i + 1) * (j - 1).
QByteArray npyMatrix(int rows, int cols)
{
    QByteArray header =
        QStringLiteral("{'descr': '<f4', 'fortran_order': False, 'shape': (%1, %2), }").arg(rows).arg(cols).toLatin1();
    header += QByteArray(63 - (10 + header.size()) % 64, ' ') + '\n';
    QByteArray bytes = QByteArray("\x93NUMPY\x01\x00", 8);
    bytes += char(header.size() & 0xff);
    bytes += char(header.size() >> 8);
    bytes += header;
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j) {
            const float v = 0.1f * float(i + 1) * float(j - 1);
            bytes += QByteArray(reinterpret_cast<const char *>(&v), sizeof v);
        }
    return bytes;
}

// A float16 .npy of shape [layers, 1, tokens, tokens] holding zeros, made sparse (truncate):
// large in T without using the disk.
bool writeSparseAttentionNpy(const QString &path, int layers, int tokens)
{
    QByteArray header = QStringLiteral("{'descr': '<f2', 'fortran_order': False, 'shape': (%1, 1, %2, %2), }")
                            .arg(layers)
                            .arg(tokens)
                            .toLatin1();
    header += QByteArray(63 - (10 + header.size()) % 64, ' ') + '\n';
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return false;
    f.write(QByteArray("\x93NUMPY\x01\x00", 8));
    const char length[2] = {char(header.size() & 0xff), char(header.size() >> 8)};
    f.write(length, 2);
    f.write(header);
    return f.resize(f.size() + qint64(layers) * tokens * tokens * 2);
}

// True when text holds a control character other than a line break (ESC, BEL, CR...).
bool hasControlCharacters(const QString &text)
{
    return std::any_of(text.begin(), text.end(), [](QChar c) {
        return (c.unicode() < 0x20 && c != QLatin1Char('\n')) || (c.unicode() >= 0x7f && c.unicode() <= 0x9f);
    });
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
    void outputsReplacingWhatTheCommandReadAreRefused_data();
    void outputsReplacingWhatTheCommandReadAreRefused();
    void showPrintsNoTerminalEscapesFromTheProject();
    void attentionFileErrorsPrintNoControlBytes();
    void csvLabelsThatAreFormulasAreNeutralised();
    void rolloutBeyondItsCostIsRefusedBeforeAllocating_data();
    void rolloutBeyondItsCostIsRefusedBeforeAllocating();
    void renderToAFullDiskGivesTheReason_data();
    void renderToAFullDiskGivesTheReason();
    void errorsStayOneLineWithoutXdgRuntimeDir();
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
    // `show /dev/zero` read without limit; a FIFO with no writer blocked in open(). Each run
    // is bounded (20 s) only to tell a hang from an answer.
    Run zero = runLimited({}, {"show", "/dev/zero"}, 20000);
    QCOMPARE(zero.code, 1);
    QCOMPARE(zero.err.trimmed(), QStringLiteral("attnscope-cli: /dev/zero: not a text file (a NUL byte at offset 0)"));
    QTemporaryDir tmp;
    const QString fifo = tmp.filePath("p.attnscope.json");
    QVERIFY(::mkfifo(fifo.toLocal8Bit().constData(), 0600) == 0);
    Run pipe = runLimited({}, {"show", fifo}, 20000);
    QCOMPARE(pipe.code, 1);
    QVERIFY2(pipe.err.startsWith("attnscope-cli: " + fifo + ": not valid JSON"), qPrintable(pipe.err));
    QVERIFY(zero.code != -1 && pipe.code != -1); // both answered on their own
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

void TestCliSafety::outputsReplacingWhatTheCommandReadAreRefused_data()
{
    // Arguments (PROJ: the folder holding the inputs) and the file the refusal names.
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("replaced");
    QTest::newRow("compute into the folder of a reference")
        << QStringList{"compute", "PROJ/p.attnscope.json", "--out", "PROJ"} << "q.npy";
    QTest::newRow("compute --pool into the folder of a reference")
        << QStringList{"compute", "PROJ/o.attnscope.json", "--out", "PROJ", "--pool", "2"} << "output.npy";
    QTest::newRow("export onto a reference")
        << QStringList{"export", "PROJ/p.attnscope.json", "--tensor", "weights", "--out", "PROJ/q.npy"} << "q.npy";
    QTest::newRow("export of maps onto a reference")
        << QStringList{"export", "PROJ/p.attnscope.json", "--tensor", "mean", "--out", "PROJ/sub/../q.npy"} << "q.npy";
    QTest::newRow("stats onto the tokenizer")
        << QStringList{"stats", "PROJ/model", "--text", "hello world", "--out", "PROJ/model/vocab.json"}
        << "vocab.json";
    QTest::newRow("stats onto the token sidecar")
        << QStringList{"stats", "PROJ/a.npy", "--out", "PROJ/a.tokens.json"} << "a.tokens.json";
    QTest::newRow("stats onto a linked sidecar")
        << QStringList{"stats", "PROJ/a.npy", "--out", "PROJ/link.json"} << "a.tokens.json";
}

void TestCliSafety::outputsReplacingWhatTheCommandReadAreRefused()
{
    // The "output is the input" guard looked at the positional argument only: `compute
    // p.attnscope.json --out .` replaced the project's q.npy, `stats MODEL --out
    // MODEL/vocab.json` the tokenizer, `stats a.npy --out a.tokens.json` the labels.
    QFETCH(QStringList, args);
    QFETCH(QString, replaced);
    QTemporaryDir tmp;
    const QString dir = tmp.path();
    QVERIFY(QDir(dir).mkdir("sub"));
    writeFile(dir + "/q.npy", npyMatrix(4, 3));
    QByteArray project = readAll(example("self-attention-tutorial"));
    nlohmann::ordered_json json = nlohmann::ordered_json::parse(project.toStdString());
    json["weights"]["q"] = {{"npy", "q.npy"}};
    writeFile(dir + "/p.attnscope.json", QByteArray::fromStdString(json.dump()));
    // A project whose query input is a reference named like a file compute --pool writes.
    writeFile(dir + "/output.npy", npyMatrix(3, 4));
    json["query"]["x"] = {{"npy", "output.npy"}};
    writeFile(dir + "/o.attnscope.json", QByteArray::fromStdString(json.dump()));
    const QString attention = sourcePath("tests/fixtures/attention/lhtt_f32");
    QVERIFY(QFile::copy(attention + ".npy", dir + "/a.npy"));
    QVERIFY(QFile::copy(attention + ".tokens.json", dir + "/a.tokens.json"));
    QVERIFY(QFile::link(dir + "/a.tokens.json", dir + "/link.json"));
    QVERIFY(QDir(dir).mkdir("model"));
    const QString model = sourcePath("tests/fixtures/models/gpt2-f32");
    for (const char *name : {"config.json", "model.safetensors", "vocab.json", "merges.txt"})
        QVERIFY(QFile::copy(model + "/" + name, dir + "/model/" + name));
    const auto before = folderContents(dir), modelBefore = folderContents(dir + "/model");

    args.replaceInStrings("PROJ", dir);
    Run r = runCli(args);
    QCOMPARE(r.code, 2);
    QCOMPARE(r.err.count('\n'), 1);
    static const QRegularExpression message("^attnscope-cli: (compute|export|stats): --out .* would replace (.*), "
                                            "which this command read; choose another (name|folder)$");
    const auto match = message.match(r.err.trimmed());
    QVERIFY2(match.hasMatch(), qPrintable(r.err));
    QVERIFY2(match.captured(2).endsWith("/" + replaced), qPrintable(r.err));
    QVERIFY2(folderContents(dir) == before, "an input changed");
    QVERIFY2(folderContents(dir + "/model") == modelBefore, "a model file changed");
}

void TestCliSafety::showPrintsNoTerminalEscapesFromTheProject()
{
    // `show` printed a title ESC]0;...BEL (sets the window title) and labels with ESC[2J
    // (clears the screen) as they were.
    QTemporaryDir tmp;
    nlohmann::ordered_json json =
        nlohmann::ordered_json::parse(readAll(example("self-attention-tutorial")).toStdString());
    json["title"] = "title\x1b]0;pwned\x07\x1b[2J\r\u009b";
    json["query"]["tokens"][0] = "a\x1b[31mred\x1b[0m";
    json["query"]["tokens"][1] = "\x1b[2J\x08\t";
    const QString path = tmp.filePath("evil.attnscope.json");
    writeFile(path, QByteArray::fromStdString(json.dump()));
    Run r = runCli({"show", path, "--backend", "cpu"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(!hasControlCharacters(r.out), qPrintable(r.out));
    QVERIFY2(r.out.contains(QStringLiteral("title\\u001b]0;pwned\\u0007\\u001b[2J")), qPrintable(r.out));
    QVERIFY2(r.out.contains(QStringLiteral("a\\u001b[31mred")), qPrintable(r.out));
    QVERIFY(r.err.isEmpty());
}

void TestCliSafety::attentionFileErrorsPrintNoControlBytes()
{
    // An attention file that fails to parse was named raw in the error line: its name's escape
    // sequence reached the terminal.
    QTemporaryDir tmp;
    const QString path = tmp.filePath(QStringLiteral("a\x1b]0;pwned\x07\x1b[2J.npy"));
    writeFile(path, "not an array");
    for (const QStringList &args :
         {QStringList{"stats", path, "--out", tmp.filePath("s.json")},
          QStringList{"render", path, "--out", tmp.filePath("f.png")},
          QStringList{"export", path, "--tensor", "weights", "--out", tmp.filePath("w.npy")}}) {
        Run r = runCli(args);
        QCOMPARE(r.code, 1);
        QCOMPARE(r.err.count('\n'), 1);
        QVERIFY2(r.err.startsWith("attnscope-cli: "), qPrintable(r.err));
        QVERIFY2(!hasControlCharacters(r.err), qPrintable(r.err.toUtf8().toPercentEncoding(" :/()")));
    }
}

void TestCliSafety::csvLabelsThatAreFormulasAreNeutralised()
{
    // A label "=HYPERLINK(...)" was exported to CSV as a formula a spreadsheet runs.
    QTemporaryDir tmp;
    nlohmann::ordered_json json =
        nlohmann::ordered_json::parse(readAll(example("self-attention-tutorial")).toStdString());
    json["query"]["tokens"] = {"=HYPERLINK(\"http://x\")", "@SUM(A1)", "-2+3"};
    const QString path = tmp.filePath("p.attnscope.json");
    writeFile(path, QByteArray::fromStdString(json.dump()));
    const QString csv = tmp.filePath("q.csv");
    Run r = runCli({"export", path, "--tensor", "scores", "--out", csv, "--backend", "cpu"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QList<QByteArray> lines = readAll(csv).split('\n');
    QVERIFY(lines.size() >= 4);
    QCOMPARE(lines[0].trimmed(), QByteArray("scores,\"'=HYPERLINK(\"\"http://x\"\")\",'@SUM(A1),'-2+3"));
    QVERIFY2(lines[1].startsWith("\"'=HYPERLINK("), lines[1].constData());
    QVERIFY2(lines[2].startsWith("'@SUM(A1),"), lines[2].constData());
    QVERIFY2(lines[3].startsWith("'-2+3,"), lines[3].constData());
    // Numbers stay numbers: negative scores are written as they are.
    Run q = runCli({"export", path, "--tensor", "q", "--out", tmp.filePath("w.csv"), "--backend", "cpu"});
    QVERIFY2(q.code == 0, qPrintable(q.err));
    writeFile(tmp.filePath("neg.npy"), npyMatrix(4, 3));
    json["weights"]["q"] = {{"npy", "neg.npy"}};
    writeFile(path, QByteArray::fromStdString(json.dump()));
    Run n = runCli({"export", path, "--tensor", "q", "--out", tmp.filePath("n.csv"), "--backend", "cpu"});
    QVERIFY2(n.code == 0, qPrintable(n.err));
    const QByteArray negative = readAll(tmp.filePath("n.csv"));
    QVERIFY2(negative.contains(",-") && !negative.contains(",'-"), negative.constData());
}

void TestCliSafety::rolloutBeyondItsCostIsRefusedBeforeAllocating_data()
{
    QTest::addColumn<QString>("command");
    QTest::addColumn<int>("layers");
    QTest::addColumn<int>("tokens");
    QTest::addColumn<QString>("memoryLimit");
    QTest::addColumn<QString>("message");
    // 16384 tokens: four T x T doubles are 8 GiB, more than the 4 GiB allowed.
    const QString memory = "rollout: needs 8\\.0 GiB of memory \\(four 16384 x 16384 matrices of doubles\\); this "
                           "machine allows [0-9.]+ [MG]iB";
    // 31 layers of 4096 tokens: 512 MiB, but 30 products, 4.1e12 operations (T = 8192 ran for minutes).
    const QString operations = "rollout: multiplying the 4096 x 4096 matrices of 31 layers needs about "
                               "4\\.1e\\+12 operations, more than the 4\\.0e\\+12 allowed \\(minutes of work\\)";
    QTest::newRow("export, memory") << "export" << 1 << 16384 << "4G" << memory;
    QTest::newRow("render, memory") << "render" << 1 << 16384 << "4G" << memory;
    QTest::newRow("export, operations") << "export" << 31 << 4096 << "" << operations;
}

void TestCliSafety::rolloutBeyondItsCostIsRefusedBeforeAllocating()
{
    // `export --tensor rollout` had no check (the GUI had its own): T = 20000 allocated 7.8 GB
    // before bad_alloc, a 24-layer T = 8192 file ran for minutes.
    QFETCH(QString, command);
    QFETCH(int, layers);
    QFETCH(int, tokens);
    QFETCH(QString, memoryLimit);
    QFETCH(QString, message);
    QTemporaryDir tmp;
    const QString input = tmp.filePath("long.npy");
    QVERIFY(writeSparseAttentionNpy(input, layers, tokens));
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    if (!memoryLimit.isEmpty())
        env.insert("ATTNSCOPE_MEMORY_LIMIT", memoryLimit);
    const QString out = tmp.filePath(command == "export" ? "rollout.npy" : "rollout.png");
    const QStringList args = command == "export" ? QStringList{"export", input, "--tensor", "rollout", "--out", out}
                                                 : QStringList{"render", input, "--view", "rollout", "--out", out};
    Run r = test::runProgram(QStringLiteral(ATTNSCOPE_CLI), args, 240000, env);
    QCOMPARE(r.code, 1);
    // The file's rows are all zero: said first, in a line of its own ("row sums 0 to 0: ... masked").
    QStringList lines = r.err.split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 2);
    QVERIFY2(lines[0].startsWith(input + ": row sums 0 to 0: "), qPrintable(lines[0]));
    r.err = lines[1];
    const QRegularExpression expected("^attnscope-cli: (.*: )?" + message + "$");
    QVERIFY2(expected.match(r.err.trimmed()).hasMatch(), qPrintable(r.err));
    QVERIFY(!QFile::exists(out));
}

void TestCliSafety::renderToAFullDiskGivesTheReason_data()
{
    QTest::addColumn<QString>("suffix");
    QTest::newRow("png") << "png";
    QTest::newRow("svg") << "svg";
    QTest::newRow("pdf") << "pdf";
}

void TestCliSafety::renderToAFullDiskGivesTheReason()
{
    // render wrote through libpng's and Qt's writers, whose words reached the user instead of
    // "No space left on device".
    QFETCH(QString, suffix);
    QTemporaryDir tmp;
    QString full = tmp.filePath("full");
    if (::mknod(full.toLocal8Bit().constData(), S_IFCHR | 0666, makedev(1, 7)) != 0)
        full = QStringLiteral("/dev/full");
    const QString out = tmp.filePath("figure." + suffix);
    QVERIFY(QFile::link(full, out));
    Run r = runCli({"render", example("padding-mask"), "--out", out, "--backend", "cpu"});
    QCOMPARE(r.code, 1);
    QCOMPARE(r.err, QStringLiteral("attnscope-cli: %1: write failed (No space left on device)\n").arg(out));
    QVERIFY(QFileInfo(full).exists() && !QFileInfo(full).isFile()); // still the device
}

void TestCliSafety::errorsStayOneLineWithoutXdgRuntimeDir()
{
    // Without XDG_RUNTIME_DIR, Qt's platform start-up (render) printed "QStandardPaths:
    // XDG_RUNTIME_DIR not set, defaulting to ..." beside the command's one-line error.
    QTemporaryDir tmp;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove("XDG_RUNTIME_DIR");
    Run failed = test::runProgram(QStringLiteral(ATTNSCOPE_CLI),
                                  {"render", tmp.filePath("missing.npy"), "--out", tmp.filePath("f.png")}, 240000, env);
    QCOMPARE(failed.code, 1);
    QCOMPARE(failed.err.count('\n'), 1);
    QVERIFY2(failed.err.startsWith("attnscope-cli: " + tmp.filePath("missing.npy")), qPrintable(failed.err));
    Run done = test::runProgram(QStringLiteral(ATTNSCOPE_CLI),
                                {"render", example("padding-mask"), "--out", tmp.filePath("f.png"), "--backend", "cpu"},
                                240000, env);
    QCOMPARE(done.code, 0);
    QVERIFY2(done.err.isEmpty(), qPrintable(done.err));
}

QTEST_GUILESS_MAIN(TestCliSafety)
#include "tst_cli_safety.moc"
