#pragma once

// Checks every backend's suite runs the same way, so the CPU engine and Vulkan are held to
// one definition of design.md's semantics.

#include "ProblemCases.h"
#include "TestUtil.h"

#include "core/attention/AttentionBackend.h"
#include "core/attention/ReferenceAttention.h"

#include <QTest>

#include <string>

namespace attnscope::test {

// Empty when the backend's trace matches the double reference (see compareTrace).
inline std::string checkAgainstReference(AttentionBackend &backend, const AttentionProblem &p, bool maskedMustBeZero)
{
    auto ref = referenceAttention(p);
    if (!ref)
        return "reference: " + ref.message();
    auto trace = backend.compute(p);
    if (!trace)
        return backend.name() + ": " + trace.message();
    return compareTrace(*trace, *ref, maskedMustBeZero);
}

// Rows for fullyMaskedRows: the column "fill" (int of MaskFill).
inline void addMaskFillRows()
{
    QTest::addColumn<int>("fill");
    QTest::newRow("-inf: weights and context row exactly 0") << int(MaskFill::NegInf);
    QTest::newRow("-1e9: uniform weights") << int(MaskFill::NegLarge);
}

// A query row with no allowed key, as design.md defines it: under -inf its weights, its head
// outputs and its context row are exactly 0 (so its output is the output bias); under -1e9
// the row is uniform. Empty when that holds and everything else matches the reference.
inline std::string checkFullyMaskedRow(AttentionBackend &backend, MaskFill fill)
{
    Case c;
    c.tq = 4;
    c.custom = true; // row 1 has no allowed key
    c.biases = true;
    c.fill = fill;
    const AttentionProblem p = makeProblem(c);
    auto t = backend.compute(p);
    if (!t)
        return backend.name() + ": " + t.message();
    if (t->emptyRows != std::vector<bool>{false, true, false, false})
        return "emptyRows should flag exactly row 1";
    for (int h = 0; h < c.heads; ++h) {
        const auto row = t->weights[size_t(h)].row(1);
        for (Eigen::Index j = 0; j < row.size(); ++j) {
            const float expected = fill == MaskFill::NegInf ? 0.0f : 1.0f / float(row.size());
            if (fill == MaskFill::NegInf ? row[j] != 0.0f : std::abs(row[j] - expected) >= 1e-7f)
                return "head " + std::to_string(h) + " weight [1][" + std::to_string(j) +
                       "] = " + std::to_string(row[j]);
        }
        if (fill == MaskFill::NegInf && !(t->headOutputs[size_t(h)].row(1).array() == 0.0f).all())
            return "head " + std::to_string(h) + ": the empty row's head output is not exactly 0";
    }
    if (fill == MaskFill::NegInf) {
        if (!(t->context.row(1).array() == 0.0f).all())
            return "the empty row's context is not exactly 0";
        if (auto diff =
                compareMatrix("output row 1 (= oBias)", t->output.row(1), *p.weights.oBias, Tolerance::values());
            !diff.empty())
            return diff;
    }
    return checkAgainstReference(backend, p, fill == MaskFill::NegInf);
}

} // namespace attnscope::test
