#include "core/attention/PooledAttention.h"

#include "core/Gemm.h"
#include "core/attention/CpuBackend.h"
#include "core/attention/CpuThreads.h"
#include "core/attention/HeadLayout.h"
#include "core/attention/Mask.h"
#include "core/attention/ReferenceAttention.h"
#include "core/attention/Rope.h"
#include "core/attention/Validation.h"
#include "core/io/MemoryLimits.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace attnscope {

namespace {

// Query rows per task and keys per tile: the tile (rows x keys floats, 512 KiB) and the weights
// tile stay in L2 between the scores GEMM, the softmax and weights·V.
constexpr Eigen::Index kBlockRows = 256, kMinBlockRows = 32, kTileKeys = kPoolTileKeys;

using ArrayF = Eigen::Array<float, 1, Eigen::Dynamic>;

float fillValue(MaskFill fill)
{
    return fill == MaskFill::NegLarge ? float(kNegLargeFill) : -std::numeric_limits<float>::infinity();
}

bool isCancelled(const std::atomic<bool> *cancel)
{
    return cancel && cancel->load(std::memory_order_relaxed);
}

struct Bins {
    std::int64_t count = 0, bins = 0;
    std::vector<std::int64_t> start; // bins + 1 boundaries
    std::vector<std::int32_t> of;    // item -> bin

    Bins(std::int64_t items, std::int64_t n) : count(items), bins(std::min(n, items))
    {
        start.resize(size_t(bins) + 1);
        for (std::int64_t b = 0; b <= bins; ++b)
            start[size_t(b)] = binStart(b, count, bins);
        of.resize(size_t(count));
        for (std::int64_t b = 0; b < bins; ++b)
            for (std::int64_t i = start[size_t(b)]; i < start[size_t(b) + 1]; ++i)
                of[size_t(i)] = std::int32_t(b);
    }
};

} // namespace

std::int64_t pooledBytes(std::int64_t heads, std::int64_t tq, std::int64_t tk, std::int64_t qkWidth,
                         std::int64_t vWidth, std::int64_t dOut, std::int64_t bins, int threads, bool headMean)
{
    const std::int64_t nq = std::min(bins, tq), nk = std::min(bins, tk);
    // Q, K, V, context, output.
    std::int64_t floats = saturatingMul(tq, qkWidth);
    floats = saturatingAdd(floats, saturatingMul(tk, saturatingAdd(qkWidth, vWidth)));
    floats = saturatingAdd(floats, saturatingMul(tq, saturatingAdd(vWidth, dOut)));
    // Pooled maps and entropies.
    floats = saturatingAdd(floats, saturatingMul(heads, saturatingAdd(saturatingMul(nq, nk), tq)));
    if (headMean)
        floats = saturatingAdd(floats, saturatingMul(nq, nk));
    std::int64_t bytes = saturatingMul(floats, 4);
    // Bin tables and the key padding table.
    bytes = saturatingAdd(bytes, saturatingMul(tq + tk, 16));
    // Per thread: scores and weights tiles, the block's output, its row statistics and its
    // local pooled cells (in double, a bin may span the whole block).
    // With the head mean: every head's cells of the block and a third (summed) tile.
    const std::int64_t slices = headMean ? heads + 1 : 1;
    const std::int64_t perThread = saturatingAdd(
        saturatingMul(4, saturatingAdd(saturatingMul((headMean ? 3 : 2) * kBlockRows, kTileKeys),
                                       saturatingMul(kBlockRows, vWidth + 8 * slices))),
        saturatingMul(8, saturatingMul(slices, saturatingMul(std::min<std::int64_t>(kBlockRows, nq) + 1, nk))));
    return saturatingAdd(bytes, saturatingMul(std::max(threads, 1), perThread));
}

std::int64_t pooledBytes(const AttentionProblem &p, const PoolOptions &options)
{
    const int threads = options.threads > 0 ? options.threads : omp_get_max_threads();
    return pooledBytes(p.spec.heads, p.tq(), p.tk(), p.qkWidth(), p.vWidth(), p.dOut(), options.bins, threads,
                       options.headMean);
}

