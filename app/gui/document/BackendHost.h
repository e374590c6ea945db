#pragma once

#include "app/engine/BackendChoice.h"

#include <QString>

#include <memory>
#include <mutex>

namespace attnscope {

// The backend the user chose (the Backend menu), shared by every job that computes attention: a
// project's computations, model runs and pooled tiles all run where the user asked. Backends need
// not be thread-safe, so a job holds a lease (the host's lock) for as long as it computes; jobs of
// different lanes then take turns on the one device.
class BackendHost
{
public:
    // The GUI thread asks for a backend; the next lease creates it (Vulkan start-up can take a
    // while, so never on the GUI thread).
    void setRequest(BackendRequest request, const QString &vulkanDevice);
    // What the backends made from now on start from (the request's device replaces theirs).
    void setOptions(const BackendOptions &options);
    // Tests: use this backend (a wrapper around a real one) from the next lease on.
    void setBackend(std::shared_ptr<AttentionBackend> backend);

    // What a job holds while it computes. backend is null when the requested one could not be
    // made (error says why). `replaced` is set on the one lease that made a new backend (its
    // notice, such as "no Vulkan device: using the CPU", is said once).
    struct Lease {
        std::unique_lock<std::mutex> lock;
        AttentionBackend *backend = nullptr;
        bool replaced = false;
        Error notice; // with replaced: what createBackend() noted (an empty message: nothing)
        Error error;  // without a backend: why
    };
    // On a worker: locks the host and makes the requested backend when it changed (or none was
    // made yet: Auto).
    Lease lease();

private:
    std::mutex m_mutex;    // held by the lease; guards everything below
    std::mutex m_requests; // the GUI thread's requests, never held while computing
    BackendRequest m_request = BackendRequest::Auto;
    QString m_vulkanDevice;
    BackendOptions m_options;
    quint64 m_requestSerial = 0, m_madeSerial = ~quint64(0);
    std::shared_ptr<AttentionBackend> m_given; // setBackend()'s, until a lease takes it
    bool m_hasGiven = false;
    std::shared_ptr<AttentionBackend> m_backend;
    Error m_error;
};

} // namespace attnscope
