#include "core/attention/CpuBackend.h"

#include "core/Gemm.h"
#include "core/SimdClones.h"
#include "core/attention/CpuThreads.h"
#include "core/attention/HeadLayout.h"
#include "core/attention/Mask.h"
#include "core/attention/Rope.h"
#include "core/attention/Validation.h"
#include "core/io/MemoryLimits.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace attnscope {

namespace {

// Query rows per task. Every task re-packs K_h and V_h for its two GEMMs (sgemm packs its
// operands on each call), so the larger the block the less that packing costs; the softmax
// works a row at a time, which stays in L1 whatever the block. Aim for about 4 MiB of scores
// (at T = 4096, 256 rows instead of 64 cut a one-thread compute by 7 %; 1 to 4 MiB measured the
// same at T = 1024 and 2048), while leaving every thread a few tasks.
constexpr Eigen::Index kScoresBlockBytes = 4 << 20;
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

// The softmax's three passes over a row, written as plain loops the compiler vectorises, and
// compiled for three instruction sets (core/SimdClones.h): the portable build is SSE2-only, where
// Eigen's exp took a quarter of a large compute.

ATTNSCOPE_SIMD_CLONES float rowMax(const float *x, Eigen::Index n)
{
    float m = -std::numeric_limits<float>::infinity();
#pragma omp simd reduction(max : m)
    for (Eigen::Index j = 0; j < n; ++j)
        m = x[j] > m ? x[j] : m; // as a comparison, not std::max: GCC 12 vectorises only this
    return m;
}

// out[j] = exp(x[j] - shift) for x[j] <= shift, returning their sum. Cephes' expf, as Eigen's
// pexp has it (within 1 ulp of exp): n = round(x·log2 e), r = x - n·ln 2 in two parts, a degree-6
// polynomial for e^r, 2^n put into the exponent bits. Below -87.3 (2^-126) the result is 0.
ATTNSCOPE_SIMD_CLONES float expShiftedSum(const float *x, float shift, float *out, Eigen::Index n)
{
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (Eigen::Index j = 0; j < n; ++j) {
        const float a = x[j] - shift;
        const float c = std::max(a, -87.3f);
        constexpr float kRound = 12582912.0f; // 1.5·2^23: adding it rounds to an integer
        const float k = (c * 1.44269504088896341f + kRound) - kRound;
        const float r = (c - k * 0.693359375f) + k * 2.12194440e-4f;
        float p = 1.9875691500e-4f;
        p = p * r + 1.3981999507e-3f;
        p = p * r + 8.3334519073e-3f;
        p = p * r + 4.1665795894e-2f;
        p = p * r + 1.6666665459e-1f;
        p = p * r + 5.0000001201e-1f;
        p = p * r * r + r + 1.0f;
        const std::int32_t bits = (std::int32_t(k) + 127) << 23;
        float scaleBy;
        std::memcpy(&scaleBy, &bits, sizeof scaleBy);
        const float e = a < -87.3f ? 0.0f : p * scaleBy;
        out[j] = e;
        sum += e;
    }
    return sum;
}

ATTNSCOPE_SIMD_CLONES void scaleRow(float *x, float factor, Eigen::Index n)
{
#pragma omp simd
    for (Eigen::Index j = 0; j < n; ++j)
        x[j] *= factor;
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
        maxLogit = rowMax(scores + span.lo, len);
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
    float bodySum = expShiftedSum(scores + span.lo, maxLogit, out + span.lo, len);
    if (!span.dense) {
        auto body = o.segment(span.lo, len);
        for (Eigen::Index j = 0; j < len; ++j)
            if (!allowed[span.lo + j])
                body[j] = maskedTerm;
        bodySum = body.sum(); // masked entries inside the span are part of body
    }
    const float sum = bodySum + maskedTerm * float(n - len) + (sink ? std::exp(*sink - maxLogit) : 0.0f);
    if (maskedTerm == 0.0f) // the zeros outside the span stay exactly 0
        scaleRow(out + span.lo, 1.0f / sum, len);
    else
        scaleRow(out, 1.0f / sum, n);
    return maskedTerm != 0.0f;
}

} // namespace

void maskedSoftmaxRow(const float *scores, const std::uint8_t *allowed, Eigen::Index n, MaskFill fill, float *out,
                      const float *sink)
{
    MaskMatrix row = Eigen::Map<const MaskMatrix>(allowed, 1, n);
    (void)softmaxRow(scores, allowed, rowSpans(row).front(), n, fill, sink, out);
}

