#pragma once

#include "core/Result.h"
#include "core/Tensor.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

namespace attnscope {

class AttentionBackend;
class AttentionSet;

// Pooling, written once: every pooled picture of attention (the pooled engines' cells, the
// long view's tiles, the model view's thumbnails, the grid figures) splits rows and keys the
// way design.md's `compute --pool N` defines, and pools the same way.

enum class PoolMode { Max, Mean };

// The one block partition: `count` items (query rows or keys) in `bins` bins, bin b covering
// items [floor(b*count/bins), floor((b+1)*count/bins)). With bins <= count no bin is empty;
// pooled results always use min(N, count) bins.
inline std::int64_t binStart(std::int64_t bin, std::int64_t count, std::int64_t bins)
{
    return bin * count / bins;
}

// The bin that holds item `i`: the largest b with binStart(b) <= i (bins <= count).
inline std::int64_t binOf(std::int64_t i, std::int64_t count, std::int64_t bins)
{
    return ((i + 1) * bins - 1) / count;
}

// Items [first, last) shown by bin `bin` of a picture that has more bins than items (a map
// drawn larger than one pixel per cell): the bin's own items, or the one item it lies in when it
// holds none.
inline std::pair<std::int64_t, std::int64_t> binCover(std::int64_t bin, std::int64_t count, std::int64_t bins)
{
    const std::int64_t first = binStart(bin, count, bins);
    return {first, std::max(binStart(bin + 1, count, bins), first + 1)};
}

// How far a computation has come: tasks finished out of total. Written by the workers, read by
// anyone (a progress bar); done only grows.
struct PoolProgress {
    std::atomic<std::int64_t> done{0};
    std::atomic<std::int64_t> total{0};
};

// Pools the rows of one block, fed one at a time in any order, into min(bins, rows) by
// min(bins, keys) cells: each cell the max, or the mean, of the values of its block (a NaN in a
// block makes its cell NaN). Weights are never negative, so a max cell starts at 0, and a masked
// weight, being 0, counts as 0.
template <typename Scalar>
class RowPooler
{
public:
    RowPooler(std::int64_t rows, std::int64_t keys, std::int64_t bins, PoolMode mode)
        : m_rows(rows), m_keys(keys), m_nq(std::min(bins, rows)), m_nk(std::min(bins, keys)), m_mode(mode),
          m_cells(MatrixT<Scalar>::Zero(m_nq, m_nk)), m_keyBin(std::size_t(std::max<std::int64_t>(keys, 0)))
    {
        for (std::int64_t b = 0; b < m_nk; ++b)
            for (std::int64_t j = binStart(b, keys, m_nk); j < binStart(b + 1, keys, m_nk); ++j)
                m_keyBin[std::size_t(j)] = std::int32_t(b);
    }

    // Row r (0-based in the block) of `keys` values.
    template <typename Value>
    void add(std::int64_t r, const Value *values)
    {
        Scalar *cells = m_cells.row(binOf(r, m_rows, m_nq)).data();
        if (m_mode == PoolMode::Max) {
            for (std::int64_t j = 0; j < m_keys; ++j) {
                Scalar &cell = cells[m_keyBin[std::size_t(j)]];
                const Scalar v = Scalar(values[j]);
                if (v > cell || v != v) // a NaN stays in its cell: a block that holds one shows it
                    cell = v;
            }
        } else {
            for (std::int64_t j = 0; j < m_keys; ++j)
                cells[m_keyBin[std::size_t(j)]] += Scalar(values[j]);
        }
    }

    // The pooled cells (for the mean: sums divided by each block's size).
    MatrixT<Scalar> cells() const
    {
        if (m_mode == PoolMode::Max)
            return m_cells;
        MatrixT<Scalar> out = m_cells;
        for (std::int64_t a = 0; a < m_nq; ++a)
            for (std::int64_t b = 0; b < m_nk; ++b)
                out(a, b) /= Scalar((binStart(a + 1, m_rows, m_nq) - binStart(a, m_rows, m_nq)) *
                                    (binStart(b + 1, m_keys, m_nk) - binStart(b, m_keys, m_nk)));
        return out;
    }

private:
    std::int64_t m_rows, m_keys, m_nq, m_nk;
    PoolMode m_mode;
    MatrixT<Scalar> m_cells;
    std::vector<std::int32_t> m_keyBin;
};

// One whole matrix pooled into min(bins, rows) x min(bins, cols) cells.
template <typename Scalar>
MatrixT<Scalar> poolMatrix(const MatrixT<Scalar> &m, std::int64_t bins, PoolMode mode)
{
    RowPooler<Scalar> pooler(m.rows(), m.cols(), bins, mode);
    for (Eigen::Index i = 0; i < m.rows(); ++i)
        pooler.add(i, m.row(i).data()); // row-major: a row is contiguous
    return pooler.cells();
}

// A block of one (sample, layer) of a set: query rows [q0, q1) against keys [k0, k1).
struct SetBlock {
    std::int64_t q0 = 0, q1 = 0, k0 = 0, k1 = 0;
    std::int64_t rows() const { return q1 - q0; }
    std::int64_t keys() const { return k1 - k0; }
};

struct PooledSetBlock {
    std::vector<MatrixF> heads; // [H] Nq x Nk
    MatrixF headMean;           // Nq x Nk: the pooled mean over heads, when asked for
};

struct SetPoolOptions {
    std::int64_t bins = 512;
    PoolMode mode = PoolMode::Max;
    int head = -1;         // one head, or -1 for every head
    bool headMean = false; // also pool the mean over heads (every head is then read)
    // Checked before every row; once set, pooling stops with an Error of kind Cancelled.
    const std::atomic<bool> *cancel = nullptr;
    PoolProgress *progress = nullptr; // rows read, out of rows x heads read; may be null
    std::function<void()> rowRead;    // called after each row of a head is read (may be empty)
    // The engine that pools a set made from queries and keys (AttentionSet::fromQk): null for the
    // CPU engine. Sets of stored maps are read as they are.
    AttentionBackend *backend = nullptr;
};

// Pools a block of a set's maps, reading them one row segment at a time (a mapped file stays
// mapped; nothing of the size of a map is allocated). The head mean is exact: a cell is the max
// (or mean) over its block of the weights averaged over heads, never the mean of each head's
// pooled cells (the max of a mean is not the mean of the maxima). Refuses a block outside the
// maps (InvalidInput) and reports a source file that changed while it was read.
Result<PooledSetBlock> poolSetBlock(const AttentionSet &set, int sample, int layer, const SetBlock &block,
                                    const SetPoolOptions &options);

} // namespace attnscope
