#pragma once

#include "core/attention/RandomProblem.h"
#include "core/formats/ProjectFile.h"

#include <QString>

#include <cstdint>
#include <vector>

namespace attnscope {

// Every editable matrix of a project. Biases are shown and edited as 1 by n matrices.
// Xv: a cross-attention problem's separate value input (tutorial 5's three inputs), Tk rows.
// Sinks: one sink logit per query head (design.md, "Modern attention"), shown as a 1 by H matrix.
// New ids go last, so that the fill seeds derived from the others stay as they were.
enum class MatrixId { Xq, Xkv, Wq, Wk, Wv, Wo, BiasQ, BiasK, BiasV, BiasO, Xv, Sinks };
inline constexpr MatrixId kAllMatrices[] = {MatrixId::Xq,    MatrixId::Xkv,   MatrixId::Xv,    MatrixId::Wq,
                                            MatrixId::Wk,    MatrixId::Wv,    MatrixId::Wo,    MatrixId::BiasQ,
                                            MatrixId::BiasK, MatrixId::BiasV, MatrixId::BiasO, MatrixId::Sinks};

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

// Query heads H. Key/value heads follow: as many as the heads where they were (kvHeads 0), else
// gcd(H, G) so that they still divide H (1, multi-query, stays 1); sinks follow the heads (0 for
// a new head).
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
// None clears every part (the window too); Causal adds the causal part; SlidingWindow sets
// mask.window = `window` and causal, as Mistral has it (keys i - W < j <= i).
Project applyMaskPreset(Project p, MaskPreset preset, int window);

// Modern attention (design.md), in ProjectEditModern.cpp.
// Key/value heads G, which must divide the heads: W_K, W_V, b_K and b_V regrouped from the old
// G blocks to `kvHeads` blocks (regroupKeyValues). G = H is stored as 0, as the file reader does.
Project setKeyValueHeads(Project p, int kvHeads, const InitOptions &init);
// W_K, W_V, b_K and b_V from the spec's G blocks of dK (dV) columns to kvHeads blocks of
// headDimQK (headDimV), kept where both exist; each new block from its own stream (regrouped()),
// new bias blocks 0. The spec itself is left to the caller.
void regroupKeyValues(AttentionProblem &p, int kvHeads, int headDimQK, int headDimV, const InitOptions &init);
// RoPE on (with these settings) or off.
Project setRope(Project p, std::optional<RopeSpec> rope);
// Given RoPE positions follow a row inserted at (removed from) `row` of the query rows and/or
// the key rows: a new row's position is one past the row before it (0 at the top).
void insertPosition(AttentionProblem &p, bool queryRows, bool keyRows, int row);
void removePosition(AttentionProblem &p, bool queryRows, bool keyRows, int row);
// Whole numbers of 0 or more separated by spaces or commas; anything else is refused naming
// `field` and the entry ("rope.queryPositions[1]: expected a whole number of 0 or more, found -1").
Result<std::vector<std::int64_t>> parsePositions(const QString &text, const std::string &field);
QString positionsText(const std::vector<std::int64_t> &positions); // "0, 1, 5"

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
