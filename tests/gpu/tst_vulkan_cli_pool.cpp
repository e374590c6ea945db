// attnscope-cli compute --pool and bench --pool with the Vulkan backend, in fresh processes:
// the pooled path runs on the Vulkan device (named, with no CPU note), writes the three .npy
// files and nothing full-size, with values equal to pooling the double reference; under
// --backend auto an injected device loss falls back to the CPU engine and says so.

#include "../common/CliRunner.h"
#include "../common/TestUtil.h"
#include "VulkanTestUtil.h"

#include "core/attention/PooledAttention.h"
#include "core/formats/Npy.h"
#include "core/formats/ProjectFile.h"

#include <QDir>
#include <QObject>
#include <QProcessEnvironment>
#include <QTemporaryDir>
#include <QTest>

using namespace attnscope;
using attnscope::test::runCli;
using Run = attnscope::test::CliRun;

namespace {

// Empty when the .npy file holds `parts` stacked, with this shape, within tolerance.
std::string compareNpy(const QString &path, const std::vector<std::int64_t> &shape, const std::vector<MatrixD> &parts,
                       test::Tolerance tolerance)
{
    auto array = readNpyFile(path.toStdString());
    if (!array)
        return array.message();
    if (array->shape != shape)
        return path.toStdString() + ": unexpected shape";
    size_t at = 0;
    for (const MatrixD &m : parts) {
        MatrixD got(m.rows(), m.cols());
        for (Eigen::Index i = 0; i < got.size(); ++i)
            got.data()[i] = array->data[at++];
        if (std::string diff = test::compareMatrix(qPrintable(path), got, m, tolerance); !diff.empty())
            return diff;
    }
    return {};
}

// Empty when DIR holds exactly the three pooled files, equal to the reference for this project.
std::string checkPooledDir(const QString &out, const QString &project, int bins, PoolMode mode)
{
    QStringList files = QDir(out).entryList(QDir::Files | QDir::Hidden);
    files.sort();
    if (files != QStringList({"entropy.npy", "output.npy", "weights_pooled.npy"}))
        return "unexpected files: " + files.join(", ").toStdString();
    auto read = readProjectFile(project.toStdString());
    if (!read)
        return read.message();
    const AttentionProblem &p = read->problem;
    PoolOptions options;
    options.bins = bins;
    options.mode = mode;
    auto ref = referencePooled(p, options);
    if (!ref)
        return ref.message();
    const std::int64_t nq = std::min<std::int64_t>(bins, p.tq()), nk = std::min<std::int64_t>(bins, p.tk());
    if (auto d =
            compareNpy(out + "/weights_pooled.npy", {p.spec.heads, nq, nk}, ref->pooled, test::Tolerance::weights());
        !d.empty())
        return d;
    if (auto d = compareNpy(out + "/entropy.npy", {p.spec.heads, p.tq()}, {ref->entropy}, test::Tolerance::values());
        !d.empty())
        return d;
    return compareNpy(out + "/output.npy", {p.tq(), p.dOut()}, {ref->output}, test::Tolerance::values());
}

} // namespace

class TestVulkanCliPool : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void computePoolRunsOnVulkan_data();
    void computePoolRunsOnVulkan();
    void deviceLostFallsBackToTheCpuEngine();
    void benchPoolRunsOnVulkan();
};

void TestVulkanCliPool::initTestCase()
{
    ATTNSCOPE_SKIP_WITHOUT_VULKAN();
}

void TestVulkanCliPool::computePoolRunsOnVulkan_data()
{
    QTest::addColumn<QString>("project");
    QTest::addColumn<int>("bins");
    QTest::addColumn<QString>("mode");
    QTest::newRow("multihead-causal, max") << "multihead-causal" << 2 << "max";
    QTest::newRow("cross-attention, mean, N > T") << "cross-attention-translation" << 64 << "mean";
    QTest::newRow("padding, mean") << "padding-mask" << 3 << "mean";
}

void TestVulkanCliPool::computePoolRunsOnVulkan()
{
    QFETCH(QString, project);
    QFETCH(int, bins);
    QFETCH(QString, mode);
    QTemporaryDir tmp;
    const QString path = test::example(project.toLatin1().constData()), out = tmp.filePath("out");
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("ATTNSCOPE_VULKAN_VALIDATION", "1");
    const Run r = runCli(
        {"compute", path, "--out", out, "--pool", QString::number(bins), "--pool-mode", mode, "--backend", "vulkan"},
        env);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("backend: vulkan"), qPrintable(r.out));
    auto devices = listVulkanDevices();
    QVERIFY(devices.ok());
    auto chosen = vk::chooseDevice(*devices, vk::deviceSelectorFromEnvironment());
    QVERIFY(chosen.ok());
    const QString device = QString::fromStdString("device: " + (*devices)[size_t(*chosen)].label());
    QVERIFY2(r.out.contains(device), qPrintable(r.out));
    QVERIFY2(!r.out.contains("CPU engine"), qPrintable(r.out)); // the pooled path ran on the device
    QVERIFY2(!r.err.contains("Validation"), qPrintable(r.err));
    const std::string diff = checkPooledDir(out, path, bins, mode == "mean" ? PoolMode::Mean : PoolMode::Max);
    QVERIFY2(diff.empty(), diff.c_str());
}

void TestVulkanCliPool::deviceLostFallsBackToTheCpuEngine()
{
    QTemporaryDir tmp;
    const QString path = test::example("multihead-causal"), out = tmp.filePath("out");
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("ATTNSCOPE_VULKAN_DEVICE", "0"); // auto uses even a CPU-type device once named
    const Run r = test::runCliWithVulkanFault("device-lost",
                                              {"compute", path, "--out", out, "--pool", "3", "--backend", "auto"}, env);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("backend: cpu"), qPrintable(r.out));
    QVERIFY2(r.out.contains("VK_ERROR_DEVICE_LOST"), qPrintable(r.out));
    const std::string diff = checkPooledDir(out, path, 3, PoolMode::Max);
    QVERIFY2(diff.empty(), diff.c_str());

    // Forced Vulkan reports the loss and writes nothing.
    QTemporaryDir empty;
    const Run forced = test::runCliWithVulkanFault(
        "device-lost", {"compute", path, "--out", empty.filePath("out"), "--pool", "3", "--backend", "vulkan"}, env);
    QVERIFY(forced.code != 0);
    QVERIFY2(forced.err.contains("VK_ERROR_DEVICE_LOST"), qPrintable(forced.err));
    QVERIFY(!QDir(empty.filePath("out")).exists() || QDir(empty.filePath("out")).entryList(QDir::Files).isEmpty());
}

void TestVulkanCliPool::benchPoolRunsOnVulkan()
{
    const Run r = runCli({"bench", "--tokens", "96", "--dim", "16", "--heads", "2", "--causal", "--pool", "16",
                          "--repeat", "1", "--backend", "vulkan"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("backend: vulkan"), qPrintable(r.out));
    QVERIFY2(!r.out.contains("CPU engine"), qPrintable(r.out));
    QVERIFY2(r.out.contains("median_ms: "), qPrintable(r.out));
}

QTEST_GUILESS_MAIN(TestVulkanCliPool)
#include "tst_vulkan_cli_pool.moc"
