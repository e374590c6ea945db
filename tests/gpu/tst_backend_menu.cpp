// The main window's Backend > Vulkan device menu, built from listComputeDevices() on a real
// Vulkan device (lavapipe in CI), offscreen. It used to parse the `devices` text lines back
// and cut each name at its first comma: "Vulkan 0: llvmpipe (LLVM 15.0.6".

#include "VulkanTestUtil.h"

#include "app/engine/BackendChoice.h"
#include "app/gui/document/MemoryBudget.h"
#include "app/gui/sources/ProjectSource.h"
#include "app/gui/views/BackendMenu.h"
#include "app/gui/views/MainWindow.h"
#include "app/gui/views/PooledHeatmapView.h"
#include "core/attention/CpuBackend.h"
#include "core/attention/RandomProblem.h"
#include "core/formats/ProjectFile.h"
#include "core/models/TransformerModel.h"
#include "gpu/VulkanBackend.h"

#include <QAction>
#include <QFile>
#include <QMenu>
#include <QMenuBar>
#include <QObject>
#include <QScopeGuard>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace attnscope;

class TestBackendMenu : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void listsEveryVulkanDeviceByItsWholeName();
    void modelRunFromTheWindowRunsOnVulkan();
    void pooledViewFromTheWindowRunsOnVulkan();

private:
    // Chooses the first Vulkan device in w's Backend menu.
    static bool chooseVulkan(MainWindow &w);
};

void TestBackendMenu::initTestCase()
{
    ATTNSCOPE_SKIP_WITHOUT_VULKAN();
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("AttnScopeTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_backend_menu"));
    QSettings().clear();
    QSettings().setValue(QStringLiteral("compute/backend"), int(BackendRequest::Cpu));
}

void TestBackendMenu::listsEveryVulkanDeviceByItsWholeName()
{
    auto devices = listVulkanDevices();
    QVERIFY(devices.ok());
    MainWindow w;
    QMenu *menu = nullptr;
    for (QMenu *m : w.menuBar()->findChildren<QMenu *>())
        if (m->title() == BackendMenu::tr("Vulkan &device"))
            menu = m;
    QVERIFY(menu);
    emit menu->aboutToShow();

    for (const vk::DeviceInfo &d : *devices) {
        const QString expected =
            BackendMenu::tr("Vulkan %1: %2").arg(QString::number(d.index), QString::fromStdString(d.label()));
        QAction *entry = nullptr;
        for (QAction *a : menu->actions())
            if (a->text() == expected)
                entry = a;
        QStringList shown;
        for (QAction *a : menu->actions())
            shown << a->text();
        QVERIFY2(entry, qPrintable(QStringLiteral("no entry \"%1\" in: %2").arg(expected, shown.join(" | "))));
        QVERIFY(entry->isEnabled());
        QVERIFY(entry->isCheckable());
        QVERIFY(!entry->isChecked());

        // Choosing it asks the compute controller for exactly that device.
        entry->trigger();
        QCOMPARE(w.computeController()->backendRequest(), BackendRequest::Vulkan);
        QCOMPARE(w.computeController()->vulkanDevice(), QString::number(d.index));
        emit menu->aboutToShow(); // rebuilt: the chosen device is now the checked one
        for (QAction *a : menu->actions())
            if (a->text() == expected)
                QVERIFY(a->isChecked());
    }
    QVERIFY(w.computeController()->waitForIdle(60000));
}

