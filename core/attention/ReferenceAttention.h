#pragma once

#include "core/Result.h"
#include "core/attention/AttentionProblem.h"
#include "core/attention/AttentionTrace.h"

namespace attnscope {

// The plain double-precision implementation of design.md's semantics that every fast
// path is tested against. It is written for obviousness, not speed: loops over heads and
// rows, one formula per step.
Result<ReferenceTrace> referenceAttention(const AttentionProblem &problem);

// Softmax of one row of scaled scores under a mask, as design.md defines it: -inf fill
// gives exact zeros for masked entries and an all-zero row when nothing is allowed;
// -1e9 fill replaces masked logits by -1e9 and runs an ordinary softmax. A sink (may be null)
// joins the softmax as one more logit, never masked, and its share is dropped from `out`.
void referenceMaskedSoftmax(const double *scores, const std::uint8_t *allowed, Eigen::Index n, MaskFill fill,
                            double *out, const double *sink = nullptr);

} // namespace attnscope
