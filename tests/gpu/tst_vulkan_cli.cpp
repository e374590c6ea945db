// attnscope-cli with the Vulkan backend, in fresh processes so that the environment can
// take the loader or the driver away for real: `compute --backend vulkan` reproduces the CPU
// outputs and names the device; without a driver or a loader `--backend vulkan` fails
// clearly and `--backend auto` falls back and says so; an injected device loss falls back
// mid-run; `devices` lists the limits; `bench` runs on Vulkan.

#include "../common/CliRunner.h"
#include "../common/TestUtil.h"
#include "VulkanTestUtil.h"

#include "core/formats/Npy.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QObject>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTemporaryDir>
#include <QTest>

using namespace attnscope;

using attnscope::test::runCli;
using Run = attnscope::test::CliRun;

namespace {

QProcessEnvironment withoutDriver()
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("VK_DRIVER_FILES", "/nonexistent/icd.json");
    env.insert("VK_ICD_FILENAMES", "/nonexistent/icd.json");
    return env;
}

// attnscope-cli's test driver with no Vulkan loader to open.
Run runWithoutLoader(const QStringList &args)
{
    return attnscope::test::runCliWithVulkanLoader(QStringLiteral("/nonexistent/libvulkan.so.1"), args);
}

const char *const kTensors[] = {"q", "k", "v", "scores", "weights", "context", "output"};

// Empty when every .npy in `got` matches `expected` within the values tolerance.
std::string compareNpyDirs(const QString &got, const QString &expected)
{
    for (const char *name : kTensors) {
        const std::string file = std::string("/") + name + ".npy";
        auto a = readNpyFile(got.toStdString() + file);
        auto b = readNpyFile(expected.toStdString() + file);
        if (!a || !b)
            return std::string(name) + ": " + (!a ? a.message() : b.message());
        if (a->shape != b->shape)
            return std::string(name) + ": shapes differ";
        const auto tol = test::Tolerance::values();
        for (size_t i = 0; i < a->data.size(); ++i)
            if (!(std::abs(a->data[i] - b->data[i]) <= tol.absolute + tol.relative * std::abs(b->data[i])))
                return std::string(name) + "[" + std::to_string(i) + "] = " + std::to_string(a->data[i]) +
                       ", the CPU wrote " + std::to_string(b->data[i]);
    }
    return {};
}

} // namespace

class TestVulkanCli : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void computeMatchesCpu_data();
    void computeMatchesCpu();
    void computesModernFixturesOnVulkan_data();
    void computesModernFixturesOnVulkan();
    void noDriver();
    void noLoader();
    void productTakesNoLoaderFromItsEnvironment();
    void corruptDriverManifestIsNamed_data();
    void corruptDriverManifestIsNamed();
    void loaderThatIsNoVulkanLoader();
    void deviceLostFallsBack();
    void environmentInjectsNoFault();
    void devicesListsLimits();
    void benchRunsOnVulkan();

private:
    QString example(const QString &name) const
    {
        return test::sourcePath(QStringLiteral("resources/examples/%1.attnscope.json").arg(name));
    }
};

void TestVulkanCli::initTestCase()
{
    ATTNSCOPE_SKIP_WITHOUT_VULKAN();
}

void TestVulkanCli::computeMatchesCpu_data()
{
    QTest::addColumn<QString>("name");
    const QStringList files = QDir(test::sourcePath("resources/examples")).entryList({"*.attnscope.json"});
    QVERIFY(!files.isEmpty());
    for (const QString &f : files) {
        const QString name = f.chopped(QStringLiteral(".attnscope.json").size());
        QTest::newRow(qPrintable(name)) << name;
    }
}

