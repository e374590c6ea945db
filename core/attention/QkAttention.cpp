#include "core/attention/QkAttention.h"

#include "core/attention/CpuBackend.h"
#include "core/attention/CpuThreads.h"
#include "core/attention/HeadLayout.h"
#include "core/attention/Mask.h"
#include "core/attention/Validation.h"
#include "core/io/MemoryLimits.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace attnscope {

namespace {

std::string where(const char *name, Eigen::Index row, Eigen::Index col, float value)
{
    return std::string(name) + ": " + (std::isnan(value) ? "NaN" : "an infinity") + " at row " + std::to_string(row) +
           ", column " + std::to_string(col);
}

Status checkFinite(const char *name, const MatrixF &m)
{
    for (Eigen::Index r = 0; r < m.rows(); ++r)
        for (Eigen::Index c = 0; c < m.cols(); ++c)
            if (!std::isfinite(m(r, c)))
                return Error{where(name, r, c, m(r, c))};
    return Ok{};
}

Status checkPositions(const char *name, const std::vector<std::int64_t> &positions, Eigen::Index rows)
{
    if (positions.empty())
        return Ok{};
    if (Eigen::Index(positions.size()) != rows)
        return Error{std::string(name) + ": expected " + std::to_string(rows) + " positions (one per row), found " +
                     std::to_string(positions.size())};
    for (size_t i = 0; i < positions.size(); ++i)
        if (positions[i] < 0)
            return Error{std::string(name) + ": position " + std::to_string(i) + " is negative (" +
                         std::to_string(positions[i]) + ")"};
    return Ok{};
}

// Row i of head h in double: the allowed logits (masked ones -inf) and the log-normaliser.
double referenceRow(const QkLayer &l, int h, Eigen::Index i, std::vector<double> &logits)
{
    const int g = l.kvHeadOf(h), hd = l.headDim;
    logits.assign(size_t(l.tk()), -std::numeric_limits<double>::infinity());
    double m = -std::numeric_limits<double>::infinity();
    for (Eigen::Index j = 0; j < l.tk(); ++j) {
        if (!l.allowed(i, j))
            continue;
        double dot = 0.0;
        for (int d = 0; d < hd; ++d)
            dot += double(l.q(i, Eigen::Index(h) * hd + d)) * double(l.k(j, Eigen::Index(g) * hd + d));
        double s = l.scale * dot;
        if (l.softcap)
            s = *l.softcap * std::tanh(s / *l.softcap);
        logits[size_t(j)] = s;
        m = std::max(m, s);
    }
    if (l.sinks)
        m = std::max(m, double((*l.sinks)[h]));
    if (m == -std::numeric_limits<double>::infinity())
        return m;
    double z = 0.0;
    for (double s : logits)
        if (s != -std::numeric_limits<double>::infinity())
            z += std::exp(s - m);
    if (l.sinks)
        z += std::exp(double((*l.sinks)[h]) - m);
    return m + std::log(z);
}

// Query rows per task of the row-statistics engines (qkLogSumExp, qkWeightsBlock).
constexpr Eigen::Index kRowsPerTask = 128;

StructuralMask maskOf(const QkLayer &l)
{
    return StructuralMask(l.causal, l.window, l.queryPositions, l.keyPositions, l.tq(), l.tk());
}

// The tile engine's view of a layer: q whole (row i is query i), scores as QkLayer defines them.
ScoreTiles scoresOf(const QkLayer &l, const StructuralMask &mask)
{
    return ScoreTiles{.q = l.q,
                      .firstRow = 0,
                      .k = l.k,
                      .layout = HeadLayout{l.heads, l.kvHeads, l.headDim, l.headDim},
                      .scale = float(l.scale),
                      .softcap = l.softcap ? std::optional<float>(float(*l.softcap)) : std::nullopt,
                      .mask = mask,
                      .fill = MaskFill::NegInf,
                      .sinks = l.sinks ? &*l.sinks : nullptr};
}

Error cancelledError()
{
    return Error{"the computation was cancelled", ErrorKind::Cancelled};
}

} // namespace

