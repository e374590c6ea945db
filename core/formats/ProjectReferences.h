#pragma once

#include "core/Result.h"
#include "core/Tensor.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace attnscope {

// The `{"npy": "relative/path.npy"}` matrices of project files (design.md, format 1),
// kept apart from core/formats/ProjectFile.cpp's JSON readers.

// Reads the matrix `field` refers to. relativePath must be relative and lead, every symbolic
// link followed, to a file in the folder or a folder below it (a shared project must not pull
// the reader's other files into its figures and exports; core/io/FolderConfinement.h): one
// outside is refused before it is looked at, alike whether it exists or not. It must name an
// existing regular file (a device such as /dev/zero or a FIFO is refused before it is opened)
// of at most a quarter of the memory budget, holding a 2-D C-order float16, float32 or float64
// array of finite values. Errors name the field and the path as
// written: "weights.q: w/q.npy: expected a 2-D array, found shape (4,)".
Result<MatrixF> readReferencedMatrix(const std::string &field, const std::string &relativePath,
                                     const std::string &folder);

// A reference that may hold a batch: a 2-D array (sequences = 0) or, with allow3d, a 3-D
// [B, T, d] array given as the (B*T) x d matrix of its B matrices one under another.
struct ReferencedStack {
    MatrixF rows;
    Eigen::Index sequences = 0; // B for a 3-D array, 0 for a 2-D one
};
Result<ReferencedStack> readReferencedStack(const std::string &field, const std::string &relativePath,
                                            const std::string &folder, bool allow3d);

struct NpyReference;

// What a save did with a reference instead of keeping it as it was; the app tells the user.
struct ReferenceNote {
    enum class Kind {
        Unreadable, // the file is gone or no longer reads as it did: the matrix was written inline
        Changed,    // the file holds other values than when it was read: the matrix was written inline
        Copied,     // the path would have led out of the folder saved to: the file was copied there
        NotCopied,  // ... and the copy failed: the matrix was written inline
    };
    Kind kind = Kind::Unreadable;
    std::string field;  // "weights.q"
    std::string path;   // the reference as the project had it
    std::string detail; // Unreadable, NotCopied: the error; Copied: the copy's name in the folder saved to
};

// The choice serializeProject() asks for at each reference whose matrix the document still
// holds unchanged (a ReferenceWriter), for one save of a project read from fromFolder into
// saveFolder, the folder of the file being written:
// - The file is read again. When it is gone, unreadable, or holds other values than when it
//   was read (rewritten by the script that made it), the reference is dropped and the matrix
//   is written inline: the saved project reproduces what the user saw, not what the file now
//   holds.
// - Otherwise the path is rewritten relative to saveFolder. When that path would leave
//   saveFolder (a Save As into another folder), the file is copied into saveFolder under its
//   own name, or NAME-1.npy, NAME-2.npy... when a different file has that name (an identical
//   one is used as it is; an existing file is never changed), and the reference names the copy:
//   a project only reads references inside its folder.
// Each file is read once per save, however many fields name it.
class SavedReferences
{
public:
    SavedReferences(std::string fromFolder, std::string saveFolder);

    std::optional<std::string> operator()(const std::string &field, const NpyReference &reference);

    // What was not kept as it was, in the order met.
    const std::vector<ReferenceNote> &notes() const { return m_notes; }
    // Removes the copies this save made, when writing the project failed after all.
    void discardCopies();

private:
    std::optional<std::string> decide(const std::string &field, const NpyReference &reference);
    std::optional<std::string> copyIntoSaveFolder(const std::string &bytes, const std::string &path, bool &created,
                                                  std::string &error);

    std::string m_from, m_to;
    struct Decision {
        std::optional<std::string> path;
        std::optional<ReferenceNote> note; // repeated for each field naming the file
    };
    std::map<std::string, Decision> m_decided; // by path and fingerprint
    std::vector<ReferenceNote> m_notes;
    std::vector<std::string> m_copies; // absolute paths of the files this save created
};

// A reference path written for a project saved into toFolder, when it was read relative to
// fromFolder: the same file, relative to the new place (unchanged when a folder is empty).
std::string rebasedReferencePath(const std::string &path, const std::string &fromFolder, const std::string &toFolder);

} // namespace attnscope
