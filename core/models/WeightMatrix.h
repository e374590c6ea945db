#pragma once

#include "core/Result.h"
#include "core/Tensor.h"

#include <cstdint>
#include <memory>
#include <string>

namespace attnscope {

// A model's weight matrix M (rows by cols, as the forward uses it): float32 in memory, or a 2-D
// tensor of a memory-mapped checkpoint kept in its stored dtype (F32, F16, BF16) and converted a
// block of stored rows at a time while a product needs it, the block's mapped pages released
// after (design.md: a 1–3B model must fit a desktop's memory). A mapped nn.Linear weight is
// stored [out, in], that is Mᵀ, and is used transposed without a copy. A product of at most
// kFewRows rows of x (a generation step's one token) converts one stored row at a time into a
// buffer the size of a row and takes its dot products there: no float32 block, no GEMM packing,
// threads only for a large weight, and pages released only for a weight above the block size.
class WeightMatrix
{
public:
    WeightMatrix() = default;
    WeightMatrix(MatrixF resident) : m_resident(std::move(resident)) {} // NOLINT: a matrix is a weight

    // The most rows of x that a mapped weight's product takes one stored row at a time.
    static constexpr Eigen::Index kFewRows = 8;

    // Stored rows x cols of `dtype` at `data` (kept valid by keepAlive); `transposed`: the
    // stored matrix is Mᵀ.
    static WeightMatrix mapped(const unsigned char *data, const std::string &dtype, Eigen::Index storedRows,
                               Eigen::Index storedCols, bool transposed, std::shared_ptr<const void> keepAlive);

    Eigen::Index rows() const { return m_mapped ? (m_transposed ? m_storedCols : m_storedRows) : m_resident.rows(); }
    Eigen::Index cols() const { return m_mapped ? (m_transposed ? m_storedRows : m_storedCols) : m_resident.cols(); }
    bool isMapped() const { return m_mapped; }

    // A mapped weight's bytes as the checkpoint stores them: rows x cols values of elementSize
    // bytes (F32, or F16 / BF16 where brain), Mᵀ where transposed; data is null for a resident
    // weight. A device engine keeps them as they are (gpu/VulkanForward.cpp).
    struct Stored {
        const unsigned char *data = nullptr;
        int elementSize = 4;
        bool brain = false;
        Eigen::Index rows = 0, cols = 0;
        bool transposed = false;
    };
    Stored stored() const { return {m_data, m_elementSize, m_brain, m_storedRows, m_storedCols, m_transposed}; }

    // x·M (x.cols() == rows()) and x·Mᵀ (x.cols() == cols()).
    MatrixF product(const MatrixF &x) const;
    MatrixF productTransposed(const MatrixF &x) const;
    // Row r of M in float32 (an embedding's row).
    VectorF row(Eigen::Index r) const;
    // All of M in float32 (tests, small models).
    MatrixF toFloat() const;

    // Blocks of about `bytes` of float32 (default 8 MiB); small blocks exercise the seams.
    WeightMatrix &setBlockBytes(std::int64_t bytes)
    {
        m_blockBytes = bytes;
        return *this;
    }

    // Ok when every stored value is finite; otherwise "value N is not a finite float32 (inf)"
    // (N counted in stored order). Reads the mapped pages once and releases them.
    Status checkFinite() const;

private:
    // Stored rows [first, first + count) in float32, as stored (count by storedCols).
    MatrixF storedBlock(Eigen::Index first, Eigen::Index count) const;
    // The same rows converted into `out` (count·storedCols floats), on the caller's OpenMP
    // threads when `parallel`.
    void convertRows(Eigen::Index first, Eigen::Index count, float *out, bool parallel) const;
    // x·Sᵀ and x·S for the stored matrix S.
    MatrixF storedRowsAsColumns(const MatrixF &x) const;
    MatrixF storedRowsAsInputs(const MatrixF &x) const;
    // The same for x.rows() <= kFewRows, a stored row at a time (sums in another order).
    MatrixF fewRowsAsColumns(const MatrixF &x) const;
    MatrixF fewRowsAsInputs(const MatrixF &x) const;
    // Stored values in float32: n values from `in`, as convertRows converts them.
    void convertSpan(const unsigned char *in, float *out, std::int64_t n) const;
    // Chunks of stored rows for `threads`: about a block each, a multiple of the threads in
    // number; rows a multiple of `align`.
    Eigen::Index chunkRows(int threads, Eigen::Index align) const;
    // Gives the pages of stored rows [first, first + count) back to the page cache.
    void release(Eigen::Index first, Eigen::Index count) const;
    // Stored rows per block: about m_blockBytes of float32.
    Eigen::Index blockRows() const;

    MatrixF m_resident;
    bool m_mapped = false, m_transposed = false;
    const unsigned char *m_data = nullptr;
    int m_elementSize = 4;
    bool m_brain = false; // BF16 (else F16 when m_elementSize is 2)
    Eigen::Index m_storedRows = 0, m_storedCols = 0;
    std::shared_ptr<const void> m_keepAlive;
    std::int64_t m_blockBytes = std::int64_t(8) << 20;
};

} // namespace attnscope
