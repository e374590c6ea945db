#include "core/attention/ReferenceAttention.h"

#include "core/attention/Mask.h"
#include "core/attention/Validation.h"

#include <cmath>
#include <limits>

namespace attnscope {

namespace {

MatrixD project(const MatrixD &x, const MatrixF &w, const std::optional<VectorF> &bias)
{
    MatrixD y = x * w.cast<double>();
    if (bias)
        y.rowwise() += bias->cast<double>();
    return y;
}

} // namespace

void referenceMaskedSoftmax(const double *scores, const std::uint8_t *allowed, Eigen::Index n, MaskFill fill,
                            double *out)
{
    double maxLogit = -std::numeric_limits<double>::infinity();
    for (Eigen::Index j = 0; j < n; ++j) {
        const double logit = allowed[j] ? scores[j] : (fill == MaskFill::NegLarge ? kNegLargeFill : -INFINITY);
        maxLogit = std::max(maxLogit, logit);
    }
    if (std::isinf(maxLogit)) { // -inf fill and no allowed key
        for (Eigen::Index j = 0; j < n; ++j)
            out[j] = 0.0;
        return;
    }
    double sum = 0.0;
    for (Eigen::Index j = 0; j < n; ++j) {
        const double logit = allowed[j] ? scores[j] : (fill == MaskFill::NegLarge ? kNegLargeFill : -INFINITY);
        out[j] = std::exp(logit - maxLogit);
        sum += out[j];
    }
    for (Eigen::Index j = 0; j < n; ++j)
        out[j] /= sum;
}

Result<ReferenceTrace> referenceAttention(const AttentionProblem &p)
{
    if (Status s = validateProblem(p); !s)
        return s.error();

    const int heads = p.spec.heads, dk = p.spec.headDimQK, dv = p.spec.headDimV;
    const Eigen::Index tq = p.tq(), tk = p.tk();
    const MatrixD xq = p.xq.cast<double>();
    const MatrixD xkv = p.keyInput().cast<double>();

    const MatrixD q = project(xq, p.weights.q, p.weights.qBias);
    const MatrixD k = project(xkv, p.weights.k, p.weights.kBias);
    const MatrixD v = project(p.valueInput().cast<double>(), p.weights.v, p.weights.vBias);

    ReferenceTrace t;
    t.allowed = effectiveMask(p);
    t.emptyRows = emptyMaskRows(t.allowed);
    t.context = MatrixD::Zero(tq, p.vWidth());
    const double scale = p.spec.scale();

    for (int h = 0; h < heads; ++h) {
        MatrixD qh = q.middleCols(h * dk, dk), kh = k.middleCols(h * dk, dk), vh = v.middleCols(h * dv, dv);
        MatrixD scores(tq, tk);
        for (Eigen::Index i = 0; i < tq; ++i)
            for (Eigen::Index j = 0; j < tk; ++j) {
                double dot = 0.0;
                for (int c = 0; c < dk; ++c)
                    dot += qh(i, c) * kh(j, c);
                scores(i, j) = scale * dot;
            }
        MatrixD weights(tq, tk);
        for (Eigen::Index i = 0; i < tq; ++i)
            referenceMaskedSoftmax(&scores(i, 0), &t.allowed(i, 0), tk, p.spec.maskFill, &weights(i, 0));
        MatrixD out = weights * vh;
        t.context.middleCols(h * dv, dv) = out;
        t.q.push_back(std::move(qh));
        t.k.push_back(std::move(kh));
        t.v.push_back(std::move(vh));
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
