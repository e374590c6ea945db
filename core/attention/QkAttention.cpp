#include "core/attention/QkAttention.h"

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

} // namespace

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
    const std::vector<MatrixD> weights = referenceQkWeights(l);
    PooledReference result;
    result.entropy = MatrixD::Zero(l.heads, l.tq());
    MatrixD sum = MatrixD::Zero(l.tq(), l.tk());
    for (int h = 0; h < l.heads; ++h) {
        const MatrixD &w = weights[size_t(h)];
        result.pooled.push_back(poolWeights(w, options.bins, options.mode));
        for (Eigen::Index i = 0; i < w.rows(); ++i)
            for (Eigen::Index j = 0; j < w.cols(); ++j)
                if (w(i, j) > 0)
                    result.entropy(h, i) -= w(i, j) * std::log(w(i, j));
        if (options.headMean)
            sum += w;
    }
    if (options.headMean)
        result.headMean = poolWeights(sum / double(l.heads), options.bins, options.mode);
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