void ScoreTiles::score(int h, Eigen::Index r0, Eigen::Index rows, Eigen::Index c0, Eigen::Index cols, MatrixF &s) const
{
    const int dk = layout.headDimQK;
    auto tile = s.topLeftCorner(rows, cols);
    gemm(q.middleCols(layout.queryColumn(h), dk).middleRows(r0 - firstRow, rows), GemmOp::None,
         k.middleCols(layout.keyColumnOfHead(h), dk).middleRows(c0, cols), GemmOp::Transpose, tile, scale);
    if (softcap)
        applySoftcap(*softcap, tile);
    const float filled = fillValue(fill);
    for (Eigen::Index r = 0; r < rows; ++r)
        mask.apply(r0 + r, c0, cols, filled, &s(r, 0));
}

bool ScoreTiles::normalisers(int h, Eigen::Index r0, Eigen::Index rows, MatrixF &s, double *rowMax, double *rowSum,
                             const std::atomic<bool> *cancel, bool *maskedWeighNothing) const
{
    const Eigen::Index tk = k.rows(), tiles = (tk + kTileKeys - 1) / kTileKeys, r1 = r0 + rows;
    const bool negLarge = fill == MaskFill::NegLarge;
    std::fill(rowMax, rowMax + rows, -std::numeric_limits<double>::infinity());
    std::fill(rowSum, rowSum + rows, 0.0);
    Eigen::Index skippedKeys = 0;
    for (Eigen::Index t = 0; t < tiles; ++t) {
        if (isCancelled(cancel))
            return false;
        const Eigen::Index c0 = t * kTileKeys, cols = std::min(kTileKeys, tk - c0);
        if (mask.tileMasked(r0, r1, c0, c0 + cols)) {
            skippedKeys += cols;
            continue;
        }
        score(h, r0, rows, c0, cols, s);
        for (Eigen::Index r = 0; r < rows; ++r) {
            Eigen::Map<const ArrayF> row(&s(r, 0), cols);
            const float tileMax = row.maxCoeff();
            if (tileMax == -std::numeric_limits<float>::infinity())
                continue;
            double &m = rowMax[r];
            if (tileMax > m) {
                rowSum[r] *= std::exp(m - double(tileMax));
                m = tileMax;
            }
            rowSum[r] += double((row - float(m)).exp().sum());
        }
    }
    // Keys of skipped tiles are masked for every row: under -1e9 they are logits of -1e9.
    // A sink joins every row's normaliser as one more logit, never masked.
    bool weighNothing = true;
    for (Eigen::Index r = 0; r < rows; ++r) {
        double &m = rowMax[r], &z = rowSum[r];
        if (negLarge && skippedKeys > 0) {
            if (kNegLargeFill > m) {
                z *= std::exp(m - kNegLargeFill);
                m = kNegLargeFill;
            }
            z += double(skippedKeys) * std::exp(double(float(kNegLargeFill) - float(m)));
        }
        if (sinks) {
            const double sink = double((*sinks)[h]);
            if (sink > m) {
                z = z > 0 ? z * std::exp(m - sink) : 0.0;
                m = sink;
            }
            z += std::exp(sink - m);
        }
        if (negLarge && z > 0 && std::exp(float(kNegLargeFill) - float(m)) * float(1.0 / z) > 0.0f)
            weighNothing = false;
    }
    if (maskedWeighNothing)
        *maskedWeighNothing = weighNothing;
    return true;
}

Result<PoolBlock> poolBlockOf(const PoolOptions &options, Eigen::Index tq, Eigen::Index tk)
{
    if (options.bins < 1)
        return Error{"pool: expected a bin count of at least 1, found " + std::to_string(options.bins)};
    const PoolBlock b{options.queryBegin, options.queryEnd < 0 ? tq : options.queryEnd, options.keyBegin,
                      options.keyEnd < 0 ? tk : options.keyEnd};
    if (b.q0 < 0 || b.q0 >= b.q1 || b.q1 > tq || b.k0 < 0 || b.k0 >= b.k1 || b.k1 > tk)
        return Error{"pool: expected a block inside the " + std::to_string(tq) + " x " + std::to_string(tk) +
                     " problem, found rows [" + std::to_string(b.q0) + ", " + std::to_string(b.q1) + ") and keys [" +
                     std::to_string(b.k0) + ", " + std::to_string(b.k1) + ")"};
    return b;
}

