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

    std::vector<Matrix> q;           // [H] Tq by dK (bias included)
    std::vector<Matrix> k;           // [H] Tk by dK
    std::vector<Matrix> v;           // [H] Tk by dV
    std::vector<Matrix> scores;      // [H] Tq by Tk, scaled, before the mask
    MaskMatrix allowed;              // Tq by Tk effective mask, 1 = allowed
    std::vector<Matrix> weights;     // [H] Tq by Tk, softmax of the masked scores
    std::vector<Matrix> headOutputs; // [H] Tq by dV, weights_h·V_h
    Matrix context;                  // Tq by H*dV, the concatenation of headOutputs
    Matrix output;                   // Tq by d_out (= context when there is no Wo)
    std::vector<bool> emptyRows;     // [Tq] true where a query row has no allowed key

    // The heads whose weights the trace holds (a set's layer exported as data has weights alone).
    int heads() const { return int(weights.size()); }
};

using AttentionTrace = BasicTrace<float>;
using ReferenceTrace = BasicTrace<double>;

} // namespace attnscope
