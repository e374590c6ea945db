#include "app/gui/document/BackendHost.h"

namespace attnscope {

void BackendHost::setRequest(BackendRequest request, const QString &vulkanDevice)
{
    std::lock_guard lock(m_requests);
    m_request = request;
    m_vulkanDevice = vulkanDevice;
    ++m_requestSerial;
    m_hasGiven = false;
}

void BackendHost::setOptions(const BackendOptions &options)
{
    std::lock_guard lock(m_requests);
    m_options = options;
}

void BackendHost::setBackend(std::shared_ptr<AttentionBackend> backend)
{
    std::lock_guard lock(m_requests);
    m_given = std::move(backend);
    m_hasGiven = true;
}

BackendHost::Lease BackendHost::lease()
{
    Lease lease;
    lease.lock = std::unique_lock(m_mutex);
    BackendRequest request;
    BackendOptions options;
    quint64 serial;
    std::shared_ptr<AttentionBackend> given;
    {
        std::lock_guard lock(m_requests);
        request = m_request;
        options = m_options;
        options.vulkanDevice = m_vulkanDevice.toStdString();
        serial = m_requestSerial;
        if (m_hasGiven) {
            given = std::exchange(m_given, nullptr);
            m_hasGiven = false;
        }
    }
    if (given) {
        m_backend = std::move(given);
        m_madeSerial = serial;
        m_error = Error{};
    } else if (serial != m_madeSerial) {
        m_madeSerial = serial;
        auto selection = createBackend(request, options);
        if (selection) {
            m_backend = std::move(selection->backend);
            m_error = Error{};
            lease.replaced = true;
            lease.notice = selection->noticeError;
        } else {
            m_backend.reset();
            m_error = selection.error();
            lease.replaced = true;
        }
    }
    lease.backend = m_backend.get();
    lease.error = m_error;
    return lease;
}

} // namespace attnscope