Result<PooledResult> computePooledCpu(const AttentionProblem &p, const PoolOptions &options)
{
    if (options.bins < 1)
        return Error{"pool: expected a bin count of at least 1, found " + std::to_string(options.bins)};
    // Every check but the full trace's size, which this path never holds.
    if (Status s = validateProblem(p, ProblemLimits{}); !s)
        return s.error();
    const auto block = poolBlockOf(options, p.tq(), p.tk());
    if (!block)
        return block.error();
    if (Status s = checkFitsInMemory(pooledBytes(p, options), "the pooled computation"); !s)
        return s.error();

    const HeadLayout layout = HeadLayout::of(p.spec);
    const bool allKeys = block->k0 == 0 && block->k1 == p.tk();
    const ScopedCpuThreads cpuThreads(options.threads > 0 ? options.threads : omp_get_max_threads());
    // Row r of q is query q0 + r; the mask and the bins take absolute indices.
    MatrixF q, k, v;
    projectQueriesAndKeys(p, block->q0, block->q1, q, k);
    if (allKeys)
        project(p.valueInput(), p.weights.v, p.weights.vBias, v);
    const StructuralMask mask(p);
    const ScoreTiles scores{.q = q,
                            .firstRow = block->q0,
                            .k = k,
                            .layout = layout,
                            .scale = float(p.spec.scale()),
                            .softcap = p.spec.softcap ? std::optional<float>(float(*p.spec.softcap)) : std::nullopt,
                            .mask = mask,
                            .fill = p.spec.maskFill,
                            .sinks = p.weights.sinks ? &*p.weights.sinks : nullptr};
    auto result = poolScoreTiles(scores, allKeys ? &v : nullptr, *block, options);
    if (result && allKeys && p.weights.o) {
        MatrixF output;
        project(result->output, *p.weights.o, p.weights.oBias, output);
        result->output = std::move(output);
    }
    return result;
}

