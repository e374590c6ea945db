#pragma once

#include "core/Result.h"
#include "core/analysis/AttentionSet.h"

#include <cstdint>
#include <string>

namespace attnscope {

// Whether a set's maps hold attention weights: every row of a softmax sums to 1. Two kinds of row
// are attention too: a row of zeros (a query masked out entirely) and a row below 1 (a sink or an
// off-by-one softmax kept part of the weight out of the map). What is not attention: a negative
// value, or a row summing above 1 by more than the stored precision allows. Those are scores
// (q·k before softmax, or after a scale), and entropy, confidence and rollout mean nothing on them.
struct RowSumCheck {
    std::int64_t rows = 0;         // rows read (samples x layers x heads x Tq)
    std::int64_t ones = 0;         // summing to 1 within the tolerance
    std::int64_t zeros = 0;        // all zero: masked queries
    std::int64_t below = 0;        // in (0, 1 - tolerance): sink rows
    std::int64_t above = 0;        // above 1 + tolerance
    std::int64_t negative = 0;     // rows with a value below 0
    double minSum = 0, maxSum = 0; // over every row
    double minValue = 0, maxValue = 0;
    double tolerance = 0;

    // No row above 1 and no negative value.
    bool isAttention() const { return above == 0 && negative == 0; }
    // Every row sums to 1.
    bool isExact() const { return ones == rows; }
    // "row sums 0.31 to 41.2: 1020 of 1536 rows above 1, 77 with negative values": what was found,
    // in English for the command line (the window says it in its own words).
    std::string summary() const;
};

// How far from 1 a row stored in `dtype` ("float16", "bfloat16", "float32", "float64") of `keys`
// values may sum and still be a softmax's: every value rounded once to the stored precision, and
// float16's subnormals (below 6.1e-5) rounded to an absolute 2^-25 each.
double rowSumTolerance(const std::string &dtype, std::int64_t keys);

// Reads every row of the set (a mapped file stays mapped), summing in double.
RowSumCheck checkRowSums(const AttentionSet &set, double tolerance);

// The set with softmax applied to every row, as float32 values it owns (labels and word
// boundaries kept): what a file of scores means as attention. Refused when the copy does not fit
// in memory, with the bytes it would need.
Result<AttentionSet> softmaxRows(const AttentionSet &set);

} // namespace attnscope
