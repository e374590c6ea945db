#include "core/MappedFile.h"

#include "core/ErrorCode.h"
#include "core/FilesRead.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attnscope {

Result<std::shared_ptr<const MappedFile>> MappedFile::open(const std::string &path)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return codedError("file.open.colon", {path, std::strerror(errno)}, ErrorKind::Io);
    struct stat st {
    };
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return codedError("file.notRegular", {path});
    }
    FilesRead::note(path, fd);
    std::shared_ptr<MappedFile> file(new MappedFile);
    file->m_path = path;
    file->m_size = std::uint64_t(st.st_size);
    if (file->m_size > 0) {
        void *p = ::mmap(nullptr, std::size_t(file->m_size), PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            const int err = errno;
            ::close(fd);
            return Error{path + ": cannot map the file: " + std::strerror(err),
                         err == ENOMEM ? ErrorKind::OutOfMemory : ErrorKind::Io};
        }
        file->m_data = static_cast<const unsigned char *>(p);
    }
    ::close(fd); // the mapping stays valid without the descriptor
    return std::shared_ptr<const MappedFile>(std::move(file));
}

MappedFile::~MappedFile()
{
    if (m_data)
        ::munmap(const_cast<unsigned char *>(m_data), std::size_t(m_size));
}

} // namespace attnscope