// A model run typed in the window computes its attention on the backend chosen in the menu, not
// on the CPU whatever the menu says (as it did): the status bar names the Vulkan device, and the
// attentions are the CPU engine's within float32 tolerance.
void TestBackendMenu::modelRunFromTheWindowRunsOnVulkan()
{
    auto devices = listVulkanDevices();
    QVERIFY(devices.ok());
    QVERIFY(!devices->empty());
    const vk::DeviceInfo &device = devices->front();
    MainWindow w;
    QVERIFY(chooseVulkan(w));

    const QString folder = QStringLiteral(ATTNSCOPE_SOURCE_DIR "/tests/fixtures/models/gpt2-f16");
    QSignalSpy shown(&w, &MainWindow::modelRunShown);
    QVERIFY(w.openModel(folder));
    QVERIFY(shown.wait(120000));
    QVERIFY2(w.statusText().contains(QStringLiteral(" on vulkan")), qPrintable(w.statusText()));
    QVERIFY2(w.statusText().contains(QString::fromStdString(device.name)), qPrintable(w.statusText()));
    const auto run = shown.last().at(0).value<ModelRunPtr>();
    QVERIFY(run);

    auto model = TransformerModel::load(QString(folder).toStdString());
    QVERIFY(model);
    CpuBackend cpu;
    auto reference = model->forward(Encoding{run->ids, run->tokens, run->words}, cpu);
    QVERIFY(reference);
    QCOMPARE((*reference)->attentions.size(), run->attentions.size());
    double worst = 0.0;
    for (std::size_t k = 0; k < run->attentions.size(); ++k)
        worst = std::max(worst, double(std::abs(run->attentions[k] - (*reference)->attentions[k])));
    QVERIFY2(worst < 1e-5, qPrintable(QStringLiteral("largest difference from the CPU engine: %1").arg(worst)));
}

bool TestBackendMenu::chooseVulkan(MainWindow &w)
{
    auto devices = listVulkanDevices();
    if (!devices.ok() || devices->empty())
        return false;
    for (QMenu *m : w.menuBar()->findChildren<QMenu *>())
        if (m->title() == BackendMenu::tr("Vulkan &device")) {
            emit m->aboutToShow();
            const QString text =
                BackendMenu::tr("Vulkan %1: %2")
                    .arg(QString::number(devices->front().index), QString::fromStdString(devices->front().label()));
            for (QAction *a : m->actions())
                if (a->text() == text) {
                    a->trigger();
                    return w.computeController()->backendRequest() == BackendRequest::Vulkan;
                }
        }
    return false;
}

// A project too long for full traces opens in the pooled view, whose tiles (zoomed blocks and the
// head mean included) are computed by the backend chosen in the menu: the Vulkan device's own
// counter of submissions grows while the tile arrives, and the tile is the CPU engine's.
void TestBackendMenu::pooledViewFromTheWindowRunsOnVulkan()
{
    MainWindow w;
    QVERIFY(chooseVulkan(w));
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    RandomProblemOptions o;
    o.tokens = 96;
    o.modelDim = 16;
    o.heads = 2;
    o.causal = true;
    Project project = randomProject(o);
    const QString path = dir.filePath(QStringLiteral("long.attnscope.json"));
    {
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray::fromStdString(serializeProject(project, dir.path().toStdString())));
    }
    MemoryBudget budget;
    budget.pooledCells = 1000; // 96 x 96 x 2 cells is "long" here
    w.setMemoryBudget(budget);
    QVERIFY(w.openFile(path));
    QVERIFY(w.project()->isPooled());
    QVERIFY(QTest::qWaitFor(
        [&] { return w.project()->pooledView()->visibleTile() && !w.project()->pooledView()->jobs()->isBusy(); },
        120000));
    const PooledTilePtr tile = w.project()->pooledView()->visibleTile();
    QVERIFY(tile && tile->mean.size() > 0);

    BackendHost::Lease lease = w.computeController()->backendHost()->lease();
    auto *vulkan = dynamic_cast<VulkanBackend *>(lease.backend);
    QVERIFY2(vulkan, "the window's backend is not the Vulkan device chosen in the menu");
    QVERIFY(vulkan->stats().submissions > 0);
    PoolOptions options;
    options.bins = tile->block.bins;
    options.queryBegin = tile->block.q0;
    options.queryEnd = tile->block.q1;
    options.keyBegin = tile->block.k0;
    options.keyEnd = tile->block.k1;
    options.headMean = true;
    auto cpu = computePooledCpu(project.problem, options);
    QVERIFY(cpu.ok());
    for (size_t h = 0; h < cpu->pooled.size(); ++h)
        QVERIFY((tile->heads[h] - cpu->pooled[h]).cwiseAbs().maxCoeff() < 1e-5f);
    QVERIFY((tile->mean - cpu->headMean).cwiseAbs().maxCoeff() < 1e-5f);
}

QTEST_MAIN(TestBackendMenu)
#include "tst_backend_menu.moc"
