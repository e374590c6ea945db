#include "app/cli/TracePrinter.h"

#include "core/attention/AttentionRules.h"
#include "core/attention/HeadLayout.h"

#include <algorithm>
#include <cmath>

namespace attnscope {

namespace {

// A value as printed; NaN and Inf (an overflow) are spelled so that they cannot be taken for
// numbers or lost among them.
QString number(double v, int precision)
{
    if (std::isnan(v))
        return QStringLiteral("NaN");
    if (std::isinf(v))
        return v > 0 ? QStringLiteral("+Inf") : QStringLiteral("-Inf");
    return QString::number(v, 'f', precision);
}

QString formula(Projection p, AttentionMode mode, bool bias, bool separateValue = false)
{
    return QString::fromStdString(projectionFormula(p, mode, bias, separateValue));
}

QString shape(const MatrixF &m)
{
    return QStringLiteral("[%1 x %2]").arg(m.rows()).arg(m.cols());
}

void section(QTextStream &out, const QString &title, const MatrixF &m, const std::vector<std::string> &labels,
             int precision)
{
    out << "\n" << title << "  " << shape(m) << "\n";
    printMatrix(out, m, labels, precision);
}

} // namespace

void printMatrix(QTextStream &out, const MatrixF &m, const std::vector<std::string> &rowLabels, int precision,
                 Eigen::Index maxRows, Eigen::Index maxCols)
{
    int labelWidth = 0;
    for (const auto &l : rowLabels)
        labelWidth = std::max(labelWidth, int(QString::fromStdString(l).size()));
    const Eigen::Index rows = std::min(m.rows(), maxRows), cols = std::min(m.cols(), maxCols);
    for (Eigen::Index r = 0; r < rows; ++r) {
        out << "  ";
        if (labelWidth > 0)
            out << QString::fromStdString(size_t(r) < rowLabels.size() ? rowLabels[size_t(r)] : "")
                       .leftJustified(labelWidth)
                << "  ";
        for (Eigen::Index c = 0; c < cols; ++c)
            out << number(double(m(r, c)), precision).rightJustified(precision + 6);
        if (cols < m.cols())
            out << "  ... (" << m.cols() - cols << " more)";
        out << "\n";
    }
    if (rows < m.rows())
        out << "  ... (" << m.rows() - rows << " more rows)\n";
}

void printPipeline(QTextStream &out, const Project &project, const AttentionTrace &t, int precision)
{
    const AttentionProblem &p = project.problem;
    const auto &qLabels = project.queryTokens;
    const auto &kLabels = project.keyLabels();
    const bool cross = p.spec.mode == AttentionMode::Cross;
    out << (project.title.empty() ? QStringLiteral("(untitled)") : QString::fromStdString(project.title)) << "\n";
    const HeadLayout layout = HeadLayout::of(p.spec);
    out << (cross ? "cross" : "self") << "-attention, " << p.spec.heads << (p.spec.heads == 1 ? " head" : " heads")
        << ", dK = " << p.spec.headDimQK << ", dV = " << p.spec.headDimV << ", scale = " << p.spec.scale() << "\n";
    if (layout.grouped())
        out << layout.kvHeads << (layout.kvHeads == 1 ? " key/value head" : " key/value heads") << ": each read by "
            << layout.groupSize() << " query heads" << (layout.kvHeads == 1 ? " (multi-query)" : " (grouped-query)")
            << "\n";
    if (p.spec.rope)
        out << "RoPE: base " << p.spec.rope->base << ", dimension i turns with i + " << p.spec.headDimQK / 2
            << " by position * base^(-2i/" << p.spec.headDimQK << ")\n";
    if (p.mask.window > 0)
        out << "sliding window: " << p.mask.window << " keys (key j allowed for query i when j > i - " << p.mask.window
            << ")\n";
    if (p.spec.softcap)
        out << "soft-cap: scores become " << *p.spec.softcap << "*tanh(scores/" << *p.spec.softcap << ")\n";

    section(out, QStringLiteral("Xq (query input)"), p.xq, qLabels, precision);
    if (cross)
        section(out, QStringLiteral("Xkv (key/value input)"), p.xkv, kLabels, precision);
    if (p.hasSeparateValue())
        section(out, QStringLiteral("Xv (value input)"), *p.xv, kLabels, precision);
    const bool rope = !t.qBeforeRope.empty();
    for (int h = 0; h < t.heads(); ++h) {
        const size_t i = size_t(h);
        const int g = layout.kvHeadOf(h);
        const QString head = t.heads() > 1 ? QStringLiteral(" (head %1)").arg(h) : QString();
        const QString kvHead = layout.grouped() ? QStringLiteral(" (key/value head %1, read by heads %2-%3)")
                                                      .arg(g)
                                                      .arg(layout.firstQueryHead(g))
                                                      .arg(layout.firstQueryHead(g) + layout.groupSize() - 1)
                                                : head;
        const AttentionMode mode = p.spec.mode;
        const QString q = formula(Projection::Query, mode, bool(p.weights.qBias));
        if (rope) {
            section(out, q + QStringLiteral(" (before RoPE)") + head, t.qBeforeRope[i], qLabels, precision);
            section(out, QStringLiteral("Q = RoPE(Q)") + head, t.q[i], qLabels, precision);
        } else {
            section(out, q + head, t.q[i], qLabels, precision);
        }
        // A key/value head is printed with the first query head that reads it.
        if (h == layout.firstQueryHead(g)) {
            const QString k = formula(Projection::Key, mode, bool(p.weights.kBias));
            if (rope) {
                section(out, k + QStringLiteral(" (before RoPE)") + kvHead, t.kBeforeRope[size_t(g)], kLabels,
                        precision);
                section(out, QStringLiteral("K = RoPE(K)") + kvHead, t.k[size_t(g)], kLabels, precision);
            } else {
                section(out, k + kvHead, t.k[size_t(g)], kLabels, precision);
            }
            section(out, formula(Projection::Value, mode, bool(p.weights.vBias), p.hasSeparateValue()) + kvHead,
                    t.v[size_t(g)], kLabels, precision);
        } else {
            out << "\nK, V" << head << ": those of key/value head " << g << " (above)\n";
        }
        const QString scores =
            p.spec.softcap ? QStringLiteral("scores = %1*tanh(Q·Kᵀ · %2 / %1)").arg(*p.spec.softcap).arg(p.spec.scale())
                           : QStringLiteral("scores = Q·Kᵀ · %1").arg(p.spec.scale());
        section(out, scores + head, t.scores[i], qLabels, precision);
        const QString weights =
            p.weights.sinks ? QStringLiteral("weights = softmax(masked scores, sink %1), the sink's share dropped")
                                  .arg(double((*p.weights.sinks)[Eigen::Index(h)]))
                            : QStringLiteral("weights = softmax(masked scores)");
        section(out, weights + head, t.weights[i], qLabels, precision);
        section(out, QStringLiteral("head output = weights·V") + head, t.headOutputs[i], qLabels, precision);
    }
    if (!(t.allowed.array() != 0).all()) {
        section(out, QStringLiteral("allowed mask (1 = may attend)"), t.allowed.cast<float>(), qLabels, 0);
    }
    for (size_t i = 0; i < t.emptyRows.size(); ++i) {
        if (!t.emptyRows[i])
            continue;
        const WeightRule rule = weightRule(p.spec.maskFill, false, true, p.tk());
        out << "note: query row " << i << " (" << QString::fromStdString(i < qLabels.size() ? qLabels[i] : "")
            << ") has no allowed key: ";
        if (rule.kind == WeightCase::EmptyRowUniform)
            out << "every logit is the fill " << maskFillText(p.spec.maskFill) << ", so its weights are uniform, 1/"
                << p.tk() << " = " << QString::number(rule.weight, 'g', 4) << "\n";
        else
            out << "with the fill " << maskFillText(p.spec.maskFill)
                << " its weights are 0 and its output row is 0 (PyTorch gives NaN)\n";
    }
    if (t.heads() > 1)
        section(out, QStringLiteral("context = concat(head outputs)"), t.context, qLabels, precision);
    if (p.weights.o)
        section(out, formula(Projection::Output, p.spec.mode, bool(p.weights.oBias)), t.output, qLabels, precision);
}

} // namespace attnscope
