#pragma once

#include "core/Result.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope {

// NumPy .npy version 1.0, C order. We write little-endian float32 ('<f4'); we read '<f4'
// and '<f8' (fixtures written by NumPy are float64) into doubles.
struct NpyArray {
    std::vector<std::int64_t> shape;
    std::vector<double> data; // row-major, product(shape) values

    std::int64_t size() const;
};

// The bytes before the data of a '<f4' array of that shape (magic, version, padded header),
// so a writer can stream the values after it without building the file in memory.
std::string npyHeader(const std::vector<std::int64_t> &shape);
std::string npyBytes(const std::vector<std::int64_t> &shape, const float *data);

// The header of a .npy file: its dtype as written ("<f2", "<f4", "|u1", ...), its shape
// (checked to be whole numbers) and where the data starts. Only C order is accepted. The
// data is not looked at; callers check its size against the shape and the dtype.
struct NpyHeader {
    std::string descr;
    std::vector<std::int64_t> shape;
    std::size_t dataOffset = 0;
};
Result<NpyHeader> parseNpyHeader(std::string_view bytes);

// An array read straight into float32 (no double copy): '<f2' (float16), '<f4' and '<f8'
// ('<f8' rounds to float32; a value past float32's range becomes an error, not Inf). Used for
// the `{"npy": ...}` references of project files. Any bytes are safe to pass; the data size is
// checked against the shape without overflow before anything is allocated.
struct NpyFloatArray {
    std::vector<std::int64_t> shape;
    std::vector<float> data; // row-major

    std::int64_t size() const;
};
Result<NpyFloatArray> parseNpyFloat(std::string_view bytes);

// IEEE 754 binary16 to float32, exactly (subnormals, Inf and NaN included).
float halfToFloat(std::uint16_t bits);

// Any bytes are safe to pass: every failure is a one-line Error (bad magic, version, dtype,
// layout, a shape that is not a tuple of whole numbers, a shape whose product does not match
// the data, checked without overflow before anything is allocated).
Result<NpyArray> parseNpy(const std::string &bytes);
// Reads at most a quarter of memoryBudget() (core/io/MemoryLimits.h); errors start with the path.
Result<NpyArray> readNpyFile(const std::string &path);

} // namespace attnscope
