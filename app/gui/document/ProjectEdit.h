#pragma once

#include "core/attention/RandomProblem.h"
#include "core/formats/ProjectFile.h"

#include <QString>

#include <cstdint>
#include <vector>

namespace attnscope {

// Every editable matrix of a project. Biases are shown and edited as 1 by n matrices.
// Xv: a cross-attention problem's separate value input (tutorial 5's three inputs), Tk rows; last,
// so that the fill seeds derived from the others stay as they were.
enum class MatrixId { Xq, Xkv, Wq, Wk, Wv, Wo, BiasQ, BiasK, BiasV, BiasO, Xv };
inline constexpr MatrixId kAllMatrices[] = {MatrixId::Xq,    MatrixId::Xkv,   MatrixId::Xv,   MatrixId::Wq,
                                            MatrixId::Wk,    MatrixId::Wv,    MatrixId::Wo,   MatrixId::BiasQ,
                                            MatrixId::BiasK, MatrixId::BiasV, MatrixId::BiasO};

// Which token list: the queries (rows of Xq) or the keys/values (rows of Xkv and Xv, cross mode).
enum class TokenSide { Query, Key };

// How the values filled into a grown or re-initialised matrix are drawn.
struct InitOptions {
    InitKind kind = InitKind::Xavier;
    std::uint64_t seed = 1;
    double stddev = 1.0; // Gaussian only
};

// Mask presets of the mask editor.
enum class MaskPreset { None, Causal, PaddingFromTokens, SlidingWindow };

QString matrixName(MatrixId id); // "W_Q", "X (query)", "b_K", ...
bool matrixExists(const Project &project, MatrixId id);
Eigen::Index matrixRows(const Project &project, MatrixId id);
Eigen::Index matrixCols(const Project &project, MatrixId id);
float matrixValue(const Project &project, MatrixId id, Eigen::Index row, Eigen::Index col);
void setMatrixValue(Project &project, MatrixId id, Eigen::Index row, Eigen::Index col, float value);

// Pure edits: each returns the edited copy and keeps the problem valid (validateProblem passes
// when it passed before). Kept values stay where they were; new ones come from `init`.
namespace edit {

Project setHeads(Project p, int heads, const InitOptions &init);
Project setHeadDimQK(Project p, int headDimQK, const InitOptions &init);
Project setHeadDimV(Project p, int headDimV, const InitOptions &init);
// Columns of the query input (d_q) or of the key/value input (d_kv, cross only; in self mode
// d_kv is d_q). The weight rows that multiply them follow.
Project setInputDim(Project p, TokenSide side, int dims, const InitOptions &init);
Project setOutputDim(Project p, int dOut, const InitOptions &init); // needs W_O
Project insertToken(Project p, TokenSide side, int row, const QString &label, const InitOptions &init);
Project removeToken(Project p, TokenSide side, int row);
Project setMode(Project p, AttentionMode mode, const InitOptions &init);
Project reinitialise(Project p, MatrixId id, const InitOptions &init);
// Adds (zeros for biases, `init` for W_O) or removes an optional matrix.
Project setMatrixPresent(Project p, MatrixId id, bool present, const InitOptions &init);
Project setMaskCells(Project p, const std::vector<std::pair<int, int>> &cells, bool allowed);
Project applyMaskPreset(Project p, MaskPreset preset, int window);

// New values never repeat across matrices or regions: every fill draws from a stream seeded
// by (init.seed, the matrix, the region), so W_Q and W_K of a new head differ, two new heads
// differ and two inserted tokens differ, while the same edit with the same seed gives the
// same numbers. `region` and `extent` name the part filled (a head, a row, the whole).
enum class FillRegion : int { Whole = 1, Resize, Head, Row };
std::uint64_t fillSeed(std::uint64_t seed, MatrixId id, FillRegion region, std::int64_t index, std::int64_t extent);

// rows x cols of values drawn from `seed`, scaled for a matrix of fanRows x fanCols (Xavier
// and Kaiming follow the whole matrix's fan, not the block's).
MatrixF fillBlock(Eigen::Index rows, Eigen::Index cols, Eigen::Index fanRows, Eigen::Index fanCols,
                  const InitOptions &init, std::uint64_t seed);

// Resizes matrix `id` to rows x cols: the overlap is kept, the rest is a fresh fill of the
// new shape (so the fan-in of Xavier/Kaiming is the new matrix's).
MatrixF resized(const MatrixF &m, MatrixId id, Eigen::Index rows, Eigen::Index cols, const InitOptions &init);

// Regroups the head blocks of a matrix's columns (or rows, `alongRows`): block h of width
// oldWidth becomes block h of width newWidth for h < newHeads, kept where both exist; each
// head's new values come from its own stream.
MatrixF regrouped(const MatrixF &m, MatrixId id, int oldHeads, int oldWidth, int newHeads, int newWidth, bool alongRows,
                  const InitOptions &init);

bool isPaddingToken(const std::string &label);

// Project::extra keeps the whole file as read, matrices included; every copy of the project
// (undo snapshots, compute requests) would copy that JSON tree. The matrices in it are
// rewritten from the problem on save anyway, so they are replaced by null here; the keys stay,
// which keeps the file's field order.
void compactExtra(Project &p);

} // namespace edit
} // namespace attnscope
