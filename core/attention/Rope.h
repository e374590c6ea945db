#pragma once

#include "core/attention/AttentionProblem.h"

#include <cstdint>
#include <vector>

namespace attnscope {

// Rotary position embeddings as design.md defines them ("Modern attention"): within each head
// of width dK, dimension i < dK/2 pairs with i + dK/2 (Hugging Face's rotate_half layout) and the
// pair is rotated by the angle p*theta_i, theta_i = base^(-2i/dK), p being the row's position.

// theta_i for i in [0, dK/2), in double: the spec's own frequencies where it gives them.
std::vector<double> ropeFrequencies(const RopeSpec &rope, int headDimQK);

// The cos and sin of every (row, pair): rows x dK/2 each, the angles formed in double and
// rounded once (after the spec's scaling), so engines that rotate in float agree with the double
// reference.
struct RopeTable {
    MatrixF cos;
    MatrixF sin;
};
RopeTable ropeTable(const std::vector<std::int64_t> &positions, const RopeSpec &rope, int headDimQK);

// Rotates every head of x (rows x heads*dK) in place, row r by table row r.
void applyRope(MatrixF &x, const RopeTable &table, int heads, int headDimQK);

// Normalises every head of x (rows x heads*dK) in place by RMS over its dK values, then
// multiplies by `weight` (dK): what AttentionWeights::qNorm and kNorm do.
void applyHeadNorm(MatrixF &x, const VectorF &weight, int heads, int headDimQK, double eps);

} // namespace attnscope
