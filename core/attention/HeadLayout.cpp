#include "core/attention/HeadLayout.h"

namespace attnscope {

AttentionProblem singleHeadProblem(const AttentionProblem &problem, int head)
{
    const HeadLayout layout = HeadLayout::of(problem.spec);
    const int dk = layout.headDimQK, dv = layout.headDimV;
    const Eigen::Index q = layout.queryColumn(head), k = layout.keyColumnOfHead(head),
                       v = layout.valueColumnOfHead(head);
    AttentionProblem p = problem;
    p.spec.heads = 1;
    p.spec.kvHeads = 0;
    AttentionWeights &w = p.weights;
    w.q = MatrixF(problem.weights.q.middleCols(q, dk));
    w.k = MatrixF(problem.weights.k.middleCols(k, dk));
    w.v = MatrixF(problem.weights.v.middleCols(v, dv));
    if (w.qBias)
        w.qBias = VectorF(problem.weights.qBias->segment(q, dk));
    if (w.kBias)
        w.kBias = VectorF(problem.weights.kBias->segment(k, dk));
    if (w.vBias)
        w.vBias = VectorF(problem.weights.vBias->segment(v, dv));
    if (w.sinks)
        w.sinks = VectorF::Constant(1, (*problem.weights.sinks)[head]);
    w.o.reset();
    w.oBias.reset();
    return p;
}

} // namespace attnscope
