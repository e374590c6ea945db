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

// Below this argument Eigen's vectorised float exp() returns its clamped value, not 0.
constexpr float kExpClamp = -88.0f;

// Query rows per task and keys per tile: the tile (rows x keys floats, 512 KiB) and the weights
// tile stay in L2 between the scores GEMM, the softmax and weights·V.
constexpr Eigen::Index kBlockRows = 256, kMinBlockRows = 32, kTileKeys = 512;

using ArrayF = Eigen::Array<float, 1, Eigen::Dynamic>;

MatrixF project(const ConstMatrixViewF &x, const MatrixF &w, const std::optional<VectorF> &bias)
{
    MatrixF y(x.rows(), w.cols());
    parallelGemm(x, w, y, omp_get_max_threads());
    if (bias)
        y.rowwise() += *bias;
    return y;
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

Result<PooledResult> computePooledCpu(const AttentionProblem &p, const PoolOptions &options)
{
    if (options.bins < 1)
        return Error{"pool: expected a bin count of at least 1, found " + std::to_string(options.bins)};
    // Every check but the full trace's size, which this path never holds.
    if (Status s = validateProblem(p, ProblemLimits{}); !s)
        return s.error();
    const Eigen::Index tq = p.tq(), tk = p.tk();
    const Eigen::Index q0 = options.queryBegin, q1 = options.queryEnd < 0 ? tq : options.queryEnd;
    const Eigen::Index k0 = options.keyBegin, k1 = options.keyEnd < 0 ? tk : options.keyEnd;
    if (q0 < 0 || q0 >= q1 || q1 > tq || k0 < 0 || k0 >= k1 || k1 > tk)
        return Error{"pool: expected a block inside the " + std::to_string(tq) + " x " + std::to_string(tk) +
                     " problem, found rows [" + std::to_string(q0) + ", " + std::to_string(q1) + ") and keys [" +
                     std::to_string(k0) + ", " + std::to_string(k1) + ")"};
    if (Status s = checkFitsInMemory(pooledBytes(p, options), "the pooled computation"); !s)
        return s.error();

    const HeadLayout layout = HeadLayout::of(p.spec);
    const int heads = layout.heads, dk = layout.headDimQK, dv = layout.headDimV;
    const Eigen::Index rowsIn = q1 - q0, keysIn = k1 - k0;
    const bool allKeys = k0 == 0 && k1 == tk;
    const int threads = options.threads > 0 ? options.threads : omp_get_max_threads();
    const ScopedCpuThreads cpuThreads(threads); // this thread's own setting, never a global
    const bool negLarge = p.spec.maskFill == MaskFill::NegLarge;
    const float fill = negLarge ? float(kNegLargeFill) : -std::numeric_limits<float>::infinity();
    const bool mean = options.mode == PoolMode::Mean;
    const std::atomic<bool> *cancel = options.cancel;
    auto cancelled = [cancel] { return cancel && cancel->load(std::memory_order_relaxed); };

    // Row r of q is query q0 + r; the mask and the bins take absolute indices.
    MatrixF q = project(p.xq.middleRows(q0, rowsIn), p.weights.q, p.weights.qBias);
    MatrixF k = project(p.keyInput(), p.weights.k, p.weights.kBias);
    if (p.weights.qNorm)
        applyHeadNorm(q, *p.weights.qNorm, heads, dk, p.spec.qkNormEps);
    if (p.weights.kNorm)
        applyHeadNorm(k, *p.weights.kNorm, layout.kvHeads, dk, p.spec.qkNormEps);
    if (p.spec.rope) { // RoPE in the projection stage, as in the full engine
        const std::vector<std::int64_t> all = queryPositions(p);
        const std::vector<std::int64_t> rows(all.begin() + q0, all.begin() + q1);
        applyRope(q, ropeTable(rows, *p.spec.rope, dk), heads, dk);
        applyRope(k, ropeTable(keyPositions(p), *p.spec.rope, dk), layout.kvHeads, dk);
    }
    q *= float(p.spec.scale());
    const MatrixF v = allKeys ? project(p.valueInput(), p.weights.v, p.weights.vBias) : MatrixF();
    const StructuralMask mask(p);
    const std::optional<float> softcap =
        p.spec.softcap ? std::optional<float>(float(*p.spec.softcap)) : std::optional<float>();
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
    MatrixF context(allKeys ? rowsIn : 0, p.vWidth());

    Eigen::Index blockRows = kBlockRows;
    while (blockRows > kMinBlockRows && groups * ((rowsIn + blockRows - 1) / blockRows) < 4 * threads)
        blockRows /= 2;
    const Eigen::Index blocks = (rowsIn + blockRows - 1) / blockRows;
    const Eigen::Index tiles = (tk + kTileKeys - 1) / kTileKeys;
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
        MatrixF out(blockRows, Eigen::Index(groupHeads) * dv);
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
            auto scoreTile = [&](int h, Eigen::Index c0, Eigen::Index cols) {
                auto tile = s.topLeftCorner(rows, cols);
                gemm(q.middleCols(layout.queryColumn(h), dk).middleRows(b0, rows), GemmOp::None,
                     k.middleCols(layout.keyColumnOfHead(h), dk).middleRows(c0, cols), GemmOp::Transpose, tile);
                if (softcap)
                    applySoftcap(*softcap, tile);
                for (Eigen::Index r = 0; r < rows; ++r)
                    mask.apply(r0 + r, c0, cols, fill, &s(r, 0));
            };

            // Pass 1: each row's max and normaliser over every key, tile by tile (online softmax).
            for (int g = 0; g < groupHeads; ++g) {
                double *gMax = &rowMax[size_t(g) * n], *gSum = &rowSum[size_t(g) * n];
                std::fill(gMax, gMax + n, -std::numeric_limits<double>::infinity());
                std::fill(gSum, gSum + n, 0.0);
                Eigen::Index skippedKeys = 0;
                for (Eigen::Index t = 0; t < tiles && !cancelled(); ++t) {
                    const Eigen::Index c0 = t * kTileKeys, cols = std::min(kTileKeys, tk - c0);
                    if (mask.tileMasked(r0, r1, c0, c0 + cols)) {
                        skippedKeys += cols;
                        continue;
                    }
                    scoreTile(h0 + g, c0, cols);
                    for (Eigen::Index r = 0; r < rows; ++r) {
                        Eigen::Map<const ArrayF> row(&s(r, 0), cols);
                        const float tileMax = row.maxCoeff();
                        if (tileMax == -std::numeric_limits<float>::infinity())
                            continue;
                        double &m = gMax[r];
                        if (tileMax > m) {
                            gSum[r] *= std::exp(m - double(tileMax));
                            m = tileMax;
                        }
                        gSum[r] += double((row - float(m)).exp().sum());
                    }
                }
                // Keys of skipped tiles are masked for every row: under -1e9 they are logits of -1e9.
                // A sink joins every row's normaliser as one more logit, never masked.
                bool maskedWeighNothing = true;
                for (Eigen::Index r = 0; r < rows; ++r) {
                    double &m = gMax[r], &z = gSum[r];
                    if (negLarge && skippedKeys > 0) {
                        if (kNegLargeFill > m) {
                            z *= std::exp(m - kNegLargeFill);
                            m = kNegLargeFill;
                        }
                        z += double(skippedKeys) * std::exp(double(float(kNegLargeFill) - float(m)));
                    }
                    if (p.weights.sinks) {
                        const double sink = double((*p.weights.sinks)[h0 + g]);
                        if (sink > m) {
                            z = z > 0 ? z * std::exp(m - sink) : 0.0;
                            m = sink;
                        }
                        z += std::exp(sink - m);
                    }
                    const size_t i = size_t(g) * n + size_t(r);
                    invZ[i] = z > 0 ? float(1.0 / z) : 0.0f;
                    logZ[i] = z > 0 ? float(std::log(z)) : 0.0f;
                    if (negLarge && z > 0 && std::exp(float(kNegLargeFill) - float(m)) * invZ[i] > 0.0f)
                        maskedWeighNothing = false;
                }
                weighNothing[size_t(g)] = maskedWeighNothing;
            }

            // Pass 2: exact weights over the pooled keys, pooled cells, entropies and weights·V.
            const std::int64_t a0 = rowBins.of[size_t(b0)], a1 = rowBins.of[size_t(b0 + rows - 1)];
            const size_t span = size_t((a1 - a0 + 1) * nk);
            local.assign(span * size_t(slices), 0.0);
            std::fill(entropy.begin(), entropy.end(), 0.0);
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
                    if (weighNothing[size_t(g)] && mask.tileMasked(r0, r1, c0, c1))
                        continue;
                    const int h = h0 + g;
                    scoreTile(h, c0, cols);
                    for (Eigen::Index r = 0; r < rows; ++r) {
                        const size_t i = size_t(g) * n + size_t(r);
                        Eigen::Map<ArrayF> row(&s(r, 0), cols);
                        if (rowSum[i] <= 0) { // nothing allowed under -inf: a zero row
                            row.setZero();
                            continue;
                        }
                        const float m = float(rowMax[i]), lz = logZ[i];
                        row -= m; // log-weights + logZ
                        // Eigen's vectorised exp clamps its argument near -88.7, so exp(-inf) of a
                        // masked logit is about 3e-39, not 0 (seen without -march=native): below the
                        // clamp the weight is 0, as a masked one must be exactly.
                        const ArrayF w = (row < kExpClamp).select(0.0f, row.exp() * invZ[i]);
                        entropy[i] -= double((w > 0.0f).select(w * (row - lz), 0.0f).sum());
                        row = w;
                        poolRow(&s(r, 0), r, c0, c1, g);
                    }
                    if (allKeys)
                        gemm(s.topLeftCorner(rows, cols),
                             v.middleCols(layout.valueColumnOfHead(h), dv).middleRows(c0, cols),
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
    if (allKeys)
        result.output = p.weights.o ? project(context, *p.weights.o, p.weights.oBias) : std::move(context);
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
