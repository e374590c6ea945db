#include "core/attention/ReferenceAttention.h"

#include "core/attention/Validation.h"

#include <cmath>
#include <limits>

namespace attnscope {

namespace {

// Written from design.md and Hugging Face's eager attention (repeat_kv, rotate_half, the
// sliding-window mask, soft-capping, sinks), on purpose without the helpers the float engines
// share (HeadLayout, StructuralMask, Rope), so that a mistake there shows up against it.

MatrixD project(const MatrixD &x, const MatrixF &w, const std::optional<VectorF> &bias)
{
    MatrixD y = x * w.cast<double>();
    if (bias)
        y.rowwise() += bias->cast<double>();
    return y;
}

std::vector<double> positionsOr(const std::vector<std::int64_t> &given, Eigen::Index rows)
{
    std::vector<double> out(static_cast<size_t>(rows));
    for (Eigen::Index r = 0; r < rows; ++r)
        out[size_t(r)] = given.empty() ? double(r) : double(given[size_t(r)]);
    return out;
}

// x*cos + rotate_half(x)*sin, rotate_half(x) = cat(-x[d/2:], x[:d/2]), with
// cos/sin = cat(freqs, freqs)·scaling and freqs = p * inv_freq, inv_freq = base^(-2i/d) unless
// the spec gives it: one head, every row.
MatrixD rotate(const MatrixD &x, const std::vector<double> &positions, const RopeSpec &rope)
{
    const Eigen::Index d = x.cols(), half = d / 2;
    MatrixD out(x.rows(), d);
    for (Eigen::Index r = 0; r < x.rows(); ++r)
        for (Eigen::Index c = 0; c < d; ++c) {
            const Eigen::Index i = c % half;
            const double invFreq = rope.frequencies.empty() ? 1.0 / std::pow(rope.base, double(2 * i) / double(d))
                                                            : rope.frequencies[size_t(i)];
            const double angle = positions[size_t(r)] * invFreq;
            const double rotated = c < half ? -x(r, c + half) : x(r, c - half);
            out(r, c) = (x(r, c) * std::cos(angle) + rotated * std::sin(angle)) * rope.scaling;
        }
    return out;
}

// transformers' Qwen3RMSNorm over one head's vectors: x / sqrt(mean(x²) + eps) * w, per row.
MatrixD rmsNormRows(const MatrixD &x, const VectorF &weight, double eps)
{
    MatrixD out(x.rows(), x.cols());
    for (Eigen::Index r = 0; r < x.rows(); ++r) {
        const double meanSquare = x.row(r).squaredNorm() / double(x.cols());
        for (Eigen::Index c = 0; c < x.cols(); ++c)
            out(r, c) = x(r, c) / std::sqrt(meanSquare + eps) * double(weight(c));
    }
    return out;
}

} // namespace

void referenceMaskedSoftmax(const double *scores, const std::uint8_t *allowed, Eigen::Index n, MaskFill fill,
                            double *out, const double *sink)
{
    auto logit = [&](Eigen::Index j) {
        return allowed[j] ? scores[j] : (fill == MaskFill::NegLarge ? kNegLargeFill : -INFINITY);
    };
    double maxLogit = sink ? *sink : -std::numeric_limits<double>::infinity();
    for (Eigen::Index j = 0; j < n; ++j)
        maxLogit = std::max(maxLogit, logit(j));
    if (std::isinf(maxLogit)) { // -inf fill, no allowed key and no sink
        for (Eigen::Index j = 0; j < n; ++j)
            out[j] = 0.0;
        return;
    }
    double sum = sink ? std::exp(*sink - maxLogit) : 0.0;
    for (Eigen::Index j = 0; j < n; ++j) {
        out[j] = std::exp(logit(j) - maxLogit);
        sum += out[j];
    }
    for (Eigen::Index j = 0; j < n; ++j)
        out[j] /= sum; // the sink's own share is dropped
}

Result<ReferenceTrace> referenceAttention(const AttentionProblem &p)
{
    if (Status s = validateProblem(p); !s)
        return s.error();

    const int heads = p.spec.heads, dk = p.spec.headDimQK, dv = p.spec.headDimV;
    const int kvHeads = p.spec.kvHeads > 0 ? p.spec.kvHeads : heads;
    const int repeats = heads / kvHeads; // repeat_kv's n_rep
    const Eigen::Index tq = p.tq(), tk = p.tk();
    const MatrixD xq = p.xq.cast<double>();
    const MatrixD xkv = p.keyInput().cast<double>();

    const MatrixD q = project(xq, p.weights.q, p.weights.qBias);
    const MatrixD k = project(xkv, p.weights.k, p.weights.kBias);
    const MatrixD v = project(p.valueInput().cast<double>(), p.weights.v, p.weights.vBias);

    const auto *rope = p.spec.rope ? &*p.spec.rope : nullptr;
    const std::vector<std::int64_t> none;
    const std::vector<double> qPos = positionsOr(rope ? rope->queryPositions : none, tq);
    const std::vector<std::int64_t> &keyGiven =
        !rope ? none
              : (!rope->keyPositions.empty() || p.spec.mode == AttentionMode::Cross ? rope->keyPositions
                                                                                    : rope->queryPositions);
    const std::vector<double> kPos = positionsOr(keyGiven, tk);

    ReferenceTrace t;
    t.allowed = MaskMatrix::Ones(tq, tk);
    for (Eigen::Index i = 0; i < tq; ++i)
        for (Eigen::Index j = 0; j < tk; ++j) {
            bool ok = !p.mask.allowed || (*p.mask.allowed)(i, j) != 0;
            if (p.mask.causal && kPos[size_t(j)] > qPos[size_t(i)])
                ok = false;
            if (p.mask.window > 0 && qPos[size_t(i)] - kPos[size_t(j)] >= double(p.mask.window))
                ok = false;
            if (!p.mask.keyPadding.empty() && !p.mask.keyPadding[size_t(j)])
                ok = false;
            t.allowed(i, j) = ok ? 1 : 0;
        }
    t.emptyRows.resize(size_t(tq));
    for (Eigen::Index i = 0; i < tq; ++i)
        t.emptyRows[size_t(i)] = (t.allowed.row(i).array() == 0).all();
    t.context = MatrixD::Zero(tq, MatrixD::Index(heads) * dv);
    const double scale = p.spec.scale();

    for (int g = 0; g < kvHeads; ++g) {
        MatrixD kg = k.middleCols(g * dk, dk);
        if (p.weights.kNorm)
            kg = rmsNormRows(kg, *p.weights.kNorm, p.spec.qkNormEps);
        if (rope) {
            t.kBeforeRope.push_back(kg);
            kg = rotate(kg, kPos, *rope);
        }
        t.k.push_back(std::move(kg));
        t.v.push_back(v.middleCols(g * dv, dv));
    }
    for (int h = 0; h < heads; ++h) {
        MatrixD qh = q.middleCols(h * dk, dk);
        if (p.weights.qNorm)
            qh = rmsNormRows(qh, *p.weights.qNorm, p.spec.qkNormEps);
        if (rope) {
            t.qBeforeRope.push_back(qh);
            qh = rotate(qh, qPos, *rope);
        }
        const MatrixD &kh = t.k[size_t(h / repeats)], &vh = t.v[size_t(h / repeats)];
        MatrixD scores(tq, tk);
        for (Eigen::Index i = 0; i < tq; ++i)
            for (Eigen::Index j = 0; j < tk; ++j) {
                double dot = 0.0;
                for (int c = 0; c < dk; ++c)
                    dot += qh(i, c) * kh(j, c);
                double s = scale * dot;
                if (p.spec.softcap)
                    s = *p.spec.softcap * std::tanh(s / *p.spec.softcap);
                scores(i, j) = s;
            }
        const double sink = p.weights.sinks ? double((*p.weights.sinks)[h]) : 0.0;
        MatrixD weights(tq, tk);
        for (Eigen::Index i = 0; i < tq; ++i)
            referenceMaskedSoftmax(&scores(i, 0), &t.allowed(i, 0), tk, p.spec.maskFill, &weights(i, 0),
                                   p.weights.sinks ? &sink : nullptr);
        MatrixD out = weights * vh;
        t.context.middleCols(h * dv, dv) = out;
        t.q.push_back(std::move(qh));
        t.scores.push_back(std::move(scores));
        t.weights.push_back(std::move(weights));
        t.headOutputs.push_back(std::move(out));
    }

    if (p.weights.o) {
        t.output = t.context * p.weights.o->cast<double>();
        if (p.weights.oBias)
            t.output.rowwise() += p.weights.oBias->cast<double>();
    } else {
        t.output = t.context;
    }
    return t;
}

} // namespace attnscope
