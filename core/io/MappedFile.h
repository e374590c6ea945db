#pragma once

#include "core/Result.h"

#include <cstdint>
#include <ctime>
#include <memory>
#include <string>
#include <string_view>

namespace attnscope {

// A whole file mapped read-only into memory, so a large tensor file costs address space
// rather than a copy: views of it (attention sets, model weights) keep the mapping alive
// through shared_ptr. Regular files only: a FIFO or a device such as /dev/zero is refused
// without ever waiting on it.
//
// Files change under their readers: `np.save` and `torch.save` truncate the file in place and
// write it again, so the script that made an open file may rewrite it at any moment. Reading a
// mapped page beyond the new end would raise SIGBUS and kill the process. Every mapping is
// therefore guarded: a process-wide SIGBUS handler recognises a fault inside a guarded
// mapping, puts zero pages over the rest of it (the read goes on, with zeros) and marks the
// file as changed. Readers never crash; whoever reads a mapping asks checkUnchanged() after
// its work and reports the error instead of its result.
class MappedFile
{
public:
    // Errors are of kind Io ("cannot open ...: No such file or directory") or InvalidInput
    // ("... is not a regular file").
    static Result<std::shared_ptr<const MappedFile>> open(const std::string &path);
    ~MappedFile();
    MappedFile(const MappedFile &) = delete;
    MappedFile &operator=(const MappedFile &) = delete;

    const unsigned char *data() const { return m_data; }
    std::uint64_t size() const { return m_size; }
    std::string_view bytes() const { return {reinterpret_cast<const char *>(m_data), std::size_t(m_size)}; }
    const std::string &path() const { return m_path; }

    // Ok while the bytes read are the file's bytes as they were when it was opened. An error
    // of kind Io, code "file.changed" ("PATH: the file changed on disk; reopen it") once a read
    // fell beyond the file's new end (and read zeros), or the file was truncated, grown or
    // rewritten since (its size or modification time differ). A file replaced by a rename
    // (an atomic save) does not count: the mapping keeps the old file's bytes, unchanged.
    Status checkUnchanged() const;
    // Whether a read of this mapping faulted (the file shrank under it).
    bool faulted() const;

private:
    MappedFile() = default;
    const unsigned char *m_data = nullptr;
    std::uint64_t m_size = 0;
    std::string m_path;
    int m_fd = -1;      // kept open: fstat tells whether this very file changed
    int m_slot = -1;    // the fault guard's slot for the mapping, -1 when unguarded
    timespec m_mtime{}; // when the file was opened
};

// The error MappedFile::checkUnchanged() gives for `path`.
Error fileChangedError(const std::string &path);

} // namespace attnscope