QkLayer singleHeadLayer(const QkLayer &layer, int head)
{
    QkLayer one; // the facts copied, not the other heads' q and k
    const int hd = layer.headDim;
    one.heads = one.kvHeads = 1;
    one.headDim = hd;
    one.scale = layer.scale;
    one.causal = layer.causal;
    one.window = layer.window;
    one.softcap = layer.softcap;
    one.queryPositions = layer.queryPositions;
    one.keyPositions = layer.keyPositions;
    one.q = layer.q.middleCols(Eigen::Index(head) * hd, hd);
    one.k = layer.k.middleCols(Eigen::Index(layer.kvHeadOf(head)) * hd, hd);
    if (layer.sinks)
        one.sinks = VectorF::Constant(1, (*layer.sinks)[head]);
    if (layer.lse)
        one.lse = MatrixF(layer.lse->row(head));
    return one;
}

Status validateQkLayer(const QkLayer &l)
{
    if (l.heads < 1 || l.kvHeads < 1)
        return Error{"heads and kvHeads must be at least 1, found " + std::to_string(l.heads) + " and " +
                     std::to_string(l.kvHeads)};
    if (l.heads % l.kvHeads != 0)
        return Error{"heads " + std::to_string(l.heads) + " is not a multiple of kvHeads " + std::to_string(l.kvHeads)};
    if (l.headDim < 1)
        return Error{"headDim must be at least 1, found " + std::to_string(l.headDim)};
    if (!(l.scale > 0) || !std::isfinite(l.scale))
        return Error{"scale must be a positive finite number, found " + std::to_string(l.scale)};
    if (l.window < 0)
        return Error{"window must be at least 1 (or absent), found " + std::to_string(l.window)};
    if (l.softcap && (!(*l.softcap > 0) || !std::isfinite(*l.softcap)))
        return Error{"softcap must be a positive finite number, found " + std::to_string(*l.softcap)};
    if (l.tq() < 1 || l.tk() < 1)
        return Error{"expected at least one query and one key, found " + std::to_string(l.tq()) + " and " +
                     std::to_string(l.tk())};
    if (l.q.cols() != Eigen::Index(l.heads) * l.headDim)
        return Error{"q: expected " + std::to_string(l.heads) + " heads of " + std::to_string(l.headDim) + " (" +
                     std::to_string(Eigen::Index(l.heads) * l.headDim) + " columns), found " +
                     std::to_string(l.q.cols())};
    if (l.k.cols() != Eigen::Index(l.kvHeads) * l.headDim)
        return Error{"k: expected " + std::to_string(l.kvHeads) + " key heads of " + std::to_string(l.headDim) + " (" +
                     std::to_string(Eigen::Index(l.kvHeads) * l.headDim) + " columns), found " +
                     std::to_string(l.k.cols())};
    if (Status s = checkPositions("queryPositions", l.queryPositions, l.tq()); !s)
        return s;
    if (Status s = checkPositions("keyPositions", l.keyPositions, l.tk()); !s)
        return s;
    if (l.sinks && l.sinks->size() != l.heads)
        return Error{"sinks: expected " + std::to_string(l.heads) + " values (one per head), found " +
                     std::to_string(l.sinks->size())};
    if (l.lse && (l.lse->rows() != l.heads || l.lse->cols() != l.tq()))
        return Error{"lse: expected " + std::to_string(l.heads) + " x " + std::to_string(l.tq()) + ", found " +
                     std::to_string(l.lse->rows()) + " x " + std::to_string(l.lse->cols())};
    if (Status s = checkFinite("q", l.q); !s)
        return s;
    if (Status s = checkFinite("k", l.k); !s)
        return s;
    if (l.sinks)
        if (Status s = checkFinite("sinks", MatrixF(l.sinks->transpose())); !s)
            return s;
    return Ok{};
}