void TestVulkanCli::computeMatchesCpu()
{
    QFETCH(QString, name);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString gpuDir = dir.filePath("vulkan"), cpuDir = dir.filePath("cpu");
    QVERIFY(QDir().mkpath(gpuDir) && QDir().mkpath(cpuDir));
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("ATTNSCOPE_VULKAN_VALIDATION", "1");
    const Run gpu = runCli({"compute", example(name), "--out", gpuDir, "--backend", "vulkan"}, env);
    QVERIFY2(gpu.code == 0, qPrintable(gpu.err));
    QVERIFY2(gpu.out.contains("backend: vulkan"), qPrintable(gpu.out));
    auto devices = listVulkanDevices();
    QVERIFY(devices.ok());
    auto chosen = vk::chooseDevice(*devices, vk::deviceSelectorFromEnvironment());
    QVERIFY(chosen.ok());
    const std::string device = "device: " + (*devices)[size_t(*chosen)].label();
    QVERIFY2(gpu.out.contains(QString::fromStdString(device)), qPrintable(gpu.out));
    // The validation layer's messages go to stderr; a clean run prints none.
    QVERIFY2(!gpu.err.contains("Validation"), qPrintable(gpu.err));
    const Run cpu = runCli({"compute", example(name), "--out", cpuDir, "--backend", "cpu"});
    QVERIFY2(cpu.code == 0, qPrintable(cpu.err));
    const std::string diff = compareNpyDirs(gpuDir, cpuDir);
    QVERIFY2(diff.empty(), diff.c_str());
}

void TestVulkanCli::computesModernFixturesOnVulkan_data()
{
    QTest::addColumn<QString>("folder");
    const QDir dir(test::sourcePath("tests/fixtures/torch"));
    const auto cases = dir.entryList({"modern_*"}, QDir::Dirs | QDir::NoDotAndDotDot);
    QVERIFY(!cases.isEmpty());
    for (const QString &c : cases)
        QTest::newRow(qPrintable(c)) << dir.filePath(c);
}

// Grouped heads, RoPE, windows, soft-caps and sinks through `compute --backend vulkan`: every
// tensor PyTorch wrote matches, k.npy and v.npy with one matrix per key/value head.
void TestVulkanCli::computesModernFixturesOnVulkan()
{
    QFETCH(QString, folder);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("ATTNSCOPE_VULKAN_VALIDATION", "1");
    const Run gpu =
        runCli({"compute", folder + "/project.attnscope.json", "--out", dir.path(), "--backend", "vulkan"}, env);
    QVERIFY2(gpu.code == 0, qPrintable(gpu.err));
    QVERIFY2(gpu.out.contains("backend: vulkan"), qPrintable(gpu.out));
    QVERIFY2(!gpu.err.contains("Validation"), qPrintable(gpu.err));
    for (const char *name : kTensors) {
        const QString expectedPath = folder + "/" + name + ".npy";
        auto expected = readNpyFile(expectedPath.toStdString());
        QVERIFY2(expected.ok(), expected.ok() ? "" : expected.message().c_str());
        auto got = readNpyFile(dir.filePath(QString(name) + ".npy").toStdString());
        QVERIFY2(got.ok(), got.ok() ? "" : got.message().c_str());
        const std::string diff = test::compareNpy(std::string(name) + ".npy", *got, *expected);
        QVERIFY2(diff.empty(), diff.c_str());
    }
}

void TestVulkanCli::noDriver()
{
    QTemporaryDir dir;
    const Run forced =
        runCli({"compute", example("multihead-causal"), "--out", dir.path(), "--backend", "vulkan"}, withoutDriver());
    QVERIFY2(forced.code != 0, qPrintable(forced.out));
    QVERIFY2(forced.err.contains("Vulkan backend unavailable: no Vulkan"), qPrintable(forced.err));
    QVERIFY2(QDir(dir.path()).entryList(QDir::Files).isEmpty(), "nothing may be written on failure");

    const Run fallback =
        runCli({"compute", example("multihead-causal"), "--out", dir.path(), "--backend", "auto"}, withoutDriver());
    QVERIFY2(fallback.code == 0, qPrintable(fallback.err));
    QVERIFY2(fallback.out.contains("backend: cpu"), qPrintable(fallback.out));
    QVERIFY2(fallback.out.contains("note: no Vulkan"), qPrintable(fallback.out));
    QVERIFY2(fallback.out.contains("using the CPU"), qPrintable(fallback.out));
    QVERIFY(QFile::exists(dir.filePath("output.npy")));
}