void siluInPlace(float *x, Eigen::Index n)
{
    // exp(-x) by expShiftedSum (exp(a - 0) for a <= 0 there; above 0 it holds up to 88), in
    // slices. Below x = -88, x·sigmoid(x) is under 1e-36: -0, as x / (1 + inf) gives.
    constexpr Eigen::Index kSlice = 1024;
    float e[kSlice];
    for (Eigen::Index from = 0; from < n; from += kSlice) {
        const Eigen::Index len = std::min(kSlice, n - from);
        float *v = x + from;
        for (Eigen::Index j = 0; j < len; ++j)
            e[j] = std::min(-v[j], 88.0f);
        (void)expShiftedSum(e, 0.0f, e, len);
        for (Eigen::Index j = 0; j < len; ++j)
            v[j] = v[j] < -88.0f ? -0.0f : v[j] / (1.0f + e[j]);
    }
}

void applySoftcap(float cap, Eigen::Ref<MatrixF> scores)
{
    scores = (scores.array() * (1.0f / cap)).tanh() * cap;
}

void projectRows(const ConstMatrixViewF &x, const MatrixF &w, const std::optional<VectorF> &bias, MatrixF &y)
{
    y.resize(x.rows(), w.cols());
    parallelGemm(x, w, y, omp_get_max_threads());
    if (bias)
        y.rowwise() += *bias;
}

void projectQueriesAndKeys(const AttentionProblem &p, Eigen::Index q0, Eigen::Index q1, MatrixF &q, MatrixF &k,
                           std::vector<MatrixF> *qBefore, std::vector<MatrixF> *kBefore)
{
    const HeadLayout layout = HeadLayout::of(p.spec);
    projectRows(p.xq.middleRows(q0, q1 - q0), p.weights.q, p.weights.qBias, q);
    projectRows(p.keyInput(), p.weights.k, p.weights.kBias, k);
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
    const std::vector<std::int64_t> all = queryPositions(p);
    const std::vector<std::int64_t> rows(all.begin() + q0, all.begin() + q1);
    applyRope(q, ropeTable(rows, *p.spec.rope, dk), layout.heads, dk);
    applyRope(k, ropeTable(keyPositions(p), *p.spec.rope, dk), layout.kvHeads, dk);
}

void projectAndRotate(const AttentionProblem &p, MatrixF &q, MatrixF &k, MatrixF &v, std::vector<MatrixF> *qBefore,
                      std::vector<MatrixF> *kBefore)
{
    projectQueriesAndKeys(p, 0, p.tq(), q, k, qBefore, kBefore);
    projectRows(p.valueInput(), p.weights.v, p.weights.vBias, v);
}

CpuBackend::CpuBackend(int threads) : m_threads(threads > 0 ? threads : omp_get_max_threads())
{
    initGemm();
    keepFreedMemoryForReuse();
}

CpuBackend::~CpuBackend() = default;

std::string CpuBackend::deviceName() const
{
    return gemmBackendName() + " on CPU (" + std::to_string(m_threads) + (m_threads == 1 ? " thread)" : " threads)");
}

void CpuBackend::recycle(AttentionTrace &&trace)
{
    const std::unique_lock lock(m_workspaceMutex, std::try_to_lock);
    if (lock.owns_lock())
        m_workspace.spare = std::move(trace);
}

namespace {

// Sizes every per-head matrix of a trace for this compute. Matrices a recycled trace brought
// keep their storage where the element count is the same, so the maps are written into memory
// that is already mapped; every element is overwritten below, none is read first.
void shapeTrace(AttentionTrace &t, const HeadLayout &layout, Eigen::Index tq, Eigen::Index tk, bool keepScores)
{
    const size_t heads = size_t(layout.heads), kvHeads = size_t(layout.kvHeads);
    t.q.resize(heads);
    t.k.resize(kvHeads);
    t.v.resize(kvHeads);
    t.scores.resize(keepScores ? heads : 0);
    t.weights.resize(heads);
    t.headOutputs.resize(heads);
    for (size_t h = 0; h < heads; ++h) {
        t.q[h].resize(tq, layout.headDimQK);
        if (keepScores)
            t.scores[h].resize(tq, tk);
        t.weights[h].resize(tq, tk);
        t.headOutputs[h].resize(tq, layout.headDimV);
    }
    for (size_t g = 0; g < kvHeads; ++g) {
        t.k[g].resize(tk, layout.headDimQK);
        t.v[g].resize(tk, layout.headDimV);
    }
    t.qBeforeRope.clear();
    t.kBeforeRope.clear();
    t.emptyRows.clear();
}

} // namespace

