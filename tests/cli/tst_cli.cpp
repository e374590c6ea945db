// attnscope-cli as a user runs it: the real executable through QProcess, real files written
// and read back.

#include "../common/CliRunner.h"
#include "../common/TestUtil.h"

#include "core/CpuBackend.h"
#include "core/Npy.h"
#include "core/ProjectFile.h"
#include "core/TraceExport.h"

#include <QDir>
#include <QElapsedTimer>
#include <QObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

using namespace attnscope;

using attnscope::test::runCli;
using Run = attnscope::test::CliRun;

namespace {

const QStringList kTensorFiles = {"q.npy", "k.npy", "v.npy", "scores.npy", "weights.npy", "context.npy", "output.npy"};

QByteArray readAll(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// Entries of a stored (uncompressed) ZIP, as numpy.savez writes and numpy.load reads them.
std::map<QString, QByteArray> unzipStored(const QByteArray &zip)
{
    std::map<QString, QByteArray> entries;
    auto u16 = [&](qsizetype at) { return quint32(quint8(zip[at])) | quint32(quint8(zip[at + 1])) << 8; };
    auto u32 = [&](qsizetype at) { return u16(at) | u16(at + 2) << 16; };
    qsizetype at = 0;
    while (at + 30 <= zip.size() && u32(at) == 0x04034b50) {
        if (u16(at + 8) != 0) // compression method: stored
            return {};
        const quint32 size = u32(at + 18), nameLength = u16(at + 26), extra = u16(at + 28);
        const QString name = QString::fromUtf8(zip.mid(at + 30, nameLength));
        entries[name] = zip.mid(at + 30 + nameLength + extra, size);
        at += 30 + nameLength + extra + size;
    }
    return entries;
}

QString example(const char *name)
{
    return test::sourcePath(QStringLiteral("resources/examples/%1.attnscope.json").arg(name));
}

// attnscope-cli under `prlimit` (address space or file size caps), or with a short timeout.
Run runLimited(const QStringList &limits, const QStringList &args, int timeoutMs = 120000)
{
    QProcess process;
    if (limits.isEmpty())
        process.start(QStringLiteral(ATTNSCOPE_CLI), args);
    else
        process.start(QStringLiteral("prlimit"), limits + QStringList{QStringLiteral(ATTNSCOPE_CLI)} + args);
    Run r;
    if (!process.waitForFinished(timeoutMs)) {
        process.kill();
        process.waitForFinished();
        r.err = QStringLiteral("timed out");
        return r;
    }
    r.code = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -2;
    r.out = QString::fromUtf8(process.readAllStandardOutput());
    r.err = QString::fromUtf8(process.readAllStandardError());
    return r;
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

class TestCli : public QObject
{
    Q_OBJECT

private slots:
    void helpAndVersion();
    void computeExamples_data();
    void computeExamples();
    void computeReproducesPyTorchFixtures_data();
    void computeReproducesPyTorchFixtures();
    void computeReplacesFilesInExistingDirectory();
    void computeErrors_data();
    void computeErrors();
    void malformedProjectLeavesNoOutput();
    void show();
    void bench();
    void benchErrors_data();
    void benchErrors();
    void devices();
    void exportEqualsCompute();
    void exportCsv();
    void exportErrors_data();
    void exportErrors();
    // Issue 8: hostile inputs, memory limits, data loss, I/O errors, non-finite results.
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

void TestCli::helpAndVersion()
{
    Run help = runCli({"--help"});
    QCOMPARE(help.code, 0);
    QVERIFY(help.out.contains("compute PROJECT --out DIR"));
    QVERIFY(help.out.contains("bench --tokens T"));
    Run version = runCli({"--version"});
    QCOMPARE(version.code, 0);
    QCOMPARE(version.out.trimmed(), QStringLiteral("attnscope-cli " ATTNSCOPE_VERSION));
    Run none = runCli({});
    QCOMPARE(none.code, 2);
    QVERIFY(none.err.startsWith("attnscope-cli: no command given"));
}

void TestCli::computeExamples_data()
{
    QTest::addColumn<QString>("project");
    for (const char *name :
         {"self-attention-tutorial", "multihead-causal", "cross-attention-translation", "padding-mask"})
        QTest::newRow(name) << example(name);
}

void TestCli::computeExamples()
{
    QFETCH(QString, project);
    QTemporaryDir tmp;
    const QString out = tmp.filePath("out");
    Run r = runCli({"compute", project, "--out", out, "--backend", "cpu"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(r.out.contains("backend: cpu"));
    QVERIFY(r.out.contains("device: Eigen"));

    auto parsed = readProjectFile(project.toStdString());
    QVERIFY(parsed.ok());
    const AttentionProblem &p = parsed->problem;
    const std::int64_t h = p.spec.heads, tq = p.tq(), tk = p.tk(), dk = p.spec.headDimQK, dv = p.spec.headDimV;
    const std::map<QString, std::vector<std::int64_t>> shapes = {
        {"q.npy", {h, tq, dk}},        {"k.npy", {h, tk, dk}},       {"v.npy", {h, tk, dv}},
        {"scores.npy", {h, tq, tk}},   {"weights.npy", {h, tq, tk}}, {"context.npy", {tq, h * dv}},
        {"output.npy", {tq, p.dOut()}}};
    // The files equal what the engine computes in-process, with design.md's shapes.
    auto trace = CpuBackend().compute(p);
    QVERIFY(trace.ok());
    const auto expected = traceNpyFiles(*trace);
    QCOMPARE(QDir(out).entryList(QDir::Files).size(), kTensorFiles.size());
    for (const QString &file : kTensorFiles) {
        auto got = readNpyFile((out + "/" + file).toStdString());
        QVERIFY2(got.ok(), got.ok() ? "" : got.message().c_str());
        QCOMPARE(got->shape, shapes.at(file));
        auto want = parseNpy(expected.at(file.toStdString()));
        QVERIFY(want.ok());
        const std::string diff = test::compareNpy(file.toStdString(), *got, *want);
        QVERIFY2(diff.empty(), diff.c_str());
    }
}

void TestCli::computeReproducesPyTorchFixtures_data()
{
    QTest::addColumn<QString>("folder");
    const QDir dir(test::sourcePath("tests/fixtures/torch"));
    for (const QString &c : dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot))
        QTest::newRow(qPrintable(c)) << dir.filePath(c);
}

void TestCli::computeReproducesPyTorchFixtures()
{
    QFETCH(QString, folder);
    QTemporaryDir tmp;
    Run r = runCli({"compute", folder + "/project.attnscope.json", "--out", tmp.path()});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    int compared = 0;
    for (const QString &file : kTensorFiles) {
        if (!QFile::exists(folder + "/" + file))
            continue;
        auto got = readNpyFile((tmp.path() + "/" + file).toStdString());
        auto want = readNpyFile((folder + "/" + file).toStdString());
        QVERIFY(got.ok() && want.ok());
        const std::string diff = test::compareNpy(file.toStdString(), *got, *want);
        QVERIFY2(diff.empty(), diff.c_str());
        ++compared;
    }
    QVERIFY(compared >= 2);
}

void TestCli::computeReplacesFilesInExistingDirectory()
{
    QTemporaryDir tmp;
    QFile keep(tmp.filePath("notes.txt"));
    QVERIFY(keep.open(QIODevice::WriteOnly));
    keep.write("mine");
    keep.close();
    QFile stale(tmp.filePath("output.npy"));
    QVERIFY(stale.open(QIODevice::WriteOnly));
    stale.write("stale");
    stale.close();
    Run r = runCli({"compute", example("padding-mask"), "--out", tmp.path()});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(QFile::exists(tmp.filePath("notes.txt")));
    auto output = readNpyFile(tmp.filePath("output.npy").toStdString());
    QVERIFY2(output.ok(), "the stale output.npy was not replaced");
    // No staging folder is left beside the output.
    QDir parent(tmp.path());
    parent.cdUp();
    QVERIFY(parent.entryList({".attnscope-partial-*"}, QDir::AllEntries | QDir::Hidden).isEmpty());
}

void TestCli::computeErrors_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("message");
    const QString ok = example("self-attention-tutorial");
    QTest::newRow("missing file") << QStringList{"compute", "/nonexistent/p.attnscope.json", "--out", "OUT"} << 1
                                  << "attnscope-cli: /nonexistent/p.attnscope.json: cannot open the file";
    QTest::newRow("no --out") << QStringList{"compute", ok} << 2 << "attnscope-cli: compute: --out DIR is required";
    QTest::newRow("no project") << QStringList{"compute", "--out", "OUT"} << 2
                                << "attnscope-cli: compute: expected 1 argument(s), found 0 (see --help)";
    QTest::newRow("bad backend") << QStringList{"compute", ok, "--out", "OUT", "--backend", "tpu"} << 2
                                 << "attnscope-cli: --backend: expected auto, cpu or vulkan, found \"tpu\"";
    QTest::newRow("unknown option") << QStringList{"compute", ok, "--out", "OUT", "--colour"} << 2
                                    << "attnscope-cli: Unknown option 'colour'.";
    QTest::newRow("unknown command") << QStringList{"explain", ok} << 2
                                     << "attnscope-cli: unknown command \"explain\" (see --help)";
    QTest::newRow("parent missing") << QStringList{"compute", ok, "--out", "/nonexistent/dir/out"} << 1
                                    << "attnscope-cli: /nonexistent/dir: no such directory";
}

void TestCli::computeErrors()
{
    QFETCH(QStringList, args);
    QFETCH(int, code);
    QFETCH(QString, message);
    QTemporaryDir tmp;
    args.replaceInStrings(QRegularExpression("^OUT$"), tmp.filePath("out"));
    Run r = runCli(args);
    QCOMPARE(r.code, code);
    QCOMPARE(r.err.trimmed(), message);
    QVERIFY(!QFile::exists(tmp.filePath("out")));
}

void TestCli::malformedProjectLeavesNoOutput()
{
    QTemporaryDir tmp;
    QFile bad(tmp.filePath("bad.attnscope.json"));
    QVERIFY(bad.open(QIODevice::WriteOnly));
    bad.write(R"({"format": "attnscope", "version": 1, "mode": "self", "heads": 1, "headDimQK": 2,
                 "headDimV": 2, "query": {"tokens": ["a"], "x": [[1, 2]]},
                 "weights": {"q": [[1, 0], [0, 1]], "k": [[1, 0, 0], [0, 1, 0]], "v": [[1, 0], [0, 1]]}})");
    bad.close();
    const QString out = tmp.filePath("out");
    Run r = runCli({"compute", bad.fileName(), "--out", out});
    QCOMPARE(r.code, 1);
    QCOMPARE(r.err.trimmed(), QStringLiteral("attnscope-cli: %1: weights.k: expected 2 x 2 (d_kv x "
                                             "heads*headDimQK), found 2 x 3")
                                  .arg(bad.fileName()));
    QVERIFY(!QFile::exists(out));
    QCOMPARE(QDir(tmp.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden).size(), 1);
}

void TestCli::show()
{
    Run r = runCli({"show", example("self-attention-tutorial")});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(r.out.contains("scores = Q·Kᵀ · 1  [3 x 3]"));
    QVERIFY(r.out.contains("1.9366"));
    QVERIFY(r.out.contains("6.6831"));
    Run cross = runCli({"show", example("cross-attention-translation"), "--precision", "2"});
    QVERIFY2(cross.code == 0, qPrintable(cross.err));
    QVERIFY(cross.out.contains("weights = softmax(masked scores) (head 1)  [5 x 6]"));
    QVERIFY(cross.out.contains("allowed mask"));
}

void TestCli::bench()
{
    Run r = runCli(
        {"bench", "--tokens", "33", "--dim", "24", "--heads", "3", "--causal", "--repeat", "3", "--backend", "cpu"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QStringList lines = r.out.trimmed().split('\n');
    QVERIFY(lines.last().startsWith("median_ms: "));
    bool ok = false;
    const double ms = lines.last().mid(11).toDouble(&ok);
    QVERIFY(ok && ms > 0);
    QVERIFY(r.out.contains("problem: T=33 d=24 H=3 causal"));
}

void TestCli::benchErrors_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("missing tokens") << QStringList{"bench", "--dim", "8", "--heads", "2"}
                                    << "attnscope-cli: bench: --tokens is required";
    QTest::newRow("zero heads") << QStringList{"bench", "--tokens", "4", "--dim", "8", "--heads", "0"}
                                << "attnscope-cli: --heads: expected a whole number from 1 to 4096, found \"0\"";
    QTest::newRow("indivisible") << QStringList{"bench", "--tokens", "4", "--dim", "10", "--heads", "3"}
                                 << "attnscope-cli: bench: --dim 10 is not divisible by --heads 3";
    QTest::newRow("words") << QStringList{"bench", "--tokens", "many", "--dim", "8", "--heads", "2"}
                           << "attnscope-cli: --tokens: expected a whole number from 1 to 1048576, found \"many\"";
}

void TestCli::benchErrors()
{
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    Run r = runCli(args);
    QCOMPARE(r.code, 2);
    QCOMPARE(r.err.trimmed(), message);
}

void TestCli::devices()
{
    Run r = runCli({"devices"});
    QCOMPARE(r.code, 0);
    QVERIFY(r.out.contains("cpu: Eigen"));
}

void TestCli::exportEqualsCompute()
{
    QTemporaryDir tmp;
    const QString project = example("cross-attention-translation");
    Run compute = runCli({"compute", project, "--out", tmp.filePath("c")});
    QVERIFY2(compute.code == 0, qPrintable(compute.err));
    Run npz = runCli({"export", project, "--out", tmp.filePath("all.npz")});
    QVERIFY2(npz.code == 0, qPrintable(npz.err));
    const auto entries = unzipStored(readAll(tmp.filePath("all.npz")));
    QCOMPARE(int(entries.size()), 9);
    for (const QString &file : kTensorFiles)
        QVERIFY2(entries.count(file) && entries.at(file) == readAll(tmp.filePath("c/" + file)), qPrintable(file));
    QVERIFY(entries.count("mask.npy") && entries.count("headOutputs.npy"));

    Run npy = runCli({"export", project, "--out", tmp.filePath("scores.npy"), "--tensor", "scores"});
    QVERIFY2(npy.code == 0, qPrintable(npy.err));
    QCOMPARE(readAll(tmp.filePath("scores.npy")), readAll(tmp.filePath("c/scores.npy")));

    Run json = runCli({"export", project, "--out", tmp.filePath("all.json")});
    QVERIFY2(json.code == 0, qPrintable(json.err));
    const auto doc = nlohmann::json::parse(readAll(tmp.filePath("all.json")).toStdString());
    auto weights = readNpyFile(tmp.filePath("c/weights.npy").toStdString());
    QVERIFY(weights.ok());
    const auto &data = doc["tensors"]["weights"]["data"];
    QCOMPARE(doc["tensors"]["weights"]["shape"].get<std::vector<std::int64_t>>(), weights->shape);
    size_t i = 0;
    for (const auto &head : data)
        for (const auto &row : head)
            for (const auto &value : row)
                QCOMPARE(float(value.get<double>()), float(weights->data[i++])); // shortest text of the float
    QCOMPARE(i, weights->data.size());
    QCOMPARE(doc["keyTokens"][4].get<std::string>(), std::string("<pad>"));
}

void TestCli::exportCsv()
{
    QTemporaryDir tmp;
    const QString project = example("cross-attention-translation");
    Run r = runCli({"export", project, "--out", tmp.filePath("w.csv"), "--tensor", "weights", "--head", "1"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    Run c = runCli({"compute", project, "--out", tmp.filePath("c")});
    QVERIFY(c.code == 0);
    auto weights = readNpyFile(tmp.filePath("c/weights.npy").toStdString());
    QVERIFY(weights.ok());
    const QStringList lines = QString::fromUtf8(readAll(tmp.filePath("w.csv"))).split("\r\n", Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 1 + 5);
    QCOMPARE(lines[0], QStringLiteral("weights,I,am,a,student,<pad>,<pad>"));
    for (int row = 0; row < 5; ++row) {
        const QStringList cells = lines[row + 1].split(',');
        QCOMPARE(cells.size(), 7);
        for (int col = 0; col < 6; ++col) // head 1 of [2, 5, 6]
            QCOMPARE(cells[col + 1].toFloat(), float(weights->data[size_t(30 + row * 6 + col)]));
    }
    QVERIFY(lines[1].startsWith("<s>,"));
    QVERIFY(lines[1].endsWith(",0,0")); // padded keys
}

void TestCli::exportErrors_data()
{
    QTest::addColumn<QStringList>("extra");
    QTest::addColumn<QString>("message");
    QTest::newRow("suffix") << QStringList{"--out", "OUT.png"}
                            << "export: --out OUT.png: expected a .csv, .npy, .npz or .json file";
    QTest::newRow("tensor") << QStringList{"--out", "OUT.npy", "--tensor", "attention"}
                            << "tensor \"attention\": expected one of q, k, v, scores, weights, headOutputs, context, "
                               "output, mask";
    QTest::newRow("head") << QStringList{"--out", "OUT.csv", "--head", "2"}
                          << "weights: head 2 does not exist (expected 0 to 1)";
    QTest::newRow("no out") << QStringList{} << "export: --out FILE is required";
}

void TestCli::exportErrors()
{
    QFETCH(QStringList, extra);
    QFETCH(QString, message);
    QTemporaryDir tmp;
    extra.replaceInStrings("OUT", tmp.filePath("x"));
    Run r = runCli(QStringList{"export", example("cross-attention-translation")} + extra);
    QCOMPARE(r.code, 2);
    QCOMPARE(r.err.trimmed(), "attnscope-cli: " + message.replace("OUT", tmp.filePath("x")));
    QCOMPARE(QDir(tmp.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot).size(), 0);
}

void TestCli::computeRefusesWhatMemoryCannotHold()
{
    // 40,000 tokens: a 480 KB file whose trace needs 14.4 GB. The fixed 16 GiB limit let it
    // through and the CLI died with bad_alloc under a memory cap.
    QTemporaryDir tmp;
    const QString project = writeLongProject(tmp.filePath("long.attnscope.json"), 40000, 1);
    Run r = runLimited({"--as=4294967296"}, {"compute", project, "--out", tmp.filePath("out"), "--backend", "cpu"});
    QCOMPARE(r.code, 1);
    static const QRegularExpression message(
        "^attnscope-cli: .*long\\.attnscope\\.json: size: this problem needs 13\\.4 GiB for its intermediate tensors; "
        "this machine allows [0-9.]+ [MG]iB$");
    QVERIFY2(message.match(r.err.trimmed()).hasMatch(), qPrintable(r.err));
    QVERIFY(!QFile::exists(tmp.filePath("out")));
}

void TestCli::exportJsonStreamsUnderMemoryCap()
{
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

void TestCli::benchRefusesWhatMemoryCannotHold()
{
    // bench had no size check: its random inputs alone (2^20 x 2^16 floats) are 256 GiB.
    Run r = runCli({"bench", "--tokens", "1048576", "--dim", "65536", "--heads", "1", "--backend", "cpu"});
    QCOMPARE(r.code, 1);
    static const QRegularExpression message("^attnscope-cli: size: this problem needs [0-9.]+ [TP]iB for its inputs "
                                            "and intermediate tensors; this machine allows [0-9.]+ [MGT]iB$");
    QVERIFY2(message.match(r.err.trimmed()).hasMatch(), qPrintable(r.err));
}

void TestCli::showDevZeroAndFifoReturnQuickly()
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

void TestCli::projectFileLargerThanTheCapIsRefusedBySize()
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

void TestCli::hostileProjectFileGivesOneLine()
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

void TestCli::exportOntoItsProjectIsRefused_data()
{
    QTest::addColumn<QString>("out"); // relative to the folder holding p.json
    QTest::newRow("same path") << "p.json";
    QTest::newRow("other spelling") << "sub/../p.json";
    QTest::newRow("symbolic link") << "link.json";
    QTest::newRow("hard link") << "hard.json";
}

void TestCli::exportOntoItsProjectIsRefused()
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

void TestCli::computeOntoItsProjectIsRefused()
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

void TestCli::computeRemovesStalePartialFolders()
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
    Run r = runCli({"compute", example("padding-mask"), "--out", out});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(!QFile::exists(tmp.filePath(staleBeside)));
    QVERIFY(!QFile::exists(QDir(out).filePath(staleInside)));
    QVERIFY2(QFile::exists(tmp.filePath(live)), "a running process's staging folder was removed");
    QCOMPARE(QDir(out).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden).size(), kTensorFiles.size());
}

void TestCli::computeIsWholeOrNothingWhenAWriteFails_data()
{
    QTest::addColumn<bool>("existing");
    QTest::newRow("new folder") << false;
    QTest::newRow("existing folder") << true;
}

void TestCli::computeIsWholeOrNothingWhenAWriteFails()
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

void TestCli::exportToAFullDiskGivesTheReason()
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

void TestCli::nonFiniteResultsExitNonZero_data()
{
    QTest::addColumn<QString>("command");
    QTest::newRow("compute") << "compute";
    QTest::newRow("export") << "export";
    QTest::newRow("show") << "show";
}

void TestCli::nonFiniteResultsExitNonZero()
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

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
