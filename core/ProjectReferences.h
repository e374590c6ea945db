#pragma once

#include "core/Result.h"
#include "core/Tensor.h"

#include <string>

namespace attnscope {

// The `{"npy": "relative/path.npy"}` matrices of project files (design.md, format 1),
// kept apart from core/ProjectFile.cpp's JSON readers.

// Reads the matrix `field` refers to. relativePath must be relative (it may lead out of the
// folder) and name an existing regular file (a device such as /dev/zero or a FIFO is refused
// before it is opened) of at most a quarter of the memory budget, holding a 2-D C-order
// float16, float32 or float64 array of finite values. Errors name the field and the path as
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

// A reference path written for a project saved into toFolder, when it was read relative to
// fromFolder: the same file, relative to the new place (unchanged when a folder is empty).
std::string rebasedReferencePath(const std::string &path, const std::string &fromFolder, const std::string &toFolder);

} // namespace attnscope