void TestVulkanCli::noLoader()
{
    QTemporaryDir dir;
    const Run forced =
        runWithoutLoader({"compute", example("padding-mask"), "--out", dir.path(), "--backend", "vulkan"});
    QVERIFY2(forced.code != 0, qPrintable(forced.out));
    QVERIFY2(forced.err.contains("no Vulkan loader"), qPrintable(forced.err));

    const Run fallback =
        runWithoutLoader({"compute", example("padding-mask"), "--out", dir.path(), "--backend", "auto"});
    QVERIFY2(fallback.code == 0, qPrintable(fallback.err));
    QVERIFY2(fallback.out.contains("backend: cpu"), qPrintable(fallback.out));
    QVERIFY2(fallback.out.contains("note: no Vulkan loader"), qPrintable(fallback.out));

    const Run devices = runWithoutLoader({"devices"});
    QCOMPARE(devices.code, 0);
    QVERIFY2(devices.out.contains("vulkan: none (no Vulkan loader"), qPrintable(devices.out));
}

void TestVulkanCli::productTakesNoLoaderFromItsEnvironment()
{
    // The installed program has no test hook: a variable naming another loader changes nothing.
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char *name : {"ATTNSCOPE_VULKAN_LOADER", "ATTNSCOPE_TEST_VULKAN_LOADER"})
        env.insert(QString::fromLatin1(name), QStringLiteral("/nonexistent/libvulkan.so.1"));
    const Run devices = runCli({"devices"}, env);
    QCOMPARE(devices.code, 0);
    QVERIFY2(!devices.out.contains("no Vulkan loader"), qPrintable(devices.out));
    QVERIFY2(devices.out.contains("vulkan 0:"), qPrintable(devices.out));
}

void TestVulkanCli::corruptDriverManifestIsNamed_data()
{
    QTest::addColumn<QString>("variable");
    QTest::newRow("VK_ICD_FILENAMES") << "VK_ICD_FILENAMES";
    QTest::newRow("implicit layer in XDG_DATA_HOME") << "XDG_DATA_HOME";
}

void TestVulkanCli::corruptDriverManifestIsNamed()
{
    // The loader answers a driver or layer manifest that is not valid JSON with
    // VK_ERROR_OUT_OF_HOST_MEMORY, which was reported as memory running out. The refusal now
    // names the file.
    QFETCH(QString, variable);
    QTemporaryDir dir;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    QString manifest;
    if (variable == "VK_ICD_FILENAMES") {
        manifest = dir.filePath("broken_icd.json");
        env.insert("VK_ICD_FILENAMES", manifest);
    } else {
        QVERIFY(QDir().mkpath(dir.filePath("vulkan/implicit_layer.d")));
        manifest = dir.filePath("vulkan/implicit_layer.d/broken_layer.json");
        env.insert("XDG_DATA_HOME", dir.path());
    }
    QFile f(manifest);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(R"({"file_format_version": "1.0.0", "ICD": {"library_path": "libvulkan_lvp.so", )");
    f.close();
    QTemporaryDir out;
    const Run forced =
        runCli({"compute", example("multihead-causal"), "--out", out.path(), "--backend", "vulkan"}, env);
    QVERIFY2(forced.code != 0, qPrintable(forced.out));
    QVERIFY2(forced.err.contains(manifest) && forced.err.contains("not valid JSON"), qPrintable(forced.err));
    QVERIFY2(!forced.err.contains("out of memory", Qt::CaseInsensitive), qPrintable(forced.err));
    QCOMPARE(forced.err.trimmed().count('\n'), 0);

    const Run fallback =
        runCli({"compute", example("multihead-causal"), "--out", out.path(), "--backend", "auto"}, env);
    QVERIFY2(fallback.code == 0, qPrintable(fallback.err));
    QVERIFY2(fallback.out.contains("backend: cpu"), qPrintable(fallback.out));
    QVERIFY2(fallback.out.contains(QFileInfo(manifest).fileName()), qPrintable(fallback.out));
}

void TestVulkanCli::loaderThatIsNoVulkanLoader()
{
    // A real library that opens fine but is no Vulkan loader: nothing may crash on the way
    // out, `--backend vulkan` fails clearly, auto and `devices` carry on with the CPU.
    const auto run = [](const QStringList &args) {
        return attnscope::test::runCliWithVulkanLoader(QStringLiteral("libz.so.1"), args);
    };
    QTemporaryDir dir;
    const Run forced = run({"compute", example("padding-mask"), "--out", dir.path(), "--backend", "vulkan"});
    QVERIFY2(forced.code > 0, qPrintable(forced.out + forced.err));
    QVERIFY2(forced.err.contains("no Vulkan loader: libz.so.1 has no vkGetInstanceProcAddr"), qPrintable(forced.err));

    const Run fallback = run({"compute", example("padding-mask"), "--out", dir.path(), "--backend", "auto"});
    QVERIFY2(fallback.code == 0, qPrintable(fallback.err));
    QVERIFY2(fallback.out.contains("backend: cpu"), qPrintable(fallback.out));

    const Run devices = run({"devices"});
    QCOMPARE(devices.code, 0);
    QVERIFY2(devices.out.contains("vulkan: none (no Vulkan loader: libz.so.1"), qPrintable(devices.out));
    QVERIFY2(devices.out.contains("auto: cpu"), qPrintable(devices.out));
}

