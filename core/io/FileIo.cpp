#include "core/io/FileIo.h"

#include "core/ErrorCode.h"
#include "core/io/FilesRead.h"

#include "core/io/MemoryLimits.h"
#include "core/io/UserText.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>
#include <utility>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attnscope {

namespace {

constexpr std::size_t kChunk = 1 << 16;
constexpr std::size_t kBufferBytes = 1 << 18;

// A pipe whose writer is silent this long is given up on, so a command never hangs on it.
constexpr int kPipeTimeoutMs = 30000;

std::string shown(const std::string &path)
{
    return printableText(path, 200);
}

} // namespace

Error ioError(const std::string &path, const std::string &what, int err)
{
    return Error{shown(path) + ": " + what + " (" + std::strerror(err) + ")", ErrorKind::Io};
}

Result<std::string> readInputFile(const std::string &path, std::int64_t maxBytes, bool text)
{
    // O_NONBLOCK: opening a FIFO that has no writer must not wait for one.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        const int err = errno;
        if (err == ENOENT)
            return codedError("file.open", {shown(path)}, ErrorKind::Io);
        return codedError("file.open.reason", {shown(path), std::strerror(err)}, ErrorKind::Io);
    }
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat st {
    };
    if (::fstat(fd, &st) != 0)
        return ioError(path, "cannot read the file", errno);
    if (S_ISDIR(st.st_mode))
        return codedError("file.directory", {shown(path)}, ErrorKind::Io);
    const bool regular = S_ISREG(st.st_mode);
    auto tooLarge = [&](const std::string &size) {
        return codedError("file.tooLarge", {shown(path), size, formatBytes(maxBytes)}, ErrorKind::TooLarge);
    };
    if (regular && st.st_size > maxBytes)
        return tooLarge(formatBytes(st.st_size));
    FilesRead::note(path, fd);

    std::string bytes;
    if (regular)
        bytes.reserve(std::size_t(st.st_size));
    char chunk[kChunk];
    for (;;) {
        const ssize_t n = ::read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EAGAIN) {
            // A pipe with a writer that has not written yet: wait, but not for ever.
            pollfd p{fd, POLLIN, 0};
            const int ready = ::poll(&p, 1, kPipeTimeoutMs);
            if (ready == 0)
                return Error{shown(path) + ": no data arrived for " + std::to_string(kPipeTimeoutMs / 1000) +
                                 " seconds",
                             ErrorKind::Io};
            continue;
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return ioError(path, "cannot read the file", errno);
        }
        if (n == 0)
            break;
        if (text)
            if (const void *nul = std::memchr(chunk, 0, std::size_t(n)))
                return codedError(
                    "file.notText",
                    {shown(path), std::to_string(bytes.size() + std::size_t(static_cast<const char *>(nul) - chunk))});
        if (std::int64_t(bytes.size()) + n > maxBytes)
            return tooLarge("larger than " + formatBytes(maxBytes));
        bytes.append(chunk, std::size_t(n));
    }
    return bytes;
}

namespace {

constexpr char kTemporaryInfix[] = ".attnscope-";
constexpr std::size_t kSuffixLength = 6; // as mkstemp's XXXXXX
std::atomic<bool> g_unnamedAllowed{true};

bool isTemporaryName(std::string_view name)
{
    const std::size_t infix = sizeof kTemporaryInfix - 1;
    if (name.size() <= infix + kSuffixLength)
        return false;
    const std::string_view tail = name.substr(name.size() - infix - kSuffixLength);
    if (tail.substr(0, infix) != kTemporaryInfix)
        return false;
    return std::all_of(tail.begin() + infix, tail.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; });
}

std::string folderOf(const std::string &path)
{
    const std::size_t slash = path.rfind('/');
    if (slash == std::string::npos)
        return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

std::string randomSuffix()
{
    static const char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    unsigned char bytes[kSuffixLength];
    if (::getrandom(bytes, sizeof bytes, 0) != ssize_t(sizeof bytes)) {
        std::random_device device;
        for (unsigned char &b : bytes)
            b = static_cast<unsigned char>(device());
    }
    std::string out;
    for (unsigned char b : bytes)
        out.push_back(kChars[b % (sizeof kChars - 1)]);
    return out;
}

// Waits for the lock: a sweeper holds a temporary's lock only while it looks at it.
void lockExclusive(int fd)
{
    while (::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
    }
}

} // namespace

void AtomicFileWriter::setUnnamedTemporariesAllowed(bool allowed)
{
    g_unnamedAllowed = allowed;
}

