#include "core/attention/CpuBackend.h"

#include "core/attention/CpuThreads.h"
#include "core/attention/HeadLayout.h"
#include "core/attention/Mask.h"
#include "core/attention/Rope.h"
#include "core/attention/Validation.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope {

namespace {

// Query rows per task. The block's scores (rows x Tk floats) should stay in L2 between the
// scores GEMM, the softmax and the weights·V GEMM, but every task also re-packs K_h and V_h
// for its two GEMMs, so the larger the block the less that packing costs: aim for about
// 1 MiB of scores, while leaving every thread a few tasks.
constexpr Eigen::Index kScoresBlockBytes = 1 << 20;
constexpr Eigen::Index kMinRowBlock = 32, kMaxRowBlock = 512;

Eigen::Index rowBlock(Eigen::Index tq, Eigen::Index tk, int heads, int threads)
{
    Eigen::Index rows = std::clamp<Eigen::Index>(kScoresBlockBytes / (4 * tk), kMinRowBlock, kMaxRowBlock);
    while (rows > kMinRowBlock && heads * ((tq + rows - 1) / rows) < 4 * threads)
        rows /= 2;
    return rows;
}
// Below this much arithmetic a compute runs on one thread.
constexpr double kParallelFlops = 4e6;

using ArrayF = Eigen::Array<float, 1, Eigen::Dynamic>;

MatrixF project(const MatrixF &x, const MatrixF &w, const std::optional<VectorF> &bias)
{
    MatrixF y(x.rows(), w.cols());
    y.noalias() = x * w;
    if (bias)
        y.rowwise() += *bias;
    return y;
}

// The columns a row may attend to lie in [lo, hi); dense means every one of them is allowed
// (true for no mask, causal and trailing padding: the fast path).
struct RowSpan {
    Eigen::Index lo = 0, hi = 0;
    bool dense = true;
};

std::vector<RowSpan> rowSpans(const MaskMatrix &allowed)
{
    std::vector<RowSpan> spans(size_t(allowed.rows()));
    for (Eigen::Index i = 0; i < allowed.rows(); ++i) {
        const std::uint8_t *a = &allowed(i, 0);
        Eigen::Index lo = 0, hi = allowed.cols();
        while (lo < hi && !a[lo])
            ++lo;
        while (hi > lo && !a[hi - 1])
            --hi;
        bool dense = std::all_of(a + lo, a + hi, [](std::uint8_t x) { return x != 0; });
        spans[size_t(i)] = {lo, hi, dense};
    }
    return spans;
}

// Returns whether masked entries got a non-zero weight (only under -1e9 fill, in practice
// only for rows with no allowed key), so weights·V must read every key for this row.
// sink (may be null): one more logit that joins the softmax and whose share is dropped.
bool softmaxRow(const float *scores, const std::uint8_t *allowed, const RowSpan &span, Eigen::Index n, MaskFill fill,
                const float *sink, float *out)
{
    const bool negLarge = fill == MaskFill::NegLarge;
    const Eigen::Index allowedCount =
        span.dense ? span.hi - span.lo
                   : std::count_if(allowed + span.lo, allowed + span.hi, [](std::uint8_t x) { return x != 0; });
    Eigen::Map<ArrayF> o(out, n);
    if (allowedCount == 0) {
        // -inf: nothing to attend to gives a zero row. -1e9: every logit equals the fill,
        // so the ordinary softmax is uniform, less the sink's share where there is one.
        if (!negLarge) {
            o.setZero();
            return false;
        }
        if (!sink) {
            o.setConstant(1.0f / float(n));
            return true;
        }
        const float m = std::max(float(kNegLargeFill), *sink), term = std::exp(float(kNegLargeFill) - m);
        o.setConstant(term / (float(n) * term + std::exp(*sink - m)));
        return term != 0.0f;
    }
    const Eigen::Index len = span.hi - span.lo;
    Eigen::Map<const ArrayF> s(scores + span.lo, len);
    float maxLogit;
    if (span.dense) {
        maxLogit = s.maxCoeff();
    } else {
        maxLogit = -std::numeric_limits<float>::infinity();
        for (Eigen::Index j = 0; j < len; ++j)
            if (allowed[span.lo + j])
                maxLogit = std::max(maxLogit, s[j]);
    }
    if (sink)
        maxLogit = std::max(maxLogit, *sink);
    const bool anyMasked = allowedCount < n;
    // Masked logits under -1e9 take part in the max and the sum like any other logit.
    float maskedTerm = 0.0f;
    if (negLarge && anyMasked) {
        maxLogit = std::max(maxLogit, float(kNegLargeFill));
        maskedTerm = std::exp(float(kNegLargeFill) - maxLogit);
    }

    o.head(span.lo).setConstant(maskedTerm);
    o.tail(n - span.hi).setConstant(maskedTerm);
    auto body = o.segment(span.lo, len);
    body = (s - maxLogit).exp();
    if (!span.dense)
        for (Eigen::Index j = 0; j < len; ++j)
            if (!allowed[span.lo + j])
                body[j] = maskedTerm;
    // Masked entries inside the span are already part of body.
    const float sum = body.sum() + maskedTerm * float(n - len) + (sink ? std::exp(*sink - maxLogit) : 0.0f);
    o *= 1.0f / sum;
    return maskedTerm != 0.0f;
}

} // namespace