Result<AttentionTrace> CpuBackend::compute(const AttentionProblem &p)
{
    if (Status s = validateProblem(p); !s)
        return s.error();

    // The workspace serves one compute at a time; a second one running on this backend at the
    // same moment (two GUI jobs sharing it) works in buffers of its own.
    std::unique_lock lock(m_workspaceMutex, std::try_to_lock);
    CpuWorkspace own;
    CpuWorkspace &work = lock.owns_lock() ? m_workspace : own;

    const HeadLayout layout = HeadLayout::of(p.spec);
    const int heads = layout.heads, dk = layout.headDimQK, dv = layout.headDimV;
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

    AttentionTrace t = std::move(work.spare);
    work.spare = {};
    shapeTrace(t, layout, tq, tk, p.keepScores);
    t.allowed = effectiveMask(p);
    t.emptyRows = emptyMaskRows(t.allowed);
    const std::vector<RowSpan> spans = rowSpans(t.allowed);

    projectAndRotate(p, work.q, work.k, work.v, &t.qBeforeRope, &t.kBeforeRope);
    for (int h = 0; h < heads; ++h)
        t.q[size_t(h)] = work.q.middleCols(layout.queryColumn(h), dk);
    for (int g = 0; g < layout.kvHeads; ++g) {
        t.k[size_t(g)] = work.k.middleCols(layout.keyColumn(g), dk);
        t.v[size_t(g)] = work.v.middleCols(layout.valueColumn(g), dv);
    }
    const std::optional<float> softcap =
        p.spec.softcap ? std::optional<float>(float(*p.spec.softcap)) : std::optional<float>();

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
        // Without kept scores they are written where the weights go and the softmax runs in
        // place (it reads a row's scores only inside its span, each before it writes there), and
        // only the columns some row of the block may attend to are computed.
        MatrixF &scoresOf = p.keepScores ? t.scores[h] : t.weights[h];
        Eigen::Index s0 = 0, s1 = tk;
        if (!p.keepScores) {
            s0 = tk;
            s1 = 0;
            for (Eigen::Index i = r0; i < r0 + rows; ++i)
                if (spans[size_t(i)].hi > spans[size_t(i)].lo) {
                    s0 = std::min(s0, spans[size_t(i)].lo);
                    s1 = std::max(s1, spans[size_t(i)].hi);
                }
        }
        auto weights = t.weights[h].middleRows(r0, rows);
        if (s1 > s0) {
            auto scores = scoresOf.block(r0, s0, rows, s1 - s0);
            // The scale rides on the GEMM (alpha): no scaled copy of Q, no transposed copy of K.
            gemm(t.q[h].middleRows(r0, rows), GemmOp::None, t.k[g].middleRows(s0, s1 - s0), GemmOp::Transpose, scores,
                 scale);
            if (softcap)
                applySoftcap(*softcap, scores);
        }
        const float *sink = p.weights.sinks ? &(*p.weights.sinks)[Eigen::Index(h)] : nullptr;

        Eigen::Index c0 = tk, c1 = 0;
        for (Eigen::Index i = r0; i < r0 + rows; ++i) {
            const RowSpan &span = spans[size_t(i)];
            const bool touchesAll =
                softmaxRow(&scoresOf(i, 0), &t.allowed(i, 0), span, tk, fill, sink, &t.weights[h](i, 0));
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
            gemm(weights.middleCols(c0, c1 - c0), t.v[g].middleRows(c0, c1 - c0), out);
        else
            out.setZero();
        reportProgress(double(tasksDone.fetch_add(1, std::memory_order_relaxed) + 1) / double(tasks));
    }

    if (cancelled())
        return cancelledError;

    t.context.resize(tq, layout.contextWidth());
    for (int h = 0; h < heads; ++h)
        t.context.middleCols(layout.contextColumn(h), dv) = t.headOutputs[size_t(h)];
    if (p.weights.o) {
        projectRows(t.context, *p.weights.o, p.weights.oBias, t.output);
    } else {
        t.output = t.context;
    }
    return t;
}

} // namespace attnscope
