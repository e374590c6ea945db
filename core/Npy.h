#pragma once

#include "core/Result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attnscope {

// NumPy .npy version 1.0, C order. We write little-endian float32 ('<f4'); we read '<f4'
// and '<f8' (fixtures written by NumPy are float64) into doubles.
struct NpyArray {
    std::vector<std::int64_t> shape;
    std::vector<double> data; // row-major, product(shape) values

    std::int64_t size() const;
};

std::string npyBytes(const std::vector<std::int64_t> &shape, const float *data);
Result<NpyArray> parseNpy(const std::string &bytes);
Result<NpyArray> readNpyFile(const std::string &path);

} // namespace attnscope
