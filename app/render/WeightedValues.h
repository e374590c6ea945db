#pragma once

#include "core/attention/AttentionTrace.h"
#include "core/formats/ProjectFile.h"

#include <QCoreApplication>
#include <QString>

#include <cstdint>
#include <vector>

namespace attnscope {

// A tensor printed as PyTorch prints it (`print(t)` with the default options): nested brackets,
// the slices of a 3-D tensor separated by a blank line, every number in one format chosen for
// the whole tensor (integers as "2.", else 4 decimals, scientific when the magnitudes span more
// than 1000× or one is below 1e-4), right-aligned to a common width, rows wrapped at 80
// columns. `values` are row-major in `shape`; no elision (callers keep to kTorchPrintThreshold).
QString torchTensorText(const std::vector<float> &values, const std::vector<std::int64_t> &shape);

// PyTorch prints up to this many numbers in full, and elides the rest.
constexpr std::int64_t kTorchPrintThreshold = 1000;

// The worked example's "weighted values" step, as the self-attention tutorial computes it:
// `values[:, None] * softmax.T[:, :, None]`, a Tk × Tq × dV tensor whose [j, i, :] is
// weights(i, j) · V[j], then its sum over j, which is the head output. Shown for one unbatched
// head with at most kTorchPrintThreshold numbers; otherwise a line saying why it is not.
class WeightedValuesStep
{
    Q_DECLARE_TR_FUNCTIONS(TeachingRenderer)

public:
    WeightedValuesStep(const Project &project, const AttentionTrace &trace);

    bool shown() const { return m_shown; }
    // The tensor [Tk, Tq, dV] and its sum over j [Tq, dV], row-major, in float32 as PyTorch.
    const std::vector<float> &tensor() const { return m_tensor; }
    const std::vector<float> &sum() const { return m_sum; }
    QString html() const;

private:
    const Project &m_project;
    const AttentionTrace &m_trace;
    bool m_shown = false;
    std::int64_t m_tk = 0, m_tq = 0, m_dv = 0;
    std::vector<float> m_tensor, m_sum;
};

} // namespace attnscope
