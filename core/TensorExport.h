#pragma once

#include "core/AttentionTrace.h"
#include "core/Result.h"

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

// A 2-D slice of a tensor as CSV: for 3-D tensors, head `head`. Row and column labels (token
// names) are written as the first column / header row when given; fields are quoted as RFC 4180
// requires. Numbers use the shortest text that reads back as the same float.
Result<std::string> tensorCsv(const NamedTensor &tensor, int head, const std::vector<std::string> &rowLabels,
                              const std::vector<std::string> &colLabels);

} // namespace attnscope
