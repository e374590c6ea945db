#pragma once

#include "core/attention/AttentionProblem.h"

#include <vector>

namespace attnscope {

// The effective Tq by Tk "allowed" matrix: the AND of the causal, key-padding and custom
// parts of problem.mask (1 = query i may attend to key j). Assumes a validated problem.
MaskMatrix effectiveMask(const AttentionProblem &problem);

// true for each query row that has no allowed key.
std::vector<bool> emptyMaskRows(const MaskMatrix &allowed);

} // namespace attnscope