void TestVulkanCli::deviceLostFallsBack()
{
    QTemporaryDir dir;
    const QString gpuDir = dir.filePath("vulkan"), cpuDir = dir.filePath("cpu");
    QVERIFY(QDir().mkpath(gpuDir) && QDir().mkpath(cpuDir));
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("ATTNSCOPE_VULKAN_DEVICE", "0"); // auto uses even a CPU-type device once named
    const Run r = test::runCliWithVulkanFault(
        "device-lost", {"compute", example("cross-attention-translation"), "--out", gpuDir, "--backend", "auto"}, env);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("backend: cpu"), qPrintable(r.out));
    QVERIFY2(r.out.contains("VK_ERROR_DEVICE_LOST"), qPrintable(r.out));
    QCOMPARE(r.out.count("note: "), 1);
    const Run cpu = runCli({"compute", example("cross-attention-translation"), "--out", cpuDir, "--backend", "cpu"});
    QCOMPARE(cpu.code, 0);
    const std::string diff = compareNpyDirs(gpuDir, cpuDir);
    QVERIFY2(diff.empty(), diff.c_str());

    // Forced Vulkan reports the loss and writes nothing.
    QTemporaryDir empty;
    const Run forced = test::runCliWithVulkanFault(
        "device-lost",
        {"compute", example("cross-attention-translation"), "--out", empty.path(), "--backend", "vulkan"}, env);
    QVERIFY(forced.code != 0);
    QVERIFY2(forced.err.contains("VK_ERROR_DEVICE_LOST"), qPrintable(forced.err));
    QVERIFY(QDir(empty.path()).entryList(QDir::Files).isEmpty());
}

// Issue 21: ATTNSCOPE_VULKAN_FAULT lost the device of the shipped binary for any user who set
// it. Only the test driver injects faults now; attnscope-cli computes on the device.
void TestVulkanCli::environmentInjectsNoFault()
{
    QTemporaryDir dir;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("ATTNSCOPE_VULKAN_DEVICE", "0");
    env.insert("ATTNSCOPE_VULKAN_FAULT", "device-lost");
    const Run r = runCli({"compute", example("multihead-causal"), "--out", dir.path(), "--backend", "vulkan"}, env);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("backend: vulkan"), qPrintable(r.out));
    QVERIFY2(!r.out.contains("VK_ERROR_DEVICE_LOST") && !r.err.contains("VK_ERROR_DEVICE_LOST"), qPrintable(r.out));
}

void TestVulkanCli::devicesListsLimits()
{
    const Run r = runCli({"devices"});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.out.contains("vulkan 0: "), qPrintable(r.out));
    QVERIFY2(r.out.contains("maxStorageBufferRange"), qPrintable(r.out));
    QVERIFY2(r.out.contains("maxComputeWorkGroupCount"), qPrintable(r.out));
    QVERIFY2(r.out.contains("memory heaps"), qPrintable(r.out));
    QVERIFY2(r.out.contains("auto: "), qPrintable(r.out));

    const Run none = runCli({"devices"}, withoutDriver());
    QCOMPARE(none.code, 0);
    QVERIFY2(none.out.contains("vulkan: none (no Vulkan"), qPrintable(none.out));
    QVERIFY2(none.out.contains("auto: cpu"), qPrintable(none.out));
}

void TestVulkanCli::benchRunsOnVulkan()
{
    const Run r = runCli(
        {"bench", "--tokens", "33", "--dim", "16", "--heads", "2", "--causal", "--repeat", "2", "--backend", "vulkan"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("backend: vulkan"), qPrintable(r.out));
    QVERIFY2(r.out.contains("median_ms: "), qPrintable(r.out));
}

QTEST_GUILESS_MAIN(TestVulkanCli)
#include "tst_vulkan_cli.moc"
