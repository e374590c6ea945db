#include "core/attention/Mask.h"

#include <algorithm>
#include <numeric>

namespace attnscope {

namespace {

std::vector<std::int64_t> indices(Eigen::Index count)
{
    std::vector<std::int64_t> out(static_cast<size_t>(count));
    std::iota(out.begin(), out.end(), std::int64_t(0));
    return out;
}

const std::vector<std::int64_t> *givenKeyPositions(const AttentionProblem &p)
{
    if (!p.spec.rope)
        return nullptr;
    if (!p.spec.rope->keyPositions.empty())
        return &p.spec.rope->keyPositions;
    if (p.spec.mode == AttentionMode::Self && !p.spec.rope->queryPositions.empty())
        return &p.spec.rope->queryPositions;
    return nullptr;
}

// True for 0, 1, ..., n-1 (and for none).
bool isIota(const std::vector<std::int64_t> &v)
{
    for (size_t i = 0; i < v.size(); ++i)
        if (v[i] != std::int64_t(i))
            return false;
    return true;
}

} // namespace

std::vector<std::int64_t> queryPositions(const AttentionProblem &p)
{
    if (p.spec.rope && !p.spec.rope->queryPositions.empty())
        return p.spec.rope->queryPositions;
    return indices(p.tq());
}

std::vector<std::int64_t> keyPositions(const AttentionProblem &p)
{
    if (const auto *given = givenKeyPositions(p))
        return *given;
    return indices(p.tk());
}

bool positionsAreIndices(const AttentionProblem &p)
{
    if (!p.spec.rope)
        return true;
    const auto *keys = givenKeyPositions(p);
    return isIota(p.spec.rope->queryPositions) && (!keys || isIota(*keys));
}

StructuralMask::StructuralMask(const AttentionProblem &p)
    : m_causal(p.mask.causal), m_window(p.mask.window), m_custom(p.mask.allowed ? &*p.mask.allowed : nullptr)
{
    if (!positionsAreIndices(p))
        setPositions(queryPositions(p), keyPositions(p));
    setPadding(p.mask.keyPadding, p.tk());
}

StructuralMask::StructuralMask(bool causal, std::int64_t window, const std::vector<std::int64_t> &queryPositions,
                               const std::vector<std::int64_t> &keyPositions, Eigen::Index tq, Eigen::Index tk)
    : m_causal(causal), m_window(window)
{
    if (!isIota(queryPositions) || !isIota(keyPositions))
        setPositions(queryPositions.empty() ? indices(tq) : queryPositions,
                     keyPositions.empty() ? indices(tk) : keyPositions);
    setPadding({}, tk);
}

void StructuralMask::setPositions(std::vector<std::int64_t> queryPositions, std::vector<std::int64_t> keyPositions)
{
    m_qp = std::move(queryPositions);
    m_kp = std::move(keyPositions);
    m_keysSorted = std::is_sorted(m_kp.begin(), m_kp.end());
}

void StructuralMask::setPadding(const std::vector<bool> &real, Eigen::Index tk)
{
    m_padded.assign(size_t(tk), 0);
    m_paddedBefore.assign(size_t(tk) + 1, 0);
    for (Eigen::Index j = 0; j < tk; ++j) {
        m_padded[size_t(j)] = !real.empty() && !real[size_t(j)];
        m_paddedBefore[size_t(j) + 1] = m_paddedBefore[size_t(j)] + m_padded[size_t(j)];
    }
}

bool StructuralMask::tileMasked(Eigen::Index r0, Eigen::Index r1, Eigen::Index c0, Eigen::Index c1) const
{
    if (m_causal || m_window > 0) {
        std::int64_t minQ = r0, maxQ = r1 - 1, minK = c0, maxK = c1 - 1;
        if (!byIndex()) {
            const auto [qLo, qHi] = std::minmax_element(m_qp.begin() + r0, m_qp.begin() + r1);
            const auto [kLo, kHi] = std::minmax_element(m_kp.begin() + c0, m_kp.begin() + c1);
            minQ = *qLo, maxQ = *qHi, minK = *kLo, maxK = *kHi;
        }
        if (m_causal && minK > maxQ)
            return true;
        if (m_window > 0 && maxK <= minQ - m_window)
            return true;
    }
    if (m_paddedBefore[size_t(c1)] - m_paddedBefore[size_t(c0)] == c1 - c0)
        return true;
    if (m_custom)
        return (m_custom->block(r0, c0, r1 - r0, c1 - c0).array() == 0).all();
    return false;
}

void StructuralMask::apply(Eigen::Index i, Eigen::Index c0, Eigen::Index n, float fill, float *logits) const
{
    const bool anyPadding = m_paddedBefore[size_t(c0 + n)] != m_paddedBefore[size_t(c0)];
    if (!m_custom && !anyPadding && m_keysSorted) {
        // Causal and the window over ordered keys allow one run [lo, hi) of the tile.
        const std::int64_t qp = queryPosition(i);
        Eigen::Index lo = 0, hi = n;
        if (byIndex()) {
            if (m_causal)
                hi = std::clamp<Eigen::Index>(qp + 1 - c0, 0, n);
            if (m_window > 0)
                lo = std::clamp<Eigen::Index>(qp - m_window + 1 - c0, 0, n);
        } else {
            const auto first = m_kp.begin() + c0, last = first + n;
            if (m_causal)
                hi = std::upper_bound(first, last, qp) - first;
            if (m_window > 0)
                lo = std::upper_bound(first, last, qp - m_window) - first;
        }
        std::fill(logits, logits + lo, fill);
        std::fill(logits + std::max(hi, lo), logits + n, fill);
        if (hi < lo)
            std::fill(logits + hi, logits + lo, fill);
        return;
    }
    for (Eigen::Index j = 0; j < n; ++j)
        if (!allowed(i, c0 + j))
            logits[j] = fill;
}

MaskMatrix effectiveMask(const AttentionProblem &p)
{
    const Eigen::Index tq = p.tq(), tk = p.tk();
    const StructuralMask mask(p);
    MaskMatrix allowed(tq, tk);
    for (Eigen::Index i = 0; i < tq; ++i)
        for (Eigen::Index j = 0; j < tk; ++j)
            allowed(i, j) = mask.allowed(i, j) ? 1 : 0;
    return allowed;
}

std::vector<bool> emptyMaskRows(const MaskMatrix &allowed)
{
    std::vector<bool> empty(size_t(allowed.rows()));
    for (Eigen::Index i = 0; i < allowed.rows(); ++i)
        empty[size_t(i)] = (allowed.row(i).array() == 0).all();
    return empty;
}

} // namespace attnscope
