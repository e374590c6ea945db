#include "app/gui/views/BackendMenu.h"

#include "app/gui/document/ComputeController.h"
#include "app/gui/views/PlainText.h"

#include <QActionGroup>

namespace attnscope {

BackendMenu::BackendMenu(ComputeController *compute, QWidget *parent)
    : QMenu(tr("&Backend"), parent), m_compute(compute), m_group(new QActionGroup(this))
{
    const std::pair<QString, BackendRequest> choices[] = {{tr("&Automatic (GPU if available)"), BackendRequest::Auto},
                                                          {tr("&CPU (Eigen)"), BackendRequest::Cpu},
                                                          {tr("&Vulkan"), BackendRequest::Vulkan}};
    for (const auto &[text, request] : choices) {
        QAction *a = addAction(text);
        a->setCheckable(true);
        a->setData(int(request));
        m_group->addAction(a);
        connect(a, &QAction::triggered, this, [this, request = request] { choose(request); });
    }
    addSeparator();
    // One entry per Vulkan device, listed when the menu opens; the CPU engine and what
    // Automatic picks are shown for information.
    QMenu *devices = addMenu(tr("Vulkan &device"));
    connect(devices, &QMenu::aboutToShow, this, [this, devices] { fillDevices(devices); });
}

void BackendMenu::choose(BackendRequest request, const QString &vulkanDevice)
{
    for (QAction *a : m_group->actions())
        a->setChecked(a->data().toInt() == int(request));
    m_compute->setBackendRequest(request, vulkanDevice);
    emit chosen();
}

void BackendMenu::fillDevices(QMenu *devices)
{
    devices->clear();
    const DeviceListing listing = listComputeDevices();
    for (const DeviceDescription &d : listing.devices) {
        const QString name = QString::fromStdString(d.name);
        if (d.kind != BackendRequest::Vulkan) {
            devices->addAction(tr("CPU: %1").arg(name))->setEnabled(false);
            continue;
        }
        const QString index = QString::number(d.index);
        QAction *a = devices->addAction(tr("Vulkan %1: %2").arg(index, name));
        a->setToolTip(plainToolTip(QString::fromStdString(d.details)));
        a->setCheckable(true);
        a->setChecked(m_compute->backendRequest() == BackendRequest::Vulkan && m_compute->vulkanDevice() == index);
        connect(a, &QAction::triggered, this, [this, index] { choose(BackendRequest::Vulkan, index); });
    }
    if (!listing.vulkanMissing.empty())
        devices->addAction(tr("No Vulkan device: %1").arg(QString::fromStdString(listing.vulkanMissing)))
            ->setEnabled(false);
    devices
        ->addAction(listing.autoDevice >= 0
                        ? tr("Automatic uses Vulkan %1").arg(listing.autoDevice)
                        : tr("Automatic uses the CPU: %1").arg(QString::fromStdString(listing.autoReason)))
        ->setEnabled(false);
}

} // namespace attnscope
