// The main window's Backend > Vulkan device menu, built from listComputeDevices() on a real
// Vulkan device (lavapipe in CI), offscreen. It used to parse the `devices` text lines back
// and cut each name at its first comma: "Vulkan 0: llvmpipe (LLVM 15.0.6".

#include "VulkanTestUtil.h"

#include "app/engine/BackendChoice.h"
#include "app/gui/views/MainWindow.h"

#include <QAction>
#include <QMenu>
#include <QMenuBar>
#include <QObject>
#include <QSettings>
#include <QStandardPaths>
#include <QTest>

using namespace attnscope;

class TestBackendMenu : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void listsEveryVulkanDeviceByItsWholeName();
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
        if (m->title() == MainWindow::tr("Vulkan &device"))
            menu = m;
    QVERIFY(menu);
    emit menu->aboutToShow();

    for (const vk::DeviceInfo &d : *devices) {
        const QString expected =
            MainWindow::tr("Vulkan %1: %2").arg(QString::number(d.index), QString::fromStdString(d.label()));
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

QTEST_MAIN(TestBackendMenu)
#include "tst_backend_menu.moc"
