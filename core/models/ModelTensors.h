#pragma once

#include "core/Result.h"
#include "core/Tensor.h"
#include "core/formats/Safetensors.h"

#include <string>
#include <vector>

namespace attnscope {

// Reads the tensors of a model's safetensors file by their transformers names, converting
// F32, F16, BF16 (and F64) to float32. A name is found as written or with the model's prefix
// ("transformer.", "bert."); errors are one line naming the file and the tensor as the file
// spells it: "m/model.safetensors: h.3.attn.c_attn.weight: expected 64 x 192, found 64 x 190".
class ModelTensors
{
public:
    ModelTensors(const SafetensorsFile &file, std::string prefix, std::string shownFile);

    // The first of `names` present (with or without the prefix); an error naming the first
    // name when none is.
    Result<const SafetensorsTensor *> find(const std::vector<std::string> &names) const;

    // A 2-D tensor stored rows by cols; transposed (cols by rows) when `transpose` (Linear).
    Result<MatrixF> matrix(const std::vector<std::string> &names, std::int64_t rows, std::int64_t cols,
                           bool transpose = false) const;
    Result<VectorF> vector(const std::vector<std::string> &names, std::int64_t size) const;

private:
    Result<std::vector<float>> values(const SafetensorsTensor &t, const std::vector<std::int64_t> &shape,
                                      const std::string &expected) const;

    const SafetensorsFile &m_file;
    std::string m_prefix, m_shown;
};

} // namespace attnscope