void maskedSoftmaxRow(const float *scores, const std::uint8_t *allowed, Eigen::Index n, MaskFill fill, float *out,
                      const float *sink)
{
    MaskMatrix row = Eigen::Map<const MaskMatrix>(allowed, 1, n);
    (void)softmaxRow(scores, allowed, rowSpans(row).front(), n, fill, sink, out);
}

void applySoftcap(float cap, Eigen::Ref<MatrixF> scores)
{
    scores = (scores.array() * (1.0f / cap)).tanh() * cap;
}

void projectAndRotate(const AttentionProblem &p, MatrixF &q, MatrixF &k, MatrixF &v, std::vector<MatrixF> *qBefore,
                      std::vector<MatrixF> *kBefore)
{
    const HeadLayout layout = HeadLayout::of(p.spec);
    q = project(p.xq, p.weights.q, p.weights.qBias);
    k = project(p.keyInput(), p.weights.k, p.weights.kBias);
    v = project(p.valueInput(), p.weights.v, p.weights.vBias);
    const int dk = layout.headDimQK;
    if (p.weights.qNorm)
        applyHeadNorm(q, *p.weights.qNorm, layout.heads, dk, p.spec.qkNormEps);
    if (p.weights.kNorm)
        applyHeadNorm(k, *p.weights.kNorm, layout.kvHeads, dk, p.spec.qkNormEps);
    if (!p.spec.rope)
        return;
    if (qBefore)
        for (int h = 0; h < layout.heads; ++h)
            qBefore->push_back(q.middleCols(layout.queryColumn(h), dk));
    if (kBefore)
        for (int g = 0; g < layout.kvHeads; ++g)
            kBefore->push_back(k.middleCols(layout.keyColumn(g), dk));
    applyRope(q, ropeTable(queryPositions(p), *p.spec.rope, dk), layout.heads, dk);
    applyRope(k, ropeTable(keyPositions(p), *p.spec.rope, dk), layout.kvHeads, dk);
}

CpuBackend::CpuBackend(int threads) : m_threads(threads > 0 ? threads : omp_get_max_threads()) {}

std::string CpuBackend::deviceName() const
{
    return "Eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
           std::to_string(EIGEN_MINOR_VERSION) + " on CPU (" + std::to_string(m_threads) +
           (m_threads == 1 ? " thread)" : " threads)");
}