Result<QkLayer> qkLayerOf(const AttentionProblem &p)
{
    if (Status s = validateProblem(p, ProblemLimits{}); !s)
        return s.error();
    if (p.mask.allowed)
        return Error{"qk layer: a custom mask matrix cannot be said by causal, window and positions"};
    if (std::find(p.mask.keyPadding.begin(), p.mask.keyPadding.end(), false) != p.mask.keyPadding.end())
        return Error{"qk layer: key padding cannot be said by causal, window and positions"};
    if (p.spec.maskFill == MaskFill::NegLarge)
        return Error{"qk layer: the -1e9 mask fill cannot be said (a q/k layer masks with -inf)"};
    const HeadLayout layout = HeadLayout::of(p.spec);
    QkLayer l;
    l.heads = layout.heads;
    l.kvHeads = layout.kvHeads;
    l.headDim = layout.headDimQK;
    l.scale = p.spec.scale();
    l.causal = p.mask.causal;
    l.window = p.mask.window;
    l.softcap = p.spec.softcap;
    l.sinks = p.weights.sinks;
    if (!positionsAreIndices(p)) {
        l.queryPositions = queryPositions(p);
        l.keyPositions = keyPositions(p);
    }
    projectQueriesAndKeys(p, 0, p.tq(), l.q, l.k);
    return l;
}

std::int64_t pooledQkBytes(const QkLayer &l, const PoolOptions &options)
{
    const int threads = options.threads > 0 ? options.threads : omp_get_max_threads();
    // pooledBytes without V, the context and the output; K is KV·hd wide, not H·hd.
    const std::int64_t bytes = pooledBytes(l.heads, l.tq(), l.tk(), std::int64_t(l.heads) * l.headDim, 0, 0,
                                           options.bins, threads, options.headMean);
    return bytes - saturatingMul(4, saturatingMul(l.tk(), std::int64_t(l.heads - l.kvHeads) * l.headDim));
}

Result<PooledResult> computePooledQk(const QkLayer &l, const PoolOptions &options)
{
    if (Status s = validateQkLayer(l); !s)
        return s.error();
    const auto block = poolBlockOf(options, l.tq(), l.tk());
    if (!block)
        return block.error();
    if (Status s = checkFitsInMemory(pooledQkBytes(l, options), "the pooled computation"); !s)
        return s.error();
    const ScopedCpuThreads cpuThreads(options.threads > 0 ? options.threads : omp_get_max_threads());
    const StructuralMask mask = maskOf(l);
    return poolScoreTiles(scoresOf(l, mask), nullptr, *block, options);
}