Result<PooledResult> poolScoreTiles(const ScoreTiles &scores, const MatrixF *v, const PoolBlock &block,
                                    const PoolOptions &options)
{
    const HeadLayout &layout = scores.layout;
    const int heads = layout.heads, dv = v ? layout.headDimV : 0;
    const Eigen::Index tk = scores.k.rows();
    const Eigen::Index q0 = block.q0, k0 = block.k0, k1 = block.k1;
    const Eigen::Index rowsIn = block.q1 - q0, keysIn = k1 - k0;
    const bool allKeys = k0 == 0 && k1 == tk;
    const int threads = options.threads > 0 ? options.threads : omp_get_max_threads();
    const bool mean = options.mode == PoolMode::Mean;
    const std::atomic<bool> *cancel = options.cancel;
    auto cancelled = [cancel] { return isCancelled(cancel); };

    const Bins rowBins(rowsIn, options.bins), keyBins(keysIn, options.bins);
    const Eigen::Index nq = rowBins.bins, nk = keyBins.bins;
    // A task is one head of a query block, or every head of it when the head mean is pooled
    // too (the heads' weights of a tile must meet before they are pooled).
    const int groupHeads = options.headMean ? heads : 1, groups = heads / groupHeads;
    const int slices = groupHeads + (options.headMean ? 1 : 0); // pooled cells kept per task

    PooledResult result;
    result.pooled.assign(size_t(heads), MatrixF::Zero(nq, nk));
    if (options.headMean)
        result.headMean = MatrixF::Zero(nq, nk);
    if (allKeys)
        result.entropy = MatrixF::Zero(heads, rowsIn);
    MatrixF context(allKeys && v ? rowsIn : 0, Eigen::Index(heads) * dv);

    Eigen::Index blockRows = kBlockRows;
    while (blockRows > kMinBlockRows && groups * ((rowsIn + blockRows - 1) / blockRows) < 4 * threads)
        blockRows /= 2;
    const Eigen::Index blocks = (rowsIn + blockRows - 1) / blockRows;
    // Pass 2 visits only the keys pooled: tiles of [k0, k1).
    const Eigen::Index poolTiles = (keysIn + kTileKeys - 1) / kTileKeys;
    const Eigen::Index tasks = Eigen::Index(groups) * blocks;
    if (options.progress) {
        options.progress->done = 0;
        options.progress->total = tasks;
    }

#pragma omp parallel num_threads(threads)
    {
        const Eigen::Index tileCols = std::min(kTileKeys, tk);
        MatrixF s(blockRows, tileCols);
        MatrixF sum(options.headMean ? blockRows : 0, options.headMean ? tileCols : 0);
        MatrixF out(v ? blockRows : 0, Eigen::Index(groupHeads) * dv);
        const size_t n = static_cast<size_t>(blockRows);
        // Row statistics of head g of the task at [g * n + r].
        std::vector<double> rowMax(n * size_t(groupHeads)), rowSum(n * size_t(groupHeads)),
            entropy(n * size_t(groupHeads));
        std::vector<float> invZ(n * size_t(groupHeads)), logZ(n * size_t(groupHeads));
        std::vector<char> weighNothing(static_cast<size_t>(groupHeads));
        std::vector<double> local;

#pragma omp for schedule(dynamic)
        for (Eigen::Index task = 0; task < tasks; ++task) {
            // An OpenMP loop cannot be left early: the remaining tasks return at once instead.
            if (cancelled())
                continue;
            const int h0 = int(task / blocks) * groupHeads;
            const Eigen::Index b0 = (task % blocks) * blockRows, rows = std::min(blockRows, rowsIn - b0);
            const Eigen::Index r0 = q0 + b0, r1 = r0 + rows; // absolute query rows

            // Pass 1: each row's max and normaliser over every key.
            for (int g = 0; g < groupHeads; ++g) {
                const size_t at = size_t(g) * n;
                bool nothing = true;
                if (!scores.normalisers(h0 + g, r0, rows, s, &rowMax[at], &rowSum[at], cancel, &nothing))
                    break;
                weighNothing[size_t(g)] = nothing;
                for (Eigen::Index r = 0; r < rows; ++r) {
                    const double z = rowSum[at + size_t(r)];
                    invZ[at + size_t(r)] = z > 0 ? float(1.0 / z) : 0.0f;
                    logZ[at + size_t(r)] = z > 0 ? float(std::log(z)) : 0.0f;
                }
            }

            // Pass 2: exact weights over the pooled keys, pooled cells, entropies and weights·V.
            const std::int64_t a0 = rowBins.of[size_t(b0)], a1 = rowBins.of[size_t(b0 + rows - 1)];
            const size_t span = size_t((a1 - a0 + 1) * nk);
            local.assign(span * size_t(slices), 0.0);
            std::fill(entropy.begin(), entropy.end(), 0.0);
            if (v)
                out.topRows(rows).setZero();
            // Pools row r of a weights tile (keys [c0, c1)) into the cells of `slice`.
            auto poolRow = [&](const float *weights, Eigen::Index r, Eigen::Index c0, Eigen::Index c1, int slice) {
                const Eigen::Map<const ArrayF> row(weights, c1 - c0);
                double *cells = &local[size_t(slice) * span + size_t((rowBins.of[size_t(b0 + r)] - a0) * nk)];
                for (std::int64_t b = keyBins.of[size_t(c0 - k0)]; b < nk && k0 + keyBins.start[size_t(b)] < c1; ++b) {
                    const Eigen::Index j0 = std::max<Eigen::Index>(k0 + keyBins.start[size_t(b)], c0) - c0;
                    const Eigen::Index j1 = std::min<Eigen::Index>(k0 + keyBins.start[size_t(b) + 1], c1) - c0;
                    const auto segment = row.segment(j0, j1 - j0);
                    if (mean)
                        cells[b] += double(segment.sum());
                    else
                        cells[b] = std::max(cells[b], double(segment.maxCoeff()));
                }
            };
            for (Eigen::Index t = 0; t < poolTiles && !cancelled(); ++t) {
                const Eigen::Index c0 = k0 + t * kTileKeys, cols = std::min(kTileKeys, k1 - c0), c1 = c0 + cols;
                if (options.headMean)
                    sum.topLeftCorner(rows, cols).setZero();
                for (int g = 0; g < groupHeads; ++g) {
                    if (weighNothing[size_t(g)] && scores.mask.tileMasked(r0, r1, c0, c1))
                        continue;
                    const int h = h0 + g;
                    scores.score(h, r0, rows, c0, cols, s);
                    for (Eigen::Index r = 0; r < rows; ++r) {
                        const size_t i = size_t(g) * n + size_t(r);
                        Eigen::Map<ArrayF> row(&s(r, 0), cols);
                        if (rowSum[i] <= 0) { // nothing allowed under -inf: a zero row
                            row.setZero();
                            continue;
                        }
                        const float m = float(rowMax[i]), lz = logZ[i];
                        row -= m; // log-weights + logZ
                        const ArrayF w = softmaxWeights(row, invZ[i]);
                        entropy[i] -= double((w > 0.0f).select(w * (row - lz), 0.0f).sum());
                        row = w;
                        poolRow(&s(r, 0), r, c0, c1, g);
                    }
                    if (allKeys && v)
                        gemm(s.topLeftCorner(rows, cols),
                             v->middleCols(layout.valueColumnOfHead(h), dv).middleRows(c0, cols),
                             out.middleCols(Eigen::Index(g) * dv, dv).topRows(rows), 1.0f, 1.0f);
                    if (options.headMean)
                        sum.topLeftCorner(rows, cols) += s.topLeftCorner(rows, cols);
                }
                if (options.headMean) // the sum over heads; divided by H once merged
                    for (Eigen::Index r = 0; r < rows; ++r)
                        poolRow(&sum(r, 0), r, c0, c1, groupHeads);
            }
            if (cancelled())
                continue;
            if (allKeys)
                for (int g = 0; g < groupHeads; ++g) {
                    if (v)
                        context.block(b0, layout.contextColumn(h0 + g), rows, dv) =
                            out.middleCols(Eigen::Index(g) * dv, dv).topRows(rows);
                    for (Eigen::Index r = 0; r < rows; ++r)
                        result.entropy(h0 + g, b0 + r) = float(entropy[size_t(g) * n + size_t(r)]);
                }
                // Bins at the block's edges may be shared with the neighbouring blocks.
#pragma omp critical(attnscope_pooled_merge)
            for (int slice = 0; slice < slices; ++slice) {
                MatrixF &pooled = slice < groupHeads ? result.pooled[size_t(h0 + slice)] : result.headMean;
                for (std::int64_t a = a0; a <= a1; ++a)
                    for (Eigen::Index b = 0; b < nk; ++b) {
                        const double value = local[size_t(slice) * span + size_t((a - a0) * nk + b)];
                        if (mean)
                            pooled(a, b) += float(value);
                        else
                            pooled(a, b) = std::max(pooled(a, b), float(value));
                    }
            }
            if (options.progress)
                options.progress->done.fetch_add(1, std::memory_order_relaxed);
        }
    }
    if (cancelled())
        return Error{"the computation was cancelled", ErrorKind::Cancelled};

    auto divideCells = [&](MatrixF &pooled, double by) {
        for (Eigen::Index a = 0; a < nq; ++a)
            for (Eigen::Index b = 0; b < nk; ++b)
                pooled(a, b) = float(double(pooled(a, b)) /
                                     (by * (mean ? double((rowBins.start[size_t(a) + 1] - rowBins.start[size_t(a)]) *
                                                          (keyBins.start[size_t(b) + 1] - keyBins.start[size_t(b)]))
                                                 : 1.0)));
    };
    if (mean)
        for (MatrixF &pooled : result.pooled)
            divideCells(pooled, 1.0);
    if (options.headMean)
        divideCells(result.headMean, double(heads));
    if (allKeys && v)
        result.output = std::move(context);
    return result;
}

