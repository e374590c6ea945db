#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace attnscope {

// One file a piece of work read, as it was when it was opened.
struct FileRead {
    std::string path; // as the reader opened it
    std::uint64_t device = 0, inode = 0;
    std::int64_t size = 0;
    std::int64_t modifiedNs = 0; // st_mtim, nanoseconds since the epoch
};

// The files a piece of work read, so that nothing it writes can replace one of them
// (attnscope-cli refuses an output that is one of its inputs: the project, the project's
// {"npy": ...} references, a token sidecar, a model folder's config, weights and tokenizer
// files). Every file core/ reads goes through readInputFile() or MappedFile::open(), and both
// report it here: the loaders need not know who asks.
//
// A FilesRead records from its construction to its destruction, whatever thread reads; one
// made while another records takes over until it is destroyed (destroy them in reverse order).
// The readers report nothing when no FilesRead exists (the GUI).
class FilesRead
{
public:
    FilesRead();
    ~FilesRead();
    FilesRead(const FilesRead &) = delete;
    FilesRead &operator=(const FilesRead &) = delete;

    std::vector<FileRead> files() const;

    // The file read that `path` names now (the same device and inode, so other spellings and
    // hard or symbolic links count), or nullopt: `path` does not exist or was not read.
    std::optional<FileRead> find(const std::string &path) const;

    // Called by the readers, with the descriptor they opened `path` as.
    static void note(const std::string &path, int fd);

private:
    void add(FileRead file);

    FilesRead *m_previous = nullptr;
    mutable std::mutex m_mutex;
    std::vector<FileRead> m_files;
};

} // namespace attnscope
