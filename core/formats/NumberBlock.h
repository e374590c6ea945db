#pragma once

#include "core/Result.h"

#include <string_view>
#include <vector>

namespace attnscope {

// A block of numbers pasted as text: rows of a spreadsheet (tab-separated), NumPy's print
// ("[[1. 0. 1.]\n [0. 2. 0.]]"), a Python or JSON list ("[[1, 0, 1], [0, 2, 0]]", one line or
// several), NumPy's and PyTorch's repr ("array([[...]], dtype=float32)", "tensor([[...]])"), or
// plain lines of numbers separated by spaces, commas or semicolons. Rows are lines, or the inner
// lists of a nested list.
struct NumberBlock {
    std::vector<double> values; // row-major
    int rows = 0, cols = 0;
    double at(int r, int c) const { return values[std::size_t(r) * std::size_t(cols) + std::size_t(c)]; }
};

// At most this many numbers: more is no paste into an editor's table.
inline constexpr std::size_t kMaxPastedNumbers = std::size_t(1) << 22;

// The block, or one line naming what is wrong, lines (rows) and numbers counted from 1 as a text
// editor counts them: "line 2, number 3: \"abc\" is not a number", "line 2 has 3 numbers, line 1
// has 4", "no numbers", "line 1, number 1: 1e39 is beyond float32 (±3.4e38)", too many numbers.
Result<NumberBlock> parseNumberBlock(std::string_view text);

} // namespace attnscope