Result<PooledReference> referencePooled(const AttentionProblem &p, const PoolOptions &options)
{
    auto trace = referenceAttention(p);
    if (!trace)
        return trace.error();
    PooledReference result;
    result.entropy = MatrixD::Zero(p.spec.heads, p.tq());
    for (int h = 0; h < p.spec.heads; ++h) {
        const MatrixD &w = trace->weights[size_t(h)];
        result.pooled.push_back(poolWeights(w, options.bins, options.mode));
        for (Eigen::Index i = 0; i < w.rows(); ++i)
            for (Eigen::Index j = 0; j < w.cols(); ++j)
                if (w(i, j) > 0)
                    result.entropy(h, i) -= w(i, j) * std::log(w(i, j));
    }
    if (options.headMean) {
        MatrixD average = MatrixD::Zero(p.tq(), p.tk());
        for (const MatrixD &w : trace->weights)
            average += w;
        result.headMean = poolWeights(average / double(p.spec.heads), options.bins, options.mode);
    }
    result.output = std::move(trace->output);
    return result;
}

double measureGemmGflops(Eigen::Index rows, Eigen::Index d)
{
    const MatrixF a = MatrixF::Random(rows, d), b = MatrixF::Random(d, d);
    MatrixF c(rows, d);
    double best = 0.0, spent = 0.0;
    for (int i = 0; i < 50 && (i < 3 || spent < 0.3); ++i) {
        const auto start = std::chrono::steady_clock::now();
        gemm(a, b, c);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        spent += seconds;
        best = std::max(best, 2.0 * double(rows) * double(d) * double(d) / seconds / 1e9);
    }
    return best;
}

} // namespace attnscope
