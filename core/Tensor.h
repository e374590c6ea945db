#pragma once

#include <Eigen/Core>

#include <cstdint>
#include <string>

namespace attnscope {

// Row-major storage: rows are tokens, which is how the project file, the NPY export
// and the GPU buffers lay matrices out, so no transposition happens at any boundary.
template <typename Scalar>
using MatrixT = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename Scalar>
using VectorT = Eigen::Matrix<Scalar, 1, Eigen::Dynamic, Eigen::RowMajor>;

using MatrixF = MatrixT<float>;
using MatrixD = MatrixT<double>;
using VectorF = VectorT<float>;
using VectorD = VectorT<double>;

// 1 = allowed (query i may attend to key j), 0 = masked.
using MaskMatrix = MatrixT<std::uint8_t>;

inline std::string shapeString(Eigen::Index rows, Eigen::Index cols)
{
    return std::to_string(rows) + " x " + std::to_string(cols);
}

template <typename Derived>
std::string shapeOf(const Eigen::EigenBase<Derived> &m)
{
    return shapeString(m.rows(), m.cols());
}

} // namespace attnscope
