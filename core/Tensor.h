#pragma once

#include <Eigen/Core>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

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

// An allocator whose resize() leaves new elements default-initialised (for floats: unwritten),
// for large buffers that are written in full right after they are sized: zero-filling gigabytes
// first would touch every page twice.
template <typename T>
struct DefaultInitAllocator {
    using value_type = T;
    DefaultInitAllocator() = default;
    template <typename U>
    DefaultInitAllocator(const DefaultInitAllocator<U> &) noexcept // NOLINT: rebinding converts
    {
    }
    T *allocate(std::size_t n) { return std::allocator<T>().allocate(n); }
    void deallocate(T *p, std::size_t n) noexcept { std::allocator<T>().deallocate(p, n); }
    template <typename U>
    void construct(U *p) noexcept
    {
        ::new (static_cast<void *>(p)) U;
    }
    template <typename U, typename... Args>
    void construct(U *p, Args &&...args)
    {
        ::new (static_cast<void *>(p)) U(std::forward<Args>(args)...);
    }
    template <typename U>
    bool operator==(const DefaultInitAllocator<U> &) const noexcept
    {
        return true;
    }
};

// A float buffer written in full after it is sized (a model run's attentions).
using FloatBuffer = std::vector<float, DefaultInitAllocator<float>>;

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
