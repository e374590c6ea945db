#pragma once

#include "app/engine/BackendChoice.h"

#include <QMenu>

class QActionGroup;

namespace attnscope {

class ComputeController;

// The Backend menu: Automatic, the CPU engine or Vulkan, and one entry per Vulkan device (listed
// when the submenu opens, with what Automatic would pick). The choice goes to the compute
// controller, whose backend host every job of the window computes on.
class BackendMenu : public QMenu
{
    Q_OBJECT

public:
    BackendMenu(ComputeController *compute, QWidget *parent = nullptr);

    // Checks `request` and hands it (and the device) to the controller.
    void choose(BackendRequest request, const QString &vulkanDevice = {});

signals:
    void chosen();

private:
    void fillDevices(QMenu *devices);

    ComputeController *m_compute;
    QActionGroup *m_group;
};

} // namespace attnscope