Result<MatrixF> qkWeightsBlock(const QkLayer &l, int head, std::int64_t q0, std::int64_t q1, std::int64_t k0,
                               std::int64_t k1, const std::atomic<bool> *cancel)
{
    if (Status s = validateQkLayer(l); !s)
        return s.error();
    if (head < 0 || head >= l.heads)
        return Error{"weights block: expected a head in [0, " + std::to_string(l.heads) + "), found " +
                     std::to_string(head)};
    if (q0 < 0 || q0 >= q1 || q1 > l.tq() || k0 < 0 || k0 >= k1 || k1 > l.tk())
        return Error{"weights block: expected a block inside the " + std::to_string(l.tq()) + " x " +
                     std::to_string(l.tk()) + " map, found rows [" + std::to_string(q0) + ", " + std::to_string(q1) +
                     ") and keys [" + std::to_string(k0) + ", " + std::to_string(k1) + ")"};
    const int threads = omp_get_max_threads();
    const std::int64_t tileBytes = 4 * kRowsPerTask * std::min<std::int64_t>(kPoolTileKeys, l.tk());
    if (Status s = checkFitsInMemory(
            saturatingAdd(saturatingMul(4, saturatingMul(q1 - q0, k1 - k0)), saturatingMul(threads, tileBytes)),
            "the weights block");
        !s)
        return s.error();
    const StructuralMask mask = maskOf(l);
    const ScoreTiles scores = scoresOf(l, mask);
    MatrixF out = MatrixF::Zero(q1 - q0, k1 - k0);
    const Eigen::Index tasks = (q1 - q0 + kRowsPerTask - 1) / kRowsPerTask;
#pragma omp parallel num_threads(int(std::min <Eigen::Index>(threads, tasks)))
    {
        MatrixF s(kRowsPerTask, std::min(kPoolTileKeys, l.tk()));
        std::vector<double> rowMax(static_cast<size_t>(kRowsPerTask)), rowSum(static_cast<size_t>(kRowsPerTask));
#pragma omp for schedule(dynamic)
        for (Eigen::Index task = 0; task < tasks; ++task) {
            const Eigen::Index r0 = q0 + task * kRowsPerTask, rows = std::min<Eigen::Index>(kRowsPerTask, q1 - r0);
            // Pass 1 over every key of the rows, then the block's keys a tile at a time.
            if (!scores.normalisers(head, r0, rows, s, rowMax.data(), rowSum.data(), cancel))
                continue;
            for (Eigen::Index c0 = k0; c0 < k1; c0 += kPoolTileKeys) {
                const Eigen::Index cols = std::min<Eigen::Index>(kPoolTileKeys, k1 - c0);
                if (mask.tileMasked(r0, r0 + rows, c0, c0 + cols) || (cancel && cancel->load()))
                    continue; // masked weights are 0 under -inf
                scores.score(head, r0, rows, c0, cols, s);
                for (Eigen::Index r = 0; r < rows; ++r) {
                    if (rowSum[size_t(r)] <= 0)
                        continue; // nothing allowed and no sink: a zero row
                    const Eigen::Map<const Eigen::Array<float, 1, Eigen::Dynamic>> row(&s(r, 0), cols);
                    out.block(r0 - q0 + r, c0 - k0, 1, cols) =
                        softmaxWeights(row - float(rowMax[size_t(r)]), float(1.0 / rowSum[size_t(r)])).matrix();
                }
            }
        }
    }
    if (cancel && cancel->load())
        return cancelledError();
    return out;
}

Result<MatrixF> qkLogSumExp(const QkLayer &l, const std::atomic<bool> *cancel)
{
    if (Status s = validateQkLayer(l); !s)
        return s.error();
    const StructuralMask mask = maskOf(l);
    const ScoreTiles scores = scoresOf(l, mask);
    MatrixF out(l.heads, l.tq());
    const Eigen::Index blocks = (l.tq() + kRowsPerTask - 1) / kRowsPerTask, tasks = blocks * l.heads;
#pragma omp parallel
    {
        MatrixF s(kRowsPerTask, std::min(kPoolTileKeys, l.tk()));
        std::vector<double> rowMax(static_cast<size_t>(kRowsPerTask)), rowSum(static_cast<size_t>(kRowsPerTask));
#pragma omp for schedule(dynamic)
        for (Eigen::Index task = 0; task < tasks; ++task) {
            const int h = int(task / blocks);
            const Eigen::Index r0 = (task % blocks) * kRowsPerTask, rows = std::min(kRowsPerTask, l.tq() - r0);
            if (!scores.normalisers(h, r0, rows, s, rowMax.data(), rowSum.data(), cancel))
                continue;
            for (Eigen::Index r = 0; r < rows; ++r)
                out(h, r0 + r) = rowSum[size_t(r)] > 0 ? float(rowMax[size_t(r)] + std::log(rowSum[size_t(r)]))
                                                       : -std::numeric_limits<float>::infinity();
        }
    }
    if (cancel && cancel->load())
        return cancelledError();
    return out;
}

