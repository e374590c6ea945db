#include "core/attention/Mask.h"

namespace attnscope {

MaskMatrix effectiveMask(const AttentionProblem &p)
{
    const Eigen::Index tq = p.tq(), tk = p.tk();
    MaskMatrix allowed = p.mask.allowed ? *p.mask.allowed : MaskMatrix::Ones(tq, tk);
    if (p.mask.causal)
        for (Eigen::Index i = 0; i < tq; ++i)
            for (Eigen::Index j = i + 1; j < tk; ++j)
                allowed(i, j) = 0;
    if (!p.mask.keyPadding.empty())
        for (Eigen::Index j = 0; j < tk; ++j)
            if (!p.mask.keyPadding[size_t(j)])
                allowed.col(j).setZero();
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
