#pragma once

#include "core/Tensor.h"

#include <vector>

namespace attnscope {

// Every intermediate tensor of one attention computation, in the order the tutorials
// print them. Per-head tensors are indexed [head]. The CPU and GPU backends fill a
// float trace; the reference fills a double one.
template <typename Scalar>
struct BasicTrace {
    using Matrix = MatrixT<Scalar>;

    std::vector<Matrix> q;           // [H] Tq by dK (bias included; rotated under RoPE)
    std::vector<Matrix> k;           // [G] Tk by dK, one per key/value head (HeadLayout::kvHeadOf)
    std::vector<Matrix> v;           // [G] Tk by dV
    std::vector<Matrix> scores;      // [H] Tq by Tk, scaled (and soft-capped), before the mask
    MaskMatrix allowed;              // Tq by Tk effective mask, 1 = allowed
    std::vector<Matrix> weights;     // [H] Tq by Tk, softmax of the masked scores
    std::vector<Matrix> headOutputs; // [H] Tq by dV, weights_h·V_h
    Matrix context;                  // Tq by H*dV, the concatenation of headOutputs
    Matrix output;                   // Tq by d_out (= context when there is no Wo)
    std::vector<bool> emptyRows;     // [Tq] true where a query row has no allowed key
    // Under RoPE only: q [H] and k [G] before the rotation, for the views that teach it.
    std::vector<Matrix> qBeforeRope;
    std::vector<Matrix> kBeforeRope;

    // The heads whose weights the trace holds (a set's layer exported as data has weights alone).
    int heads() const { return int(weights.size()); }
};

using AttentionTrace = BasicTrace<float>;
using ReferenceTrace = BasicTrace<double>;

} // namespace attnscope
