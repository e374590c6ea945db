#include "core/models/WeightMatrix.h"

#include "core/Gemm.h"
#include "core/SimdClones.h"
#include "core/formats/Npy.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include <omp.h>
#include <sys/mman.h>
#include <unistd.h>

namespace attnscope {

namespace {

// bfloat16 is the upper half of a float32. `in` holds little-endian 16-bit values, not
// necessarily aligned (a checkpoint's tensors need not be).
ATTNSCOPE_SIMD_CLONES void brainToFloat(const unsigned char *__restrict in, float *__restrict out, std::int64_t n)
{
#pragma omp simd
    for (std::int64_t i = 0; i < n; ++i) {
        const std::uint32_t wide = std::uint32_t(in[2 * i] | (in[2 * i + 1] << 8)) << 16;
        std::memcpy(out + i, &wide, 4);
    }
}

// halfToFloat (core/formats/Npy.h) with its branches as masks, so that the loop vectorises:
// exactly the same float for every one of the 65536 halves (tst_decoders checks them all).
ATTNSCOPE_SIMD_CLONES void halfRangeToFloat(const unsigned char *__restrict in, float *__restrict out, std::int64_t n)
{
#pragma omp simd
    for (std::int64_t i = 0; i < n; ++i) {
        std::uint16_t h;
        std::memcpy(&h, in + 2 * i, 2); // little-endian, as x86 and ARM read it
        const std::uint32_t magnitude = h & 0x7fffu, shifted = magnitude << 13;
        const float subnormal = float(std::int32_t(magnitude)) * 0x1p-24f; // exact, a normal float32
        std::uint32_t subnormalBits;
        std::memcpy(&subnormalBits, &subnormal, 4);
        // Masks, not branches or selects: GCC 12 vectorises only this form.
        const std::uint32_t special = 0u - std::uint32_t(magnitude >= 0x7c00u),          // Inf, NaN
            small = 0u - std::uint32_t(magnitude < 0x0400u);                             // subnormal, zero
        const std::uint32_t normal = (shifted + (112u << 23)) | (special & 0x7f800000u); // rebiased
        const std::uint32_t bits = (small & subnormalBits) | (~small & normal);
        const std::uint32_t value = bits | (std::uint32_t(h & 0x8000u) << 16);
        std::memcpy(out + i, &value, 4);
    }
}

// y[i·ldy] = x_i · w over n values, for `rows` rows x_i of x (ldx apart).
ATTNSCOPE_SIMD_CLONES void dotRows(const float *__restrict w, const float *__restrict x, Eigen::Index ldx,
                                   Eigen::Index rows, Eigen::Index n, float *__restrict y, Eigen::Index ldy)
{
    for (Eigen::Index i = 0; i < rows; ++i) {
        const float *xi = x + i * ldx;
        float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
        for (Eigen::Index j = 0; j < n; ++j)
            sum += xi[j] * w[j];
        y[i * ldy] = sum;
    }
}

// y_i += a[i·lda] · w over n values, for `rows` rows y_i of y (n apart).
ATTNSCOPE_SIMD_CLONES void addScaledRow(const float *__restrict w, const float *__restrict a, Eigen::Index lda,
                                        Eigen::Index rows, Eigen::Index n, float *__restrict y)
{
    for (Eigen::Index i = 0; i < rows; ++i) {
        const float ai = a[i * lda];
        float *yi = y + i * n;
#pragma omp simd
        for (Eigen::Index j = 0; j < n; ++j)
            yi[j] += ai * w[j];
    }
}

// A product over fewer multiply-adds than this runs on the calling thread: a parallel region's
// start and barrier cost more than the threads save (a decode step of a small model is all
// small products, and waiting threads took a quarter of it).
constexpr double kThreadedMultiplyAdds = double(1 << 20);

} // namespace

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

void WeightMatrix::convertSpan(const unsigned char *in, float *out, std::int64_t n) const
{
    if (m_elementSize == 4)
        std::memcpy(out, in, std::size_t(n) * 4);
    else if (m_brain)
        brainToFloat(in, out, n);
    else
        halfRangeToFloat(in, out, n);
}

Eigen::Index WeightMatrix::chunkRows(int threads, Eigen::Index align) const
{
    // As many chunks as a block's size asks for, rounded up to a multiple of the threads so
    // that each gets the same share.
    Eigen::Index chunks = (m_storedRows + blockRows() - 1) / blockRows();
    chunks = (chunks + threads - 1) / threads * threads;
    return std::max<Eigen::Index>(align, ((m_storedRows + chunks - 1) / chunks + align - 1) / align * align);
}

void WeightMatrix::convertRows(Eigen::Index first, Eigen::Index count, float *out, bool parallel) const
{
    const std::int64_t n = std::int64_t(count) * m_storedCols;
    const unsigned char *p = m_data + std::int64_t(first) * m_storedCols * m_elementSize;
    if (m_elementSize == 4) {
        std::memcpy(out, p, std::size_t(n) * 4);
        return;
    }
    // Ranges of 64 Ki values, each converted by a loop of its own over local pointers (so
    // that the compiler vectorises it) on the caller's threads.
    constexpr std::int64_t kRange = std::int64_t(1) << 16;
    const std::int64_t ranges = (n + kRange - 1) / kRange;
#pragma omp parallel for schedule(static) if (parallel && n > (1 << 20))
    for (std::int64_t r = 0; r < ranges; ++r) {
        const std::int64_t from = r * kRange, count = std::min(kRange, n - from);
        convertSpan(p + 2 * from, out + from, count);
    }
}

MatrixF WeightMatrix::storedBlock(Eigen::Index first, Eigen::Index count) const
{
    MatrixF out(count, m_storedCols);
    convertRows(first, count, out.data(), true);
    return out;
}

namespace {

// Each calling thread's conversion buffer, kept across products: a fresh one per block would
// cost a page fault per 4 KiB of it every forward.
float *scratch(std::size_t floats)
{
    thread_local std::vector<float> buffer;
    if (buffer.size() < floats)
        buffer.resize(floats);
    return buffer.data();
}

} // namespace

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

MatrixF WeightMatrix::storedRowsAsColumns(const MatrixF &x) const
{
    // y = x·Sᵀ for the stored S: each stored row gives a column of y. The stored rows are cut
    // into chunks, one task each: a thread converts its chunk into its own buffer and runs a
    // one-thread GEMM on it while the chunk is still in its cache, so the weights are converted
    // and packed once per product, with no barrier between the two steps.
    const int threads = omp_get_max_threads();
    MatrixF y(x.rows(), m_storedRows);
    // Whole groups of 16 rows (the kernels' width).
    const Eigen::Index chunk = chunkRows(threads, 16), chunks = (m_storedRows + chunk - 1) / chunk;
    const double flops = 2.0 * double(x.rows()) * double(x.cols()) * double(m_storedRows);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (chunks > 1 && flops > 8e6)
    for (Eigen::Index c = 0; c < chunks; ++c) {
        const Eigen::Index first = c * chunk, count = std::min(chunk, m_storedRows - first);
        float *buffer = scratch(std::size_t(count * m_storedCols));
        convertRows(first, count, buffer, false);
        const Eigen::Map<const MatrixF> s(buffer, count, m_storedCols);
        gemm(x, GemmOp::None, s, GemmOp::Transpose, y.middleCols(first, count));
        release(first, count);
    }
    return y;
}

MatrixF WeightMatrix::storedRowsAsInputs(const MatrixF &x) const
{
    // y = x·S: each stored row meets one column of x; blocks of rows accumulate into y.
    const int threads = omp_get_max_threads();
    MatrixF y = MatrixF::Zero(x.rows(), m_storedCols);
    const Eigen::Index block = blockRows();
    for (Eigen::Index first = 0; first < m_storedRows; first += block) {
        const Eigen::Index count = std::min(block, m_storedRows - first);
        float *buffer = scratch(std::size_t(count * m_storedCols));
        convertRows(first, count, buffer, true);
        const Eigen::Map<const MatrixF> s(buffer, count, m_storedCols);
        parallelGemm(x.middleCols(first, count), s, y, threads, 1.0f, 1.0f);
        release(first, count);
    }
    return y;
}

// A decode step multiplies one row by every weight: converting the weight into float32 blocks
// and packing them for a GEMM cost more than the product itself (a third of a step of a 0.5B
// model in perf). Here each stored row is converted into a buffer of one row, in L1, and used
// there by every row of x. Pages are released only for a weight over the block size: below it,
// keeping the weight mapped costs no more than the float32 block the large path would hold, and
// releasing it would fault it in again on every step.
MatrixF WeightMatrix::fewRowsAsColumns(const MatrixF &x) const
{
    // y = x·Sᵀ: y(i, r) = x_i · S_r.
    const double multiplyAdds = double(x.rows()) * double(m_storedRows) * double(m_storedCols);
    const int threads = multiplyAdds >= kThreadedMultiplyAdds ? omp_get_max_threads() : 1;
    const bool releasing = std::int64_t(m_storedRows) * m_storedCols * m_elementSize > m_blockBytes;
    const Eigen::Index chunk = chunkRows(threads, 1), chunks = (m_storedRows + chunk - 1) / chunk;
    MatrixF y(x.rows(), m_storedRows);
    const std::int64_t rowBytes = std::int64_t(m_storedCols) * m_elementSize;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (Eigen::Index c = 0; c < chunks; ++c) {
        const Eigen::Index first = c * chunk, count = std::min(chunk, m_storedRows - first);
        float *row = scratch(std::size_t(m_storedCols));
        for (Eigen::Index r = first; r < first + count; ++r) {
            convertSpan(m_data + std::int64_t(r) * rowBytes, row, m_storedCols);
            dotRows(row, x.data(), x.cols(), x.rows(), m_storedCols, y.data() + r, y.cols());
        }
        if (releasing)
            release(first, count);
    }
    return y;
}

MatrixF WeightMatrix::fewRowsAsInputs(const MatrixF &x) const
{
    // y = x·S: y_i = Σ_r x(i, r)·S_r. Each thread sums its chunks' rows into a y of its own;
    // the threads' sums are added in thread order after (the same order every run).
    const double multiplyAdds = double(x.rows()) * double(m_storedRows) * double(m_storedCols);
    const int threads = multiplyAdds >= kThreadedMultiplyAdds ? omp_get_max_threads() : 1;
    const bool releasing = std::int64_t(m_storedRows) * m_storedCols * m_elementSize > m_blockBytes;
    const Eigen::Index chunk = chunkRows(threads, 1), chunks = (m_storedRows + chunk - 1) / chunk;
    MatrixF sums = MatrixF::Zero(x.rows() * threads, m_storedCols);
    const std::int64_t rowBytes = std::int64_t(m_storedCols) * m_elementSize;
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
        float *own = sums.data() + std::int64_t(omp_get_thread_num()) * x.rows() * m_storedCols;
        float *row = scratch(std::size_t(m_storedCols));
#pragma omp for schedule(static)
        for (Eigen::Index c = 0; c < chunks; ++c) {
            const Eigen::Index first = c * chunk, count = std::min(chunk, m_storedRows - first);
            for (Eigen::Index r = first; r < first + count; ++r) {
                convertSpan(m_data + std::int64_t(r) * rowBytes, row, m_storedCols);
                addScaledRow(row, x.data() + r, x.cols(), x.rows(), m_storedCols, own);
            }
            if (releasing)
                release(first, count);
        }
    }
    MatrixF y = sums.topRows(x.rows());
    for (int t = 1; t < threads; ++t)
        y += sums.middleRows(std::int64_t(t) * x.rows(), x.rows());
    return y;
}

// The products run on core's GEMM (OpenBLAS where it loads) over the caller's OpenMP threads.
MatrixF WeightMatrix::product(const MatrixF &x) const
{
    if (!m_mapped) {
        MatrixF y(x.rows(), m_resident.cols());
        parallelGemm(x, m_resident, y, omp_get_max_threads());
        return y;
    }
    if (x.rows() <= kFewRows)
        return m_transposed ? fewRowsAsColumns(x) : fewRowsAsInputs(x);
    return m_transposed ? storedRowsAsColumns(x) : storedRowsAsInputs(x);
}

MatrixF WeightMatrix::productTransposed(const MatrixF &x) const
{
    if (!m_mapped) {
        MatrixF y(x.rows(), m_resident.rows());
        parallelGemm(x, m_resident, GemmOp::Transpose, y, omp_get_max_threads());
        return y;
    }
    if (x.rows() <= kFewRows)
        return m_transposed ? fewRowsAsInputs(x) : fewRowsAsColumns(x);
    return m_transposed ? storedRowsAsInputs(x) : storedRowsAsColumns(x);
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
