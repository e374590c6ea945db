// attnscope-cli as a user runs it: the real executable through QProcess, real files written
// and read back.

#include "../common/CliRunner.h"
#include "../common/TestUtil.h"

#include "core/attention/CpuBackend.h"
#include "core/formats/Npy.h"
#include "core/formats/ProjectFile.h"
#include "core/formats/TraceExport.h"

#include <QDir>
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

using test::example;
using test::readAll;

const QStringList kTensorFiles = {"q.npy", "k.npy", "v.npy", "scores.npy", "weights.npy", "context.npy", "output.npy"};

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
    // The CPU engine names what runs its GEMMs: OpenBLAS where it loads, else Eigen.
    QVERIFY(r.out.contains(QRegularExpression("device: (OpenBLAS|Eigen) .* on CPU \\(")));

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
    // The commands with one input share one parser (app/cli/CliSupport.h): the same usage errors.
    QTest::newRow("model without folder")
        << QStringList{"model", "--text", "hi", "--out", "OUT"} << 2
        << "attnscope-cli: model: expected 1 argument (MODEL_DIR), found 0 (see --help)";
    QTest::newRow("stats with two inputs") << QStringList{"stats", ok, ok, "--out", "OUT"} << 2
                                           << "attnscope-cli: stats: expected 1 argument (INPUT), found 2 (see --help)";
    QTest::newRow("stats unknown option")
        << QStringList{"stats", ok, "--out", "OUT", "--colour"} << 2 << "attnscope-cli: Unknown option 'colour'.";
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
    // design.md's modern attention, each step named: 4 heads reading 2 key/value heads, RoPE,
    // a causal window of 5, a soft-cap of 1.5 and sinks.
    Run modern = runCli({"show", test::sourcePath("tests/fixtures/torch/modern_all_self/project.attnscope.json")});
    QVERIFY2(modern.code == 0, qPrintable(modern.err));
    for (const char *line :
         {"2 key/value heads: each read by 2 query heads (grouped-query)",
          "RoPE: base 10000, dimension i turns with i + 2",
          "sliding window: 5 keys (key j allowed for query i when j > i - 5)",
          "soft-cap: scores become 1.5*tanh(scores/1.5)", "Q = RoPE(Q) (head 1)  [12 x 4]",
          "K = RoPE(K) (key/value head 1, read by heads 2-3)  [12 x 4]",
          "K, V (head 1): those of key/value head 0 (above)", "scores = 1.5*tanh(Q·Kᵀ · 0.5 / 1.5) (head 0)"})
        QVERIFY2(modern.out.contains(QString::fromUtf8(line)), line);
    QVERIFY(modern.out.contains(QStringLiteral("the sink's share dropped (head 3)")));
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
    QVERIFY(r.out.contains(QRegularExpression("cpu: (OpenBLAS|Eigen) .* on CPU \\(")));
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

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
