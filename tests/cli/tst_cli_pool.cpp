// attnscope-cli compute --pool (design.md's long-sequence form) and bench --pool: the three
// files and nothing full-size, values equal to pooling the double reference, usage errors, and
// the full compute's refusal pointing at --pool where the pooled form fits.

#include "../common/CliRunner.h"
#include "../common/TestUtil.h"

#include "core/attention/PooledAttention.h"
#include "core/attention/RandomProblem.h"
#include "core/formats/Npy.h"
#include "core/formats/ProjectFile.h"

#include <QDir>
#include <QObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

using namespace attnscope;
using attnscope::test::runCli;

namespace {

// A self-attention project of `tokens` tokens whose inputs and weights are .npy references
// (the way long sequences are stored), written into folder.
QString writeLongProject(const QString &folder, Eigen::Index tokens, bool causal)
{
    RandomProblemOptions options;
    options.tokens = tokens;
    options.modelDim = 8;
    options.heads = 2;
    options.causal = causal;
    const AttentionProblem p = randomProblem(options);
    auto save = [&](const char *name, const MatrixF &m) {
        const std::string bytes = npyBytes({m.rows(), m.cols()}, m.data());
        QFile f(QDir(folder).filePath(name));
        if (f.open(QIODevice::WriteOnly))
            f.write(bytes.data(), qint64(bytes.size()));
    };
    save("x.npy", p.xq);
    save("q.npy", p.weights.q);
    save("k.npy", p.weights.k);
    save("v.npy", p.weights.v);
    save("o.npy", *p.weights.o);
    nlohmann::ordered_json root = {
        {"format", "attnscope"},
        {"version", 1},
        {"mode", "self"},
        {"heads", 2},
        {"headDimQK", 4},
        {"headDimV", 4},
        {"query", {{"tokens", numberedTokens(tokens)}, {"x", {{"npy", "x.npy"}}}}},
        {"weights",
         {{"q", {{"npy", "q.npy"}}}, {"k", {{"npy", "k.npy"}}}, {"v", {{"npy", "v.npy"}}}, {"o", {{"npy", "o.npy"}}}}},
        {"mask", {{"causal", causal}}}};
    const QString path = QDir(folder).filePath("long.attnscope.json");
    QFile f(path);
    if (f.open(QIODevice::WriteOnly))
        f.write(QByteArray::fromStdString(root.dump()));
    return path;
}

// Compares an .npy file written by the CLI with the double reference (a stack of matrices).
template <typename Matrix>
std::string compareNpy(const QString &path, const std::vector<std::int64_t> &shape, const std::vector<Matrix> &parts,
                       test::Tolerance tolerance)
{
    auto array = readNpyFile(path.toStdString());
    if (!array)
        return array.message();
    if (array->shape != shape)
        return path.toStdString() + ": unexpected shape";
    size_t at = 0;
    for (const Matrix &m : parts) {
        MatrixD got(m.rows(), m.cols());
        for (Eigen::Index i = 0; i < got.size(); ++i)
            got.data()[i] = array->data[at++];
        if (std::string diff = test::compareMatrix(qPrintable(path), got, m, tolerance); !diff.empty())
            return diff;
    }
    return {};
}

} // namespace

class TestCliPool : public QObject
{
    Q_OBJECT

private slots:
    void writesPooledFilesOnly_data();
    void writesPooledFilesOnly();
    void usageErrors_data();
    void usageErrors();
    void fullComputeTooLargeSuggestsPool();
    void benchPoolReportsFigures();
};

void TestCliPool::writesPooledFilesOnly_data()
{
    QTest::addColumn<QString>("project"); // an example name, or "long" for the referenced project
    QTest::addColumn<int>("bins");
    QTest::addColumn<QString>("mode");
    QTest::newRow("multihead-causal, max") << "multihead-causal" << 2 << "max";
    QTest::newRow("cross-attention, mean, N > T") << "cross-attention-translation" << 64 << "mean";
    QTest::newRow("padding, mean") << "padding-mask" << 3 << "mean";
    QTest::newRow("700 tokens in .npy references, causal, max") << "long" << 50 << "max";
    QTest::newRow("700 tokens in .npy references, causal, mean") << "long" << 50 << "mean";
}

