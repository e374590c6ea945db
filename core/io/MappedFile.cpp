#include "core/io/MappedFile.h"

#include "core/ErrorCode.h"
#include "core/io/FileIo.h"
#include "core/io/FilesRead.h"
#include "core/io/UserText.h"

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attnscope {

namespace {

// The fault guard: a table of the guarded mappings that the SIGBUS handler reads without
// locking (a handler may take no lock). A slot is claimed under a mutex by open() and freed
// by the destructor before the mapping goes; the handler only compares addresses and sets a
// flag, so a slot changing under it at worst makes it look at a mapping that is not the
// faulting thread's (whose own mapping stays in its slot: the thread holds the file).
struct GuardSlot {
    std::atomic<std::uintptr_t> begin{0}; // 0: free
    std::atomic<std::uintptr_t> end{0};
    std::atomic<bool> faulted{false};
};

constexpr int kGuardSlots = 4096;
std::array<GuardSlot, kGuardSlots> g_slots;
std::mutex g_slotsMutex;
struct sigaction g_previous {
};
std::once_flag g_installed;
std::atomic<bool> g_handlerReady{false};

void forwardToPrevious(int signal, siginfo_t *info, void *context)
{
    // A handler installed with SA_RESETHAND (a crash reporter) expects the default action back
    // when it returns, as the kernel would have done before calling it.
    if (g_previous.sa_flags & SA_RESETHAND)
        ::signal(signal, SIG_DFL);
    if (g_previous.sa_flags & SA_SIGINFO) {
        if (g_previous.sa_sigaction)
            g_previous.sa_sigaction(signal, info, context);
        return;
    }
    if (g_previous.sa_handler == SIG_IGN)
        return;
    if (g_previous.sa_handler == SIG_DFL) {
        // Returning re-executes the faulting read, which now meets the default action.
        ::signal(signal, SIG_DFL);
        return;
    }
    g_previous.sa_handler(signal);
}

void onBusError(int signal, siginfo_t *info, void *context)
{
    const int savedErrno = errno;
    const auto address = reinterpret_cast<std::uintptr_t>(info ? info->si_addr : nullptr);
    for (GuardSlot &slot : g_slots) {
        const std::uintptr_t begin = slot.begin.load(std::memory_order_acquire);
        if (begin == 0 || address < begin || address >= slot.end.load(std::memory_order_acquire))
            continue;
        // Zero pages from the faulting page to the mapping's end: the read that faulted and
        // every later one read zeros, and the file is marked so its reader reports the change.
        const std::uintptr_t page = std::uintptr_t(::sysconf(_SC_PAGESIZE));
        const std::uintptr_t from = address & ~(page - 1);
        const std::uintptr_t end = slot.end.load(std::memory_order_acquire);
        void *p = ::mmap(reinterpret_cast<void *>(from), end - from, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                         -1, 0);
        if (p == MAP_FAILED)
            break;
        slot.faulted.store(true, std::memory_order_release);
        errno = savedErrno;
        return;
    }
    errno = savedErrno;
    forwardToPrevious(signal, info, context);
}

void installHandler()
{
    struct sigaction action {
    };
    action.sa_sigaction = onBusError;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    if (::sigaction(SIGBUS, &action, &g_previous) == 0)
        g_handlerReady.store(true);
}

// A slot for [begin, end), or -1 when the handler could not be installed or all are taken.
int guard(const void *begin, std::uint64_t bytes)
{
    std::call_once(g_installed, installHandler);
    if (!g_handlerReady.load())
        return -1;
    const std::uintptr_t page = std::uintptr_t(::sysconf(_SC_PAGESIZE));
    const auto from = reinterpret_cast<std::uintptr_t>(begin);
    const std::uintptr_t to = (from + std::uintptr_t(bytes) + page - 1) & ~(page - 1);
    std::lock_guard lock(g_slotsMutex);
    for (int i = 0; i < kGuardSlots; ++i) {
        GuardSlot &slot = g_slots[std::size_t(i)];
        if (slot.begin.load(std::memory_order_relaxed) != 0)
            continue;
        slot.faulted.store(false, std::memory_order_relaxed);
        slot.end.store(to, std::memory_order_release);
        slot.begin.store(from, std::memory_order_release);
        return i;
    }
    return -1;
}

void unguard(int slotIndex)
{
    std::lock_guard lock(g_slotsMutex);
    GuardSlot &slot = g_slots[std::size_t(slotIndex)];
    slot.begin.store(0, std::memory_order_release);
    slot.end.store(0, std::memory_order_release);
}

bool sameTime(const timespec &a, const timespec &b)
{
    return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

} // namespace

Error fileChangedError(const std::string &path)
{
    return codedError("file.changed", {printableText(path, 200)}, ErrorKind::Io);
}

Result<std::shared_ptr<const MappedFile>> MappedFile::open(const std::string &path)
{
    // O_NONBLOCK: opening a FIFO that has no writer must not wait for one (it is refused below).
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return codedError("file.open.colon", {printableText(path, 200), std::strerror(errno)}, ErrorKind::Io);
    struct stat st {
    };
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return codedError("file.notRegular", {printableText(path, 200)});
    }
    FilesRead::note(path, fd);
    std::shared_ptr<MappedFile> file(new MappedFile);
    file->m_path = path;
    file->m_fd = fd;
    file->m_size = std::uint64_t(st.st_size);
    file->m_mtime = st.st_mtim;
    if (file->m_size > 0) {
        void *p = ::mmap(nullptr, std::size_t(file->m_size), PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            const int err = errno;
            return Error{printableText(path, 200) + ": cannot map the file: " + std::strerror(err),
                         err == ENOMEM ? ErrorKind::OutOfMemory : ErrorKind::Io};
        }
        file->m_data = static_cast<const unsigned char *>(p);
        file->m_slot = guard(p, file->m_size);
        if (file->m_slot < 0)
            return Error{printableText(path, 200) +
                             ": cannot guard the file's mapping against changes (too many files open at once)",
                         ErrorKind::Io};
    }
    return std::shared_ptr<const MappedFile>(std::move(file));
}

MappedFile::~MappedFile()
{
    if (m_slot >= 0)
        unguard(m_slot);
    if (m_data)
        ::munmap(const_cast<unsigned char *>(m_data), std::size_t(m_size));
    if (m_fd >= 0)
        ::close(m_fd);
}

bool MappedFile::faulted() const
{
    return m_slot >= 0 && g_slots[std::size_t(m_slot)].faulted.load(std::memory_order_acquire);
}

Status MappedFile::checkUnchanged() const
{
    if (faulted())
        return fileChangedError(m_path);
    struct stat st {
    };
    if (::fstat(m_fd, &st) != 0)
        return ioError(m_path, "cannot check the file", errno);
    if (std::uint64_t(st.st_size) != m_size || !sameTime(st.st_mtim, m_mtime))
        return fileChangedError(m_path);
    return Ok{};
}

} // namespace attnscope
