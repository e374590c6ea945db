#pragma once

#include "core/attention/AttentionProblem.h"

#include <cstdint>
#include <vector>

namespace attnscope {

// The positions a row stands at: the RoPE positions the project gives, else 0..T-1. In
// self-attention the keys are the query rows, so their positions default to the queries'.
std::vector<std::int64_t> queryPositions(const AttentionProblem &problem);
std::vector<std::int64_t> keyPositions(const AttentionProblem &problem);
// True when the positions are the row indices (nothing given, or given as 0..T-1).
bool positionsAreIndices(const AttentionProblem &problem);

// Why a cell is masked, the first part that forbids it in this order (for the views that
// explain a cell).
enum class MaskReason { Allowed, Causal, Window, Padding, Custom };

// The mask of design.md written once: causal, key padding, sliding window and the custom
// matrix, evaluated per cell or per tile where it is needed. Causal and the window compare
// positions (queryPositions/keyPositions). Every engine asks here, so the parts cannot drift
// between the full, pooled and GPU paths. Assumes a validated problem, which it must outlive.
class StructuralMask
{
public:
    explicit StructuralMask(const AttentionProblem &problem);
    // The mask of attention from queries and keys (QkAttention.h): causal and the window over
    // positions (empty: the row indices 0..Tq-1, 0..Tk-1), no padding, no custom matrix.
    StructuralMask(bool causal, std::int64_t window, const std::vector<std::int64_t> &queryPositions,
                   const std::vector<std::int64_t> &keyPositions, Eigen::Index tq, Eigen::Index tk);

    bool allowed(Eigen::Index i, Eigen::Index j) const { return reason(i, j) == MaskReason::Allowed; }

    MaskReason reason(Eigen::Index i, Eigen::Index j) const
    {
        const std::int64_t qp = queryPosition(i), kp = keyPosition(j);
        if (m_causal && kp > qp)
            return MaskReason::Causal;
        if (m_window > 0 && kp <= qp - m_window)
            return MaskReason::Window;
        if (m_padded[size_t(j)])
            return MaskReason::Padding;
        if (m_custom && (*m_custom)(i, j) == 0)
            return MaskReason::Custom;
        return MaskReason::Allowed;
    }

    // True when no row of [r0, r1) may see any key of [c0, c1).
    bool tileMasked(Eigen::Index r0, Eigen::Index r1, Eigen::Index c0, Eigen::Index c1) const;

    // Replaces the masked logits of row i (keys [c0, c0 + n)) by `fill`.
    void apply(Eigen::Index i, Eigen::Index c0, Eigen::Index n, float fill, float *logits) const;

    bool causal() const { return m_causal; }
    std::int64_t window() const { return m_window; }
    // Causal and the window compare row indices: they reduce to j <= i and j > i - W.
    bool byIndex() const { return m_qp.empty(); }
    std::int64_t queryPosition(Eigen::Index i) const { return m_qp.empty() ? std::int64_t(i) : m_qp[size_t(i)]; }
    std::int64_t keyPosition(Eigen::Index j) const { return m_kp.empty() ? std::int64_t(j) : m_kp[size_t(j)]; }

private:
    // Keeps positions only where they differ from the row indices (byIndex() otherwise).
    void setPositions(std::vector<std::int64_t> queryPositions, std::vector<std::int64_t> keyPositions);
    // Padding from `real` (empty: none), Tk entries.
    void setPadding(const std::vector<bool> &real, Eigen::Index tk);

    bool m_causal = false;
    std::int64_t m_window = 0;
    const MaskMatrix *m_custom = nullptr;
    std::vector<std::int64_t> m_qp, m_kp; // empty: the row indices
    bool m_keysSorted = true;             // key positions never decrease: a tile's span is its ends'
    std::vector<std::uint8_t> m_padded;
    // paddedBefore[j]: padded keys among [0, j), so a tile's padding is counted in O(1).
    std::vector<Eigen::Index> m_paddedBefore;
};

// The effective Tq by Tk "allowed" matrix: the AND of the causal, key-padding, window and
// custom parts of problem.mask (1 = query i may attend to key j). Assumes a validated problem.
MaskMatrix effectiveMask(const AttentionProblem &problem);

// true for each query row that has no allowed key.
std::vector<bool> emptyMaskRows(const MaskMatrix &allowed);

} // namespace attnscope