void removeAbandonedTemporaries(const std::string &folder)
{
    DIR *dir = ::opendir(folder.c_str());
    if (!dir)
        return;
    const int dirFd = ::dirfd(dir);
    while (const dirent *entry = ::readdir(dir)) {
        const std::string_view name = entry->d_name;
        if (!isTemporaryName(name))
            continue;
        const int fd = ::openat(dirFd, entry->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0)
            continue;
        struct stat held {
        }, named{};
        // A writer alive holds the lock from its temporary's creation to its rename. Once the
        // lock is ours the name is checked to still be this file (not a newer writer's, should
        // the name have been reused in between) before it goes.
        if (::fstat(fd, &held) == 0 && S_ISREG(held.st_mode) && ::flock(fd, LOCK_EX | LOCK_NB) == 0 &&
            ::fstatat(dirFd, entry->d_name, &named, AT_SYMLINK_NOFOLLOW) == 0 && named.st_dev == held.st_dev &&
            named.st_ino == held.st_ino)
            ::unlinkat(dirFd, entry->d_name, 0);
        ::close(fd); // and with it the lock
    }
    ::closedir(dir);
}

AtomicFileWriter::AtomicFileWriter(std::string path, std::string shownAs)
    : m_path(std::move(path)), m_shown(shownAs.empty() ? m_path : std::move(shownAs))
{
}

AtomicFileWriter::~AtomicFileWriter()
{
    discard();
}

void AtomicFileWriter::discard()
{
    // A named temporary goes before its descriptor closes: the lock keeps sweepers off it until then.
    if (!m_temporary.empty())
        ::unlink(m_temporary.c_str());
    m_temporary.clear();
    if (m_fd >= 0)
        ::close(m_fd);
    m_fd = -1;
}

