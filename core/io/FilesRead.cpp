#include "core/io/FilesRead.h"

#include <atomic>

#include <sys/stat.h>

namespace attnscope {

namespace {

std::atomic<FilesRead *> g_recording{nullptr};

} // namespace

FilesRead::FilesRead() : m_previous(g_recording.exchange(this)) {}

FilesRead::~FilesRead()
{
    g_recording.store(m_previous);
}

std::vector<FileRead> FilesRead::files() const
{
    std::lock_guard lock(m_mutex);
    return m_files;
}

std::optional<FileRead> FilesRead::find(const std::string &path) const
{
    struct stat st {
    };
    if (::stat(path.c_str(), &st) != 0)
        return std::nullopt;
    std::lock_guard lock(m_mutex);
    for (const FileRead &file : m_files)
        if (file.device == std::uint64_t(st.st_dev) && file.inode == std::uint64_t(st.st_ino))
            return file;
    return std::nullopt;
}

void FilesRead::note(const std::string &path, int fd)
{
    FilesRead *recording = g_recording.load();
    if (!recording)
        return;
    struct stat st {
    };
    if (::fstat(fd, &st) != 0)
        return;
    recording->add({path, std::uint64_t(st.st_dev), std::uint64_t(st.st_ino), std::int64_t(st.st_size),
                    std::int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec});
}

void FilesRead::add(FileRead file)
{
    std::lock_guard lock(m_mutex);
    for (const FileRead &known : m_files)
        if (known.device == file.device && known.inode == file.inode)
            return;
    m_files.push_back(std::move(file));
}

} // namespace attnscope
