#include "core/models/WeightMatrix.h"

#include "core/Gemm.h"
#include "core/formats/Npy.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <omp.h>
#include <sys/mman.h>
#include <unistd.h>

namespace attnscope {

WeightMatrix WeightMatrix::mapped(const unsigned char *data, const std::string &dtype, Eigen::Index storedRows,
                                  Eigen::Index storedCols, bool transposed, std::shared_ptr<const void> keepAlive)
{
    WeightMatrix w;
    w.m_mapped = true;
    w.m_transposed = transposed;
    w.m_data = data;
    w.m_elementSize = dtype == "F32" ? 4 : 2;
    w.m_brain = dtype == "BF16";
    w.m_storedRows = storedRows;
    w.m_storedCols = storedCols;
    w.m_keepAlive = std::move(keepAlive);
    return w;
}

Eigen::Index WeightMatrix::blockRows() const
{
    const Eigen::Index bytesPerRow = std::max<Eigen::Index>(1, m_storedCols) * 4;
    return std::max<Eigen::Index>(1, Eigen::Index(m_blockBytes / bytesPerRow));
}

MatrixF WeightMatrix::storedBlock(Eigen::Index first, Eigen::Index count) const
{
    MatrixF out(count, m_storedCols);
    const std::int64_t n = std::int64_t(count) * m_storedCols;
    const unsigned char *p = m_data + std::int64_t(first) * m_storedCols * m_elementSize;
    float *o = out.data();
    if (m_elementSize == 4) {
        std::memcpy(o, p, std::size_t(n) * 4);
        return out;
    }
#pragma omp parallel for schedule(static) if (n > (1 << 20))
    for (std::int64_t i = 0; i < n; ++i) {
        const std::uint16_t bits = std::uint16_t(p[2 * i] | (p[2 * i + 1] << 8));
        if (m_brain) {
            const std::uint32_t wide = std::uint32_t(bits) << 16;
            std::memcpy(&o[i], &wide, 4);
        } else {
            o[i] = halfToFloat(bits);
        }
    }
    return out;
}

void WeightMatrix::release(Eigen::Index first, Eigen::Index count) const
{
    // Only whole pages inside the block: a page shared with a neighbour stays.
    static const std::uintptr_t page = std::uintptr_t(sysconf(_SC_PAGESIZE));
    const std::uintptr_t begin = std::uintptr_t(m_data + std::int64_t(first) * m_storedCols * m_elementSize);
    const std::uintptr_t end = begin + std::uintptr_t(std::int64_t(count) * m_storedCols * m_elementSize);
    const std::uintptr_t from = (begin + page - 1) / page * page, to = end / page * page;
    if (to > from)
        madvise(reinterpret_cast<void *>(from), to - from, MADV_DONTNEED);
}

// The products run on core's GEMM (OpenBLAS where it loads) over the caller's OpenMP threads.
MatrixF WeightMatrix::product(const MatrixF &x) const
{
    const int threads = omp_get_max_threads();
    if (!m_mapped) {
        MatrixF y(x.rows(), m_resident.cols());
        parallelGemm(x, m_resident, y, threads);
        return y;
    }
    MatrixF y = MatrixF::Zero(x.rows(), cols());
    const Eigen::Index block = blockRows();
    for (Eigen::Index first = 0; first < m_storedRows; first += block) {
        const Eigen::Index count = std::min(block, m_storedRows - first);
        const MatrixF s = storedBlock(first, count);
        if (m_transposed) // stored rows are M's columns
            parallelGemm(x, s, GemmOp::Transpose, y.middleCols(first, count), threads);
        else // stored rows are M's rows
            parallelGemm(x.middleCols(first, count), s, y, threads, 1.0f, 1.0f);
        release(first, count);
    }
    return y;
}

MatrixF WeightMatrix::productTransposed(const MatrixF &x) const
{
    const int threads = omp_get_max_threads();
    if (!m_mapped) {
        MatrixF y(x.rows(), m_resident.rows());
        parallelGemm(x, m_resident, GemmOp::Transpose, y, threads);
        return y;
    }
    MatrixF y = MatrixF::Zero(x.rows(), rows());
    const Eigen::Index block = blockRows();
    for (Eigen::Index first = 0; first < m_storedRows; first += block) {
        const Eigen::Index count = std::min(block, m_storedRows - first);
        const MatrixF s = storedBlock(first, count);
        if (m_transposed) // Mᵀ's rows are stored: x·Mᵀ's rows of the block's inputs
            parallelGemm(x.middleCols(first, count), s, y, threads, 1.0f, 1.0f);
        else // M's rows are stored: they give x·Mᵀ's columns
            parallelGemm(x, s, GemmOp::Transpose, y.middleCols(first, count), threads);
        release(first, count);
    }
    return y;
}

VectorF WeightMatrix::row(Eigen::Index r) const
{
    if (!m_mapped)
        return m_resident.row(r);
    if (!m_transposed)
        return storedBlock(r, 1).row(0);
    return toFloat().row(r); // a column of the stored matrix: not a case the forward uses
}

MatrixF WeightMatrix::toFloat() const
{
    if (!m_mapped)
        return m_resident;
    const MatrixF s = storedBlock(0, m_storedRows);
    return m_transposed ? MatrixF(s.transpose()) : s;
}

Status WeightMatrix::checkFinite() const
{
    const Eigen::Index block = m_mapped ? blockRows() : m_resident.rows();
    const Eigen::Index stored = m_mapped ? m_storedRows : m_resident.rows();
    for (Eigen::Index first = 0; first < stored; first += std::max<Eigen::Index>(block, 1)) {
        const Eigen::Index count = std::min(block, stored - first);
        const MatrixF s = m_mapped ? storedBlock(first, count) : MatrixF(m_resident.middleRows(first, count));
        if (!s.allFinite()) {
            const float *v = s.data();
            for (Eigen::Index i = 0; i < s.size(); ++i)
                if (!std::isfinite(v[i]))
                    return Error{"value " + std::to_string(std::int64_t(first) * s.cols() + i) +
                                 " is not a finite float32 (" + std::to_string(v[i]) + ")"};
        }
        if (m_mapped)
            release(first, count);
    }
    return Ok{};
}

} // namespace attnscope