Status AtomicFileWriter::open()
{
    struct stat st {
    };
    if (::stat(m_path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        return Error{shown(m_shown) + ": is a directory", ErrorKind::Io};
    if (::stat(m_path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
        m_direct = true;
        m_fd = ::open(m_path.c_str(), O_WRONLY | O_CLOEXEC | O_TRUNC);
        if (m_fd < 0)
            return ioError(m_shown, "cannot write", errno);
        return Ok{};
    }
    // The mode a plain create would give (0666 less umask), or that of the file replaced.
    mode_t mode = 0;
    if (::stat(m_path.c_str(), &st) == 0) {
        mode = st.st_mode & 07777;
    } else {
        const mode_t mask = ::umask(0);
        ::umask(mask);
        mode = 0666 & ~mask;
    }
    const std::string folder = folderOf(m_path);
    removeAbandonedTemporaries(folder);
    if (!openUnnamed(folder, mode))
        if (Status s = openNamed(mode); !s)
            return s;
    m_buffer.reserve(kBufferBytes);
    return Ok{};
}

bool AtomicFileWriter::openUnnamed(const std::string &folder, mode_t mode)
{
    if (!g_unnamedAllowed)
        return false;
    // Any failure (EOPNOTSUPP from the file system, EISDIR from a kernel before 3.11, ...) leaves
    // it to the named path, which reports a reason of its own where the folder is the problem.
    const int fd = ::open(folder.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
    if (fd < 0)
        return false;
    // commit() gives the file a name through /proc/self/fd (linkat with AT_EMPTY_PATH needs a
    // capability); without /proc, named it is.
    struct stat viaProc {
    }, held{};
    if (::stat(("/proc/self/fd/" + std::to_string(fd)).c_str(), &viaProc) != 0 || ::fstat(fd, &held) != 0 ||
        viaProc.st_ino != held.st_ino || viaProc.st_dev != held.st_dev) {
        ::close(fd);
        return false;
    }
    lockExclusive(fd); // held through the instant the file has a name at commit()
    ::fchmod(fd, mode);
    m_fd = fd;
    m_unnamed = true;
    return true;
}

Status AtomicFileWriter::openNamed(mode_t mode)
{
    for (int attempt = 0;; ++attempt) {
        std::string pattern = m_path + kTemporaryInfix + "XXXXXX";
        const int fd = ::mkstemp(pattern.data());
        if (fd < 0)
            return ioError(m_shown, "cannot create a file beside it", errno);
        // Between mkstemp and the lock a sweeper may take the new file for an abandoned one;
        // it then holds the lock, removes the file and lets go, and this writer starts again.
        lockExclusive(fd);
        struct stat st {
        };
        if (::fstat(fd, &st) == 0 && st.st_nlink > 0) {
            m_fd = fd;
            m_temporary = pattern;
            ::fchmod(m_fd, mode); // mkstemp creates 0600
            return Ok{};
        }
        ::close(fd);
        if (attempt == 100)
            return ioError(m_shown, "cannot create a file beside it", EEXIST);
    }
}

bool AtomicFileWriter::writeAll(const char *data, std::size_t size)
{
    std::size_t done = 0;
    while (done < size && m_errno == 0) {
        const ssize_t n = ::write(m_fd, data + done, size - done);
        if (n < 0) {
            if (errno != EINTR)
                m_errno = errno;
            continue;
        }
        done += std::size_t(n);
    }
    return m_errno == 0;
}

bool AtomicFileWriter::flushBuffer()
{
    const bool ok = writeAll(m_buffer.data(), m_buffer.size());
    m_buffer.clear();
    return ok;
}

void AtomicFileWriter::write(const char *data, std::size_t size)
{
    if (m_fd < 0 || m_errno != 0)
        return;
    if (m_buffer.size() + size <= kBufferBytes) {
        m_buffer.append(data, size);
        return;
    }
    if (!flushBuffer())
        return;
    if (size >= kBufferBytes) // a whole tensor goes straight through, without a copy
        writeAll(data, size);
    else
        m_buffer.append(data, size);
}

Status AtomicFileWriter::commit()
{
    if (m_fd < 0)
        return Error{shown(m_shown) + ": not open", ErrorKind::Internal};
    flushBuffer();
    if (m_errno != 0) {
        const int err = m_errno;
        discard();
        return ioError(m_shown, "write failed", err);
    }
    if (m_direct) {
        const int fd = std::exchange(m_fd, -1);
        if (::close(fd) != 0)
            return ioError(m_shown, "write failed", errno);
        return Ok{};
    }
    if (::fsync(m_fd) != 0) {
        const int err = errno;
        discard();
        return ioError(m_shown, "write failed", err);
    }
    if (m_unnamed) {
        // A unique name beside the target, for the instant before the rename.
        const std::string fdPath = "/proc/self/fd/" + std::to_string(m_fd);
        for (int attempt = 0; m_temporary.empty(); ++attempt) {
            const std::string name = m_path + kTemporaryInfix + randomSuffix();
            if (::linkat(AT_FDCWD, fdPath.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) {
                m_temporary = name;
            } else if (errno != EEXIST || attempt == 100) {
                const int err = errno;
                discard();
                return ioError(m_shown, "cannot replace", err);
            }
        }
    }
    // Renamed while the lock is held (a sweeper must not take the finished file), then closed;
    // the data is on disk since fsync, so what close says now changes nothing.
    if (::rename(m_temporary.c_str(), m_path.c_str()) != 0) {
        const int err = errno;
        discard();
        return ioError(m_shown, "cannot replace", err);
    }
    m_temporary.clear();
    ::close(std::exchange(m_fd, -1));
    return Ok{};
}

bool sameFile(const std::string &a, const std::string &b)
{
    struct stat sa {
    }, sb{};
    return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

Result<std::string> createStagingFolder(const std::string &parent, const std::string &prefix, const std::string &shown,
                                        int &lockFd)
{
    static const char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    std::random_device random;
    for (int attempt = 0; attempt < 100; ++attempt) {
        std::string suffix(6, 'x');
        for (char &c : suffix)
            c = kChars[random() % (sizeof kChars - 1)];
        const std::string path = (std::filesystem::path(parent) / (prefix + suffix)).string();
        if (::mkdir(path.c_str(), 0777) != 0) {
            if (errno == EEXIST)
                continue;
            return ioError(shown, "cannot create a staging folder", errno);
        }
        const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            return ioError(shown, "cannot open its staging folder", errno);
        while (::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
        }
        // A sweeper may have taken the folder between mkdir and the lock: then it is gone, and
        // another is made.
        struct stat st {
        };
        if (::fstat(fd, &st) == 0 && st.st_nlink > 0) {
            lockFd = fd;
            return path;
        }
        ::close(fd);
    }
    return ioError(shown, "cannot create a staging folder", EEXIST);
}

void removeAbandonedStagingFolders(const std::string &parent, const std::string &prefix)
{
    std::error_code ec;
    std::filesystem::directory_iterator it(parent, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
        if (!it->path().filename().string().starts_with(prefix))
            continue;
        const int fd = ::open(it->path().c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            continue;
        if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
            std::error_code ignored;
            std::filesystem::remove_all(it->path(), ignored);
        }
        ::close(fd);
    }
}

} // namespace attnscope
