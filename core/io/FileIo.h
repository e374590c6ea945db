#pragma once

#include "core/Result.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <sys/types.h>

namespace attnscope {

// Reads a whole input file (a project, a .npy) of at most maxBytes, without ever reading
// without end: a regular file larger than maxBytes is refused by its size before reading,
// and anything else (a pipe, a FIFO, /dev/zero) is read in chunks that stop at maxBytes, or
// at the first NUL byte when `text` is set (no JSON document holds one). Errors start with
// the path and say why: "p.json: cannot open the file (Permission denied)",
// "/dev/zero: not a text file (a NUL byte at offset 0)", "big.json: the file is 3.2 GiB;
// files up to 1.0 GiB can be read on this machine" (kind TooLarge).
Result<std::string> readInputFile(const std::string &path, std::int64_t maxBytes, bool text = true);

// Writes one output file so that it appears whole or not at all, and so that a writer killed
// at any moment leaves nothing behind. The bytes go to an unnamed temporary file in the target's
// folder (O_TMPFILE), which commit() flushes, syncs, links under a unique name beside the target
// and renames over it: a name exists only between those two calls. Where the file system has no
// O_TMPFILE (NFS, FUSE, older kernels), the temporary is named (TARGET.attnscope-XXXXXX) from the
// start. Either way the writer holds an exclusive flock() on its temporary while it lives, and
// every writer first removes the TARGET.attnscope-XXXXXX files of its folder that nobody holds:
// those of writers that were killed. (A lock, not a process id: ids repeat across PID namespaces
// and after a restart, and the kernel drops the lock of a process however it ends.)
// A target that exists and is not a regular file (/dev/null, /dev/full, a FIFO) is written
// directly instead. Every failure keeps the system's reason ("No space left on device") in an
// Error of kind Io naming the target; a writer destroyed before commit() removes its temporary.
class AtomicFileWriter
{
public:
    // shownAs: the name errors use, when the path written is an intermediate one.
    explicit AtomicFileWriter(std::string path, std::string shownAs = {});
    ~AtomicFileWriter();
    AtomicFileWriter(const AtomicFileWriter &) = delete;
    AtomicFileWriter &operator=(const AtomicFileWriter &) = delete;

    Status open();
    // Buffered; the first failure is kept and reported by commit().
    void write(const char *data, std::size_t size);
    void write(std::string_view bytes) { write(bytes.data(), bytes.size()); }
    Status commit();

    const std::string &path() const { return m_path; }
    // Whether the temporary is unnamed (O_TMPFILE) rather than TARGET.attnscope-XXXXXX.
    bool unnamedTemporary() const { return m_unnamed; }

    // Tests only: false makes open() take the named path, as on a file system without O_TMPFILE.
    static void setUnnamedTemporariesAllowed(bool allowed);

private:
    bool openUnnamed(const std::string &folder, mode_t mode);
    Status openNamed(mode_t mode);
    bool writeAll(const char *data, std::size_t size);
    bool flushBuffer();
    void discard();

    std::string m_path, m_shown, m_temporary;
    int m_fd = -1;
    bool m_direct = false;
    bool m_unnamed = false;
    int m_errno = 0;
    std::string m_buffer;
};

// Removes the temporaries (NAME.attnscope-XXXXXX) in folder whose writers are gone: those no
// process holds a lock on. AtomicFileWriter::open() calls it for the target's folder.
void removeAbandonedTemporaries(const std::string &folder);

// A folder that becomes an output folder (or gives it its files) only once every file is in it:
// created in `parent` as `prefix` + 6 random characters, with the umask's mode (mkdir, never a
// changed umask, which other threads would see), and held by an exclusive flock() on `lockFd` from
// before anyone could take it for abandoned until the caller closes it, after removing or renaming
// the folder. The path, or an Error of kind Io naming `shown`.
Result<std::string> createStagingFolder(const std::string &parent, const std::string &prefix, const std::string &shown,
                                        int &lockFd);

// Removes the folders in `parent` whose names start with `prefix` and that nobody holds: the
// staging folders of writers that were killed (the kernel drops a lock however its process ends).
void removeAbandonedStagingFolders(const std::string &parent, const std::string &prefix);

// An Error of kind Io: "<path>: <what> (<strerror(err)>)".
Error ioError(const std::string &path, const std::string &what, int err);

// True when both paths name the same existing file (same device and inode, so links and
// different spellings count): an output that would overwrite an input.
bool sameFile(const std::string &a, const std::string &b);

} // namespace attnscope