void TestCliPool::writesPooledFilesOnly()
{
    QFETCH(QString, project);
    QFETCH(int, bins);
    QFETCH(QString, mode);
    QTemporaryDir tmp;
    const QString path =
        project == "long" ? writeLongProject(tmp.path(), 700, true) : test::example(project.toLatin1().constData());
    const QString out = tmp.filePath("out");
    QStringList args = {"compute", path, "--out", out, "--pool", QString::number(bins), "--backend", "cpu"};
    if (mode != "max")
        args << "--pool-mode" << mode;
    auto r = runCli(args);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("weights_pooled"), qPrintable(r.out));
    QStringList files = QDir(out).entryList(QDir::Files | QDir::Hidden);
    files.sort();
    QCOMPARE(files, QStringList({"entropy.npy", "output.npy", "weights_pooled.npy"}));

    auto read = readProjectFile(path.toStdString());
    QVERIFY2(read.ok(), read.ok() ? "" : read.message().c_str());
    const AttentionProblem &p = read->problem;
    PoolOptions options;
    options.bins = bins;
    options.mode = mode == "mean" ? PoolMode::Mean : PoolMode::Max;
    auto ref = referencePooled(p, options);
    QVERIFY(ref.ok());
    const std::int64_t nq = std::min<std::int64_t>(bins, p.tq()), nk = std::min<std::int64_t>(bins, p.tk());
    std::string diff =
        compareNpy(out + "/weights_pooled.npy", {p.spec.heads, nq, nk}, ref->pooled, test::Tolerance::weights());
    QVERIFY2(diff.empty(), diff.c_str());
    diff = compareNpy(out + "/entropy.npy", {p.spec.heads, p.tq()}, std::vector<MatrixD>{ref->entropy},
                      test::Tolerance::values());
    QVERIFY2(diff.empty(), diff.c_str());
    diff = compareNpy(out + "/output.npy", {p.tq(), p.dOut()}, std::vector<MatrixD>{ref->output},
                      test::Tolerance::values());
    QVERIFY2(diff.empty(), diff.c_str());
}

void TestCliPool::usageErrors_data()
{
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("message");
    QTest::newRow("zero bins") << QStringList{"--pool", "0"} << 2
                               << "attnscope-cli: --pool: expected a whole number from 1 to 65536, found \"0\"";
    QTest::newRow("not a number") << QStringList{"--pool", "lots"} << 2
                                  << "attnscope-cli: --pool: expected a whole number from 1 to 65536, found \"lots\"";
    QTest::newRow("bad mode") << QStringList{"--pool", "4", "--pool-mode", "median"} << 2
                              << "attnscope-cli: --pool-mode: expected max or mean, found \"median\"";
    QTest::newRow("mode without pool") << QStringList{"--pool-mode", "mean"} << 2
                                       << "attnscope-cli: compute: --pool-mode needs --pool N";
}

void TestCliPool::usageErrors()
{
    QFETCH(QStringList, options);
    QFETCH(int, code);
    QFETCH(QString, message);
    QTemporaryDir tmp;
    auto r = runCli(QStringList{"compute", test::example("multihead-causal"), "--out", tmp.filePath("out")} + options);
    QCOMPARE(r.code, code);
    QCOMPARE(r.err.trimmed(), message);
    QVERIFY(!QFile::exists(tmp.filePath("out")));
}

// Under a 24 MiB budget, 3000 tokens need 72 MiB of full weights: compute refuses and names
// --pool, and compute --pool on the same project succeeds under the same budget.
void TestCliPool::fullComputeTooLargeSuggestsPool()
{
    QTemporaryDir tmp;
    const QString project = writeLongProject(tmp.path(), 3000, false);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("ATTNSCOPE_MEMORY_LIMIT", "24M");
    auto full = runCli({"compute", project, "--out", tmp.filePath("full"), "--backend", "cpu"}, env);
    QCOMPARE(full.code, 1);
    static const QRegularExpression message(
        "^attnscope-cli: .*long\\.attnscope\\.json: size: this problem needs [0-9.]+ MiB for its intermediate tensors; "
        "this machine allows 24\\.0 MiB \\(for long sequences: compute --pool N writes pooled weights without the "
        "full trace\\)$");
    QVERIFY2(message.match(full.err.trimmed()).hasMatch(), qPrintable(full.err));
    QVERIFY(!QFile::exists(tmp.filePath("full")));

    auto pooled =
        runCli({"compute", project, "--out", tmp.filePath("pooled"), "--pool", "256", "--backend", "cpu"}, env);
    QVERIFY2(pooled.code == 0, qPrintable(pooled.err));
    QVERIFY(QFile::exists(tmp.filePath("pooled/weights_pooled.npy")));
    QVERIFY(!QFile::exists(tmp.filePath("pooled/weights.npy")));

    // A pooled request that cannot fit either is refused with what it needs.
    env.insert("ATTNSCOPE_MEMORY_LIMIT", "1M");
    auto tiny = runCli({"compute", project, "--out", tmp.filePath("tiny"), "--pool", "3000", "--backend", "cpu"}, env);
    QCOMPARE(tiny.code, 1);
    QVERIFY2(tiny.err.contains("for the pooled computation; this machine allows 1.0 MiB"), qPrintable(tiny.err));
    QVERIFY(!QFile::exists(tmp.filePath("tiny")));
}

void TestCliPool::benchPoolReportsFigures()
{
    auto r = runCli({"bench", "--tokens", "600", "--dim", "32", "--heads", "4", "--causal", "--pool", "64", "--repeat",
                     "1", "--backend", "cpu"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    for (const char *key : {"peak_rss_mib: ", "gflop_per_s: ", "gemm_gflop_per_s: ", "median_ms: "}) {
        const QRegularExpression line(QStringLiteral("^%1([0-9.]+)").arg(QLatin1String(key)),
                                      QRegularExpression::MultilineOption);
        const auto match = line.match(r.out);
        QVERIFY2(match.hasMatch(), qPrintable(key + r.out));
        QVERIFY2(match.captured(1).toDouble() > 0, qPrintable(r.out));
    }
}

QTEST_GUILESS_MAIN(TestCliPool)
#include "tst_cli_pool.moc"
