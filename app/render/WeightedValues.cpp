#include "app/render/WeightedValues.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attnscope {

namespace {

// torch/_tensor_str.py's _Formatter for a floating tensor, with its default print options
// (precision 4, linewidth 80): one mode for the whole tensor, every number right-aligned to
// the widest one.
class TorchFormatter
{
public:
    explicit TorchFormatter(const std::vector<float> &values)
    {
        double minAbs = INFINITY, maxAbs = 0.0;
        bool any = false;
        for (float f : values) {
            const double v = f;
            if (!std::isfinite(v) || v == 0.0)
                continue;
            any = true;
            minAbs = std::min(minAbs, std::abs(v));
            maxAbs = std::max(maxAbs, std::abs(v));
            if (v != std::ceil(v))
                m_intMode = false;
        }
        if (!any)
            return; // only zeros and non-finite numbers: integer mode, as PyTorch
        if (m_intMode)
            m_sciMode = maxAbs / minAbs > 1000.0 || maxAbs > 1.0e8;
        else
            m_sciMode = maxAbs / minAbs > 1000.0 || maxAbs > 1.0e8 || minAbs < 1.0e-4;
        for (float f : values) {
            const double v = f;
            if (!std::isfinite(v) || v == 0.0)
                continue;
            const qsizetype width = m_sciMode   ? print("%.4e", v).size()
                                    : m_intMode ? print("%.0f", v).size() + 1
                                                : print("%.4f", v).size();
            m_width = std::max(m_width, width);
        }
    }

    QString format(float f) const
    {
        const double v = f;
        QString s;
        if (std::isnan(v))
            s = QStringLiteral("nan");
        else if (std::isinf(v))
            s = v < 0 ? QStringLiteral("-inf") : QStringLiteral("inf");
        else if (m_sciMode)
            s = print("%.4e", v);
        else if (m_intMode)
            s = print("%.0f", v) + QLatin1Char('.');
        else
            s = print("%.4f", v);
        return QString(std::max<qsizetype>(0, m_width - s.size()), QLatin1Char(' ')) + s;
    }

    qsizetype width() const { return m_width; }

private:
    static QString print(const char *format, double v)
    {
        char buffer[64];
        std::snprintf(buffer, sizeof buffer, format, v);
        return QString::fromLatin1(buffer);
    }

    bool m_intMode = true;
    bool m_sciMode = false;
    qsizetype m_width = 1;
};

constexpr int kLineWidth = 80;

// _tensor_str_with_formatter: a vector on lines of as many numbers as fit in 80 columns,
// higher dimensions as their slices joined by ",", dim-1 newlines and the indent.
QString nested(const std::vector<float> &values, const std::vector<std::int64_t> &shape, size_t dim,
               std::int64_t offset, int indent, const TorchFormatter &formatter)
{
    if (dim + 1 == shape.size()) {
        const int perLine = std::max(1, int((kLineWidth - indent) / (formatter.width() + 2)));
        QStringList lines, line;
        for (std::int64_t c = 0; c < shape[dim]; ++c) {
            line << formatter.format(values[size_t(offset + c)]);
            if (line.size() == perLine) {
                lines << line.join(QStringLiteral(", "));
                line.clear();
            }
        }
        if (!line.isEmpty())
            lines << line.join(QStringLiteral(", "));
        return QLatin1Char('[') + lines.join(QStringLiteral(",\n") + QString(indent + 1, QLatin1Char(' '))) +
               QLatin1Char(']');
    }
    std::int64_t stride = 1;
    for (size_t d = dim + 1; d < shape.size(); ++d)
        stride *= shape[d];
    QStringList slices;
    for (std::int64_t i = 0; i < shape[dim]; ++i)
        slices << nested(values, shape, dim + 1, offset + i * stride, indent + 1, formatter);
    const int remaining = int(shape.size() - dim);
    return QLatin1Char('[') +
           slices.join(QLatin1Char(',') + QString(remaining - 1, QLatin1Char('\n')) +
                       QString(indent + 1, QLatin1Char(' '))) +
           QLatin1Char(']');
}

} // namespace

