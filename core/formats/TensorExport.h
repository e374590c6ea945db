#pragma once

#include "core/Result.h"
#include "core/attention/AttentionTrace.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attnscope {

struct Project;

// One tensor of a trace, laid out as `attnscope-cli compute` writes it (row-major).
struct NamedTensor {
    std::string name; // "q", "k", "v", "scores", "weights", "headOutputs", "context", "output", "mask"
    std::vector<std::int64_t> shape;
    std::vector<float> data;
};

// Every tensor of a trace: q [H,Tq,dK], k [H,Tk,dK], v [H,Tk,dV], scores [H,Tq,Tk] (scaled,
// before the mask), weights [H,Tq,Tk], headOutputs [H,Tq,dV], context [Tq,H*dV],
// output [Tq,d_out], mask [Tq,Tk] (1 = allowed).
std::vector<NamedTensor> traceTensors(const AttentionTrace &trace);

// The tensor of that name, or an Error listing the valid names.
Result<NamedTensor> traceTensor(const AttentionTrace &trace, const std::string &name);

// A text cell of a CSV file (a token label, a name; never a number): quoted as RFC 4180
// requires, and a text that a spreadsheet would take for a formula (it starts with = + - @,
// a tab or a carriage return) gets a ' first, so it stays text: "=HYPERLINK(...)" is
// written as "'=HYPERLINK(...)". Every CSV writer writes its text cells with this.
std::string csvTextField(const std::string &text);

// A 2-D slice of a tensor as CSV: for 3-D tensors, head `head`. Row and column labels (token
// names) are written as the first column / header row when given, as csvTextField() writes
// them. Numbers use the shortest text that reads back as the same float (a negative one
// stays a number).
Result<std::string> tensorCsv(const NamedTensor &tensor, int head, const std::vector<std::string> &rowLabels,
                              const std::vector<std::string> &colLabels);

} // namespace attnscope
