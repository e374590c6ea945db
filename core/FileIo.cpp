#include "core/FileIo.h"

#include "core/ErrorCode.h"
#include "core/FilesRead.h"

#include "core/MemoryLimits.h"
#include "core/UserText.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <poll.h>
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
    if (m_fd >= 0)
        ::close(m_fd);
    m_fd = -1;
    if (!m_temporary.empty())
        ::unlink(m_temporary.c_str());
    m_temporary.clear();
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
    std::string pattern = m_path + ".attnscope-XXXXXX";
    m_fd = ::mkstemp(pattern.data());
    if (m_fd < 0)
        return ioError(m_shown, "cannot create a file beside it", errno);
    m_temporary = pattern;
    // mkstemp creates 0600; give the file the mode a plain create would (0666 less umask),
    // or the mode of the file it replaces.
    mode_t mode = 0;
    if (::stat(m_path.c_str(), &st) == 0) {
        mode = st.st_mode & 07777;
    } else {
        const mode_t mask = ::umask(0);
        ::umask(mask);
        mode = 0666 & ~mask;
    }
    ::fchmod(m_fd, mode);
    m_buffer.reserve(kBufferBytes);
    return Ok{};
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
    if (!m_direct && ::fsync(m_fd) != 0) {
        const int err = errno;
        discard();
        return ioError(m_shown, "write failed", err);
    }
    const int fd = m_fd;
    m_fd = -1;
    if (::close(fd) != 0) {
        const int err = errno;
        discard();
        return ioError(m_shown, "write failed", err);
    }
    if (m_direct)
        return Ok{};
    if (::rename(m_temporary.c_str(), m_path.c_str()) != 0) {
        const int err = errno;
        discard();
        return ioError(m_shown, "cannot replace", err);
    }
    m_temporary.clear();
    return Ok{};
}

bool sameFile(const std::string &a, const std::string &b)
{
    struct stat sa {
    }, sb{};
    return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

} // namespace attnscope