QString torchTensorText(const std::vector<float> &values, const std::vector<std::int64_t> &shape)
{
    const TorchFormatter formatter(values);
    const QString prefix = QStringLiteral("tensor(");
    return prefix + nested(values, shape, 0, 0, int(prefix.size()), formatter) + QLatin1Char(')');
}

WeightedValuesStep::WeightedValuesStep(const Project &project, const AttentionTrace &trace)
    : m_project(project), m_trace(trace)
{
    if (trace.heads() != 1 || project.batch || trace.v.empty())
        return;
    const MatrixF &v = trace.v[0];
    const MatrixF &w = trace.weights[0];
    m_tk = v.rows();
    m_tq = w.rows();
    m_dv = v.cols();
    if (m_tk * m_tq * m_dv > kTorchPrintThreshold || w.cols() != m_tk)
        return;
    m_shown = true;
    // As the tutorial's broadcast does it, in float32: [j, i, :] = softmax[i, j] · values[j].
    m_tensor.resize(size_t(m_tk * m_tq * m_dv));
    m_sum.assign(size_t(m_tq * m_dv), 0.0f);
    for (std::int64_t j = 0; j < m_tk; ++j)
        for (std::int64_t i = 0; i < m_tq; ++i)
            for (std::int64_t d = 0; d < m_dv; ++d) {
                const float x = w(i, j) * v(j, d);
                m_tensor[size_t((j * m_tq + i) * m_dv + d)] = x;
                m_sum[size_t(i * m_dv + d)] += x;
            }
}

QString WeightedValuesStep::html() const
{
    if (!m_shown) {
        if (m_trace.heads() != 1 || m_project.batch)
            return tr(
                "<p><i>The tutorial's 3-D weighted values tensor (softmax[i, j] \u00b7 V[j] for every query i "
                "and key j) is shown only for a project of one head and one sequence, as in the tutorial.</i></p>");
        return tr("<p><i>The tutorial's 3-D weighted values tensor is not shown: its %1 numbers are more than the "
                  "%2 that PyTorch prints in full.</i></p>")
            .arg(m_tk * m_tq * m_dv)
            .arg(kTorchPrintThreshold);
    }
    double largest = 0.0;
    const MatrixF &out = m_trace.headOutputs[0];
    for (std::int64_t i = 0; i < m_tq; ++i)
        for (std::int64_t d = 0; d < m_dv; ++d)
            largest = std::max(largest, std::abs(double(m_sum[size_t(i * m_dv + d)]) - double(out(i, d))));
    auto pre = [](const QString &text) {
        return QStringLiteral("<pre style='margin-left:1em'>") + text.toHtmlEscaped() + QStringLiteral("</pre>");
    };
    QString s = QStringLiteral("<a name='weighted-values'></a>") +
                tr("<h3>8\u2032. The tutorial's way: weighted values[j, i, :] = softmax[i, j] \u00b7 V[j] "
                   "(shape [Tk, Tq, dV] = [%1, %2, %3])</h3>")
                    .arg(m_tk)
                    .arg(m_tq)
                    .arg(m_dv);
    s += tr("<p>The tutorial computes <code>weighted_values = values[:, None] * softmax.T[:, :, None]</code>: "
            "slice j holds value row V[j] scaled by each query's weight for key j. PyTorch prints it as:</p>");
    s += pre(torchTensorText(m_tensor, {m_tk, m_tq, m_dv}));
    s += tr("<p>Summing over j, <code>outputs = weighted_values.sum(dim=0)</code>, gives the head output: row i "
            "is \u03a3<sub>j</sub> softmax[i, j] \u00b7 V[j] (shape [Tq, dV] = [%1, %2]).</p>")
             .arg(m_tq)
             .arg(m_dv);
    s += pre(torchTensorText(m_sum, {m_tq, m_dv}));
    s += tr("<p>This sum is the head output of step 8 (largest difference %1).</p>")
             .arg(QString::number(largest, 'g', 3));
    return s;
}

} // namespace attnscope