Result<AttentionTrace> CpuBackend::compute(const AttentionProblem &p)
{
    if (Status s = validateProblem(p); !s)
        return s.error();

    const HeadLayout layout = HeadLayout::of(p.spec);
    const int heads = layout.heads, kvHeads = layout.kvHeads, dk = layout.headDimQK, dv = layout.headDimV;
    const Eigen::Index tq = p.tq(), tk = p.tk();
    // Teaching-size problems finish in microseconds; waking a second thread costs more than
    // it saves, and far more when the other core is busy (a typing user, a compile).
    const double flops = 2.0 * double(tq) * double(tk) * heads * (dk + dv) +
                         2.0 * double(tq + 2 * tk) * double(std::max(p.dq(), p.dkv())) * double(p.qkWidth());
    const int threads = flops < kParallelFlops ? 1 : m_threads;
    const ScopedCpuThreads cpuThreads(threads); // this thread's own setting, never a global
    const float scale = float(p.spec.scale());
    const MaskFill fill = p.spec.maskFill;
    auto cancelled = [this] { return cancelRequested(); };
    const Error cancelledError{"the computation was cancelled", ErrorKind::Cancelled};
    if (cancelled())
        return cancelledError;

    AttentionTrace t;
    t.allowed = effectiveMask(p);
    t.emptyRows = emptyMaskRows(t.allowed);
    const std::vector<RowSpan> spans = rowSpans(t.allowed);

    {
        MatrixF q, k, v;
        projectAndRotate(p, q, k, v, &t.qBeforeRope, &t.kBeforeRope);
        t.q.resize(size_t(heads));
        t.k.resize(size_t(kvHeads));
        t.v.resize(size_t(kvHeads));
        for (int h = 0; h < heads; ++h)
            t.q[size_t(h)] = q.middleCols(layout.queryColumn(h), dk);
        for (int g = 0; g < kvHeads; ++g) {
            t.k[size_t(g)] = k.middleCols(layout.keyColumn(g), dk);
            t.v[size_t(g)] = v.middleCols(layout.valueColumn(g), dv);
        }
    }
    const std::optional<float> softcap =
        p.spec.softcap ? std::optional<float>(float(*p.spec.softcap)) : std::optional<float>();

    t.scores.resize(size_t(heads));
    t.weights.resize(size_t(heads));
    t.headOutputs.resize(size_t(heads));
    for (int h = 0; h < heads; ++h) {
        t.scores[size_t(h)].resize(tq, tk);
        t.weights[size_t(h)].resize(tq, tk);
        t.headOutputs[size_t(h)].resize(tq, dv);
    }

    const Eigen::Index blockRows = rowBlock(tq, tk, heads, threads);
    const Eigen::Index blocks = (tq + blockRows - 1) / blockRows;
    const Eigen::Index tasks = Eigen::Index(heads) * blocks;
    std::atomic<Eigen::Index> tasksDone{0};
    reportProgress(0.0);
#pragma omp parallel for schedule(dynamic) num_threads(threads)
    for (Eigen::Index task = 0; task < tasks; ++task) {
        // An OpenMP loop cannot be left early: once cancelled, the remaining tasks return at once.
        if (cancelled())
            continue;
        const size_t h = size_t(task / blocks), g = size_t(layout.kvHeadOf(int(h)));
        const Eigen::Index r0 = (task % blocks) * blockRows;
        const Eigen::Index rows = std::min(blockRows, tq - r0);
        auto scores = t.scores[h].middleRows(r0, rows);
        auto weights = t.weights[h].middleRows(r0, rows);
        scores.noalias() = (scale * t.q[h].middleRows(r0, rows)) * t.k[g].transpose();
        if (softcap)
            applySoftcap(*softcap, scores);
        const float *sink = p.weights.sinks ? &(*p.weights.sinks)[Eigen::Index(h)] : nullptr;

        Eigen::Index c0 = tk, c1 = 0;
        for (Eigen::Index i = r0; i < r0 + rows; ++i) {
            const RowSpan &span = spans[size_t(i)];
            const bool touchesAll =
                softmaxRow(&t.scores[h](i, 0), &t.allowed(i, 0), span, tk, fill, sink, &t.weights[h](i, 0));
            if (touchesAll) {
                c0 = 0;
                c1 = tk;
            } else if (span.hi > span.lo) {
                c0 = std::min(c0, span.lo);
                c1 = std::max(c1, span.hi);
            }
        }
        auto out = t.headOutputs[h].middleRows(r0, rows);
        if (c1 > c0)
            out.noalias() = weights.middleCols(c0, c1 - c0) * t.v[g].middleRows(c0, c1 - c0);
        else
            out.setZero();
        reportProgress(double(tasksDone.fetch_add(1, std::memory_order_relaxed) + 1) / double(tasks));
    }

    if (cancelled())
        return cancelledError;

    t.context.resize(tq, layout.contextWidth());
    for (int h = 0; h < heads; ++h)
        t.context.middleCols(layout.contextColumn(h), dv) = t.headOutputs[size_t(h)];
    if (p.weights.o)
        t.output = project(t.context, *p.weights.o, p.weights.oBias);
    else
        t.output = t.context;
    return t;
}

} // namespace attnscope
