#include "core/attention/TraceCheck.h"

#include <cmath>

namespace attnscope {

namespace {

// Counts the non-finite values of m and records the first one in the report, if it is the
// first seen at all.
void scan(const MatrixF &m, const char *name, int head, NonFiniteReport &report)
{
    const float *data = m.data();
    const std::int64_t n = m.size();
    for (std::int64_t i = 0; i < n; ++i) {
        if (std::isfinite(data[i]))
            continue;
        if (report.count == 0) {
            report.tensor = name;
            report.head = head;
            report.row = i / m.cols();
            report.col = i % m.cols();
        }
        ++report.count;
        report.nanCount += std::isnan(data[i]) ? 1 : 0;
    }
}

} // namespace

NonFiniteReport findNonFinite(const AttentionTrace &t)
{
    NonFiniteReport report;
    const struct {
        const std::vector<MatrixF> *tensors;
        const char *name;
    } perHead[] = {{&t.q, "q"},
                   {&t.k, "k"},
                   {&t.v, "v"},
                   {&t.scores, "scores"},
                   {&t.weights, "weights"},
                   {&t.headOutputs, "headOutputs"}};
    for (const auto &[tensors, name] : perHead)
        for (size_t h = 0; h < tensors->size(); ++h)
            scan((*tensors)[h], name, int(h), report);
    scan(t.context, "context", -1, report);
    scan(t.output, "output", -1, report);
    return report;
}

NonFiniteReport findNonFinite(const std::vector<MatrixF> &perHead, const char *name)
{
    NonFiniteReport report;
    for (size_t h = 0; h < perHead.size(); ++h)
        scan(perHead[h], name, int(h), report);
    return report;
}

Status checkFinite(const AttentionTrace &trace)
{
    const NonFiniteReport r = findNonFinite(trace);
    if (!r.any())
        return Ok{};
    std::string where = r.tensor;
    if (r.head >= 0)
        where += " (head " + std::to_string(r.head) + ")";
    where += " [" + std::to_string(r.row) + "][" + std::to_string(r.col) + "]";
    return Error{"result: " + std::to_string(r.count) + " values are not finite, the first in " + where +
                     "; the inputs are finite, so the arithmetic overflowed float32 (make the inputs, "
                     "weights or scale smaller)",
                 ErrorKind::NonFinite};
}

} // namespace attnscope