std::vector<MatrixD> referenceQkWeights(const QkLayer &l)
{
    std::vector<MatrixD> out;
    std::vector<double> logits;
    for (int h = 0; h < l.heads; ++h) {
        MatrixD w = MatrixD::Zero(l.tq(), l.tk());
        for (Eigen::Index i = 0; i < l.tq(); ++i) {
            const double lse = referenceRow(l, h, i, logits);
            if (lse == -std::numeric_limits<double>::infinity())
                continue;
            for (Eigen::Index j = 0; j < l.tk(); ++j)
                if (logits[size_t(j)] != -std::numeric_limits<double>::infinity())
                    w(i, j) = std::exp(logits[size_t(j)] - lse);
        }
        out.push_back(std::move(w));
    }
    return out;
}

PooledReference referencePooledQk(const QkLayer &l, const PoolOptions &options)
{
    // The block range as the engine reads it; the entropies take every key of a row.
    const Eigen::Index q0 = options.queryBegin, q1 = options.queryEnd < 0 ? l.tq() : options.queryEnd;
    const Eigen::Index k0 = options.keyBegin, k1 = options.keyEnd < 0 ? l.tk() : options.keyEnd;
    const Eigen::Index rows = q1 - q0, keys = k1 - k0;
    std::vector<RowPooler<double>> poolers(size_t(l.heads), RowPooler<double>(rows, keys, options.bins, options.mode));
    RowPooler<double> meanPooler(rows, keys, options.bins, options.mode);
    PooledReference result;
    result.entropy = MatrixD::Zero(l.heads, rows);
    // Streamed a chunk of rows at a time, heads in parallel: with the head mean, every head's
    // rows of the chunk are kept to be averaged (H x chunk x keys doubles, never Tq x Tk).
    const Eigen::Index chunk = options.headMean ? std::min<Eigen::Index>(rows, 64) : rows;
    MatrixD kept(options.headMean ? Eigen::Index(l.heads) * chunk : 0, keys);
    for (Eigen::Index c0 = 0; c0 < rows; c0 += chunk) {
        const Eigen::Index n = std::min(chunk, rows - c0);
#pragma omp parallel for schedule(dynamic)
        for (int h = 0; h < l.heads; ++h) {
            std::vector<double> logits, w(size_t(l.tk()));
            for (Eigen::Index r = c0; r < c0 + n; ++r) {
                const double lse = referenceRow(l, h, q0 + r, logits);
                double entropy = 0.0;
                for (Eigen::Index j = 0; j < l.tk(); ++j) {
                    const double s = logits[size_t(j)];
                    w[size_t(j)] = s == -std::numeric_limits<double>::infinity() ? 0.0 : std::exp(s - lse);
                    if (w[size_t(j)] > 0)
                        entropy -= w[size_t(j)] * std::log(w[size_t(j)]);
                }
                result.entropy(h, r) = entropy;
                poolers[size_t(h)].add(r, &w[size_t(k0)]);
                if (options.headMean)
                    kept.row(Eigen::Index(h) * chunk + (r - c0)) = Eigen::Map<const VectorD>(&w[size_t(k0)], keys);
            }
        }
        if (options.headMean)
            for (Eigen::Index r = 0; r < n; ++r) {
                VectorD sum = VectorD::Zero(keys);
                for (int h = 0; h < l.heads; ++h)
                    sum += kept.row(Eigen::Index(h) * chunk + r);
                sum /= double(l.heads);
                meanPooler.add(c0 + r, sum.data());
            }
    }
    for (const RowPooler<double> &pooler : poolers)
        result.pooled.push_back(pooler.cells());
    if (options.headMean)
        result.headMean = meanPooler.cells();
    return result;
}

MatrixD referenceQkLogSumExp(const QkLayer &l)
{
    MatrixD out(l.heads, l.tq());
    std::vector<double> logits;
    for (int h = 0; h < l.heads; ++h)
        for (Eigen::Index i = 0; i < l.tq(); ++i)
            out(h, i) = referenceRow(l, h, i, logits);
    return out;
}

} // namespace attnscope
