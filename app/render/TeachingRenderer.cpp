#include "app/render/TeachingRenderer.h"

#include "app/render/DisplayText.h"
#include "app/render/WeightedValues.h"
#include "core/attention/AttentionRules.h"
#include "core/attention/HeadLayout.h"
#include "core/attention/Mask.h"
#include "core/attention/Rope.h"

#include <QAbstractTextDocumentLayout>
#include <QPainter>
#include <QTextDocument>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope {

namespace {

QString num(double v)
{
    if (std::isnan(v))
        return QStringLiteral("NaN");
    if (std::isinf(v))
        return v < 0 ? QStringLiteral("-inf") : QStringLiteral("inf");
    if (v == 0.0)
        return QStringLiteral("0");
    return QString::number(v, 'g', 4);
}

// A sum printed with the digits it has (a float32 row sum is 1.00017, not "1"); seven
// significant digits are what float32 carries.
QString sumText(double v)
{
    return std::isfinite(v) ? QString::number(v, 'g', 7) : num(v);
}

QString formula(Projection p, const AttentionProblem &problem)
{
    const AttentionWeights &w = problem.weights;
    const bool bias = p == Projection::Query   ? bool(w.qBias)
                      : p == Projection::Key   ? bool(w.kBias)
                      : p == Projection::Value ? bool(w.vBias)
                                               : bool(w.oBias);
    return QString::fromStdString(projectionFormula(p, problem.spec.mode, bias, problem.hasSeparateValue()));
}

QString tokenAt(const std::vector<std::string> &tokens, Eigen::Index i)
{
    return (size_t(i) < tokens.size() ? displayText(tokens[size_t(i)]) : QString::number(i)).toHtmlEscaped();
}

// A matrix as an HTML table with its name and shape; `cell(r, c)` gives the text, `mark(r, c)`
// highlights a cell (the selected one).
template <typename Cell, typename Mark>
QString table(const QString &name, Eigen::Index rows, Eigen::Index cols, Cell cell, Mark mark, const QString &note = {},
              bool links = false)
{
    QString s = QStringLiteral("<p><b>%1</b> &nbsp;<span style='color:#555'>%2</span>%3</p>")
                    .arg(name)
                    .arg(TeachingRenderer::tr("shape %1 \u00d7 %2").arg(rows).arg(cols))
                    .arg(note.isEmpty() ? QString() : QStringLiteral(" &nbsp;<i>") + note + QStringLiteral("</i>"));
    s += QStringLiteral("<table border='1' cellspacing='0' cellpadding='3' style='border-color:#bbb'>");
    const Eigen::Index shownRows = std::min<Eigen::Index>(rows, TeachingRenderer::kMaxShown);
    const Eigen::Index shownCols = std::min<Eigen::Index>(cols, TeachingRenderer::kMaxShown);
    for (Eigen::Index r = 0; r < shownRows; ++r) {
        s += QStringLiteral("<tr>");
        for (Eigen::Index c = 0; c < shownCols; ++c)
            // nowrap: a narrow view scrolls a wide table rather than breaking a number apart.
            s += (mark(r, c) ? QStringLiteral("<td align='right' bgcolor='#ffe08a' style='white-space:nowrap'>")
                             : QStringLiteral("<td align='right' style='white-space:nowrap'>")) +
                 (links ? QStringLiteral("<a href='cell:%1,%2' style='color:black; text-decoration:none'>%3</a>")
                              .arg(r)
                              .arg(c)
                              .arg(cell(r, c))
                        : cell(r, c)) +
                 QStringLiteral("</td>");
        if (shownCols < cols)
            s += QStringLiteral("<td>\u2026</td>");
        s += QStringLiteral("</tr>");
    }
    if (shownRows < rows)
        s += QStringLiteral("<tr><td colspan='%1'>%2</td></tr>")
                 .arg(shownCols + 1)
                 .arg(TeachingRenderer::tr("\u2026 %n more rows", nullptr, int(rows - shownRows)));
    return s + QStringLiteral("</table>");
}

template <typename M>
QString matrixTable(const QString &name, const M &m, const QString &note = {}, int markRow = -1, int markCol = -1,
                    bool links = false)
{
    return table(
        name, m.rows(), m.cols(), [&](Eigen::Index r, Eigen::Index c) { return num(double(m(r, c))); },
        [&](Eigen::Index r, Eigen::Index c) { return r == markRow && (markCol < 0 || c == markCol); }, note, links);
}

// Tables of one step side by side where they fit in `room` characters (a number is about 7, a
// table's border and name a few more); else one under the other.
QString sideBySide(const QList<QPair<QString, Eigen::Index>> &tables, double room)
{
    double width = 0.0;
    for (const auto &[html, cols] : tables)
        width += double(std::min<Eigen::Index>(cols, TeachingRenderer::kMaxShown) + 1) * 7.0 + 4.0;
    QString s;
    if (room <= 0.0 || tables.size() < 2 || width > room) {
        for (const auto &[html, cols] : tables)
            s += html;
        return s;
    }
    s += QStringLiteral("<table cellspacing='0' cellpadding='0'><tr>");
    for (qsizetype k = 0; k < tables.size(); ++k)
        s += QStringLiteral("<td valign='top' style='padding-right:%1px'>").arg(k + 1 < tables.size() ? 18 : 0) +
             tables[k].first + QStringLiteral("</td>");
    return s + QStringLiteral("</tr></table>");
}

// The part of the mask that forbids a cell, in words.
QString maskReasonText(MaskReason reason, std::int64_t window)
{
    switch (reason) {
    case MaskReason::Causal:
        return TeachingRenderer::tr("causal: the key comes after the query");
    case MaskReason::Window:
        // No English catalogue is loaded: the singular is its own string.
        return window == 1 ? TeachingRenderer::tr("outside the sliding window of 1 key")
                           : TeachingRenderer::tr("outside the sliding window of %1 keys").arg(window);
    case MaskReason::Padding:
        return TeachingRenderer::tr("the key is padding");
    case MaskReason::Custom:
        return TeachingRenderer::tr("the custom mask forbids it");
    case MaskReason::Allowed:
        break;
    }
    return {};
}

} // namespace

TeachingRenderer::TeachingRenderer(const Project &project, const AttentionTrace &trace, int head, int query, int key,
                                   bool interactive)
    : m_project(project), m_trace(trace), m_interactive(interactive)
{
    // Clamped here so that every caller shows a valid cell, whatever it asked for.
    m_head = std::clamp(head, 0, std::max(0, trace.heads() - 1));
    m_query = std::clamp(query, 0, std::max(0, int(project.problem.tq()) - 1));
    m_key = std::clamp(key, 0, std::max(0, int(project.problem.tk()) - 1));
}

QString TeachingRenderer::explanation() const
{
    const AttentionTrace &t = m_trace;
    const Project &pr = m_project;
    const AttentionProblem &p = pr.problem;
    const HeadLayout layout = HeadLayout::of(p.spec);
    const int h = m_head, g = layout.kvHeadOf(h);
    const MatrixF &q = t.q[size_t(h)], &k = t.k[size_t(g)], &v = t.v[size_t(g)];
    const int i = m_query, j = m_key;
    const double scale = p.spec.scale();
    QString s = tr("<h3>Why head %1 gives query %2 \u201c%3\u201d \u2192 key %4 \u201c%5\u201d the weight %6</h3>")
                    .arg(h)
                    .arg(i)
                    .arg(tokenAt(pr.queryTokens, i))
                    .arg(j)
                    .arg(tokenAt(pr.keyLabels(), j))
                    .arg(num(t.weights[size_t(h)](i, j)));
    QStringList qv, kv, terms;
    double dot = 0.0;
    for (Eigen::Index d = 0; d < q.cols(); ++d) {
        qv << num(q(i, d));
        kv << num(k(j, d));
        terms << QStringLiteral("%1\u00b7%2").arg(num(q(i, d)), num(k(j, d)));
        dot += double(q(i, d)) * double(k(j, d));
    }
    const StructuralMask structure(p);
    if (p.spec.rope)
        s += tr("<p>1. The query row q<sub>%1</sub> = [%2] and the key row k<sub>%3</sub> = [%4], both already "
                "rotated by RoPE: the query by its position %5, the key by its position %6 (relative distance "
                "%7).</p>")
                 .arg(i)
                 .arg(qv.join(QStringLiteral(", ")))
                 .arg(j)
                 .arg(kv.join(QStringLiteral(", ")))
                 .arg(structure.queryPosition(i))
                 .arg(structure.keyPosition(j))
                 .arg(structure.queryPosition(i) - structure.keyPosition(j));
    else
        s += tr("<p>1. The query row q<sub>%1</sub> = [%2] and the key row k<sub>%3</sub> = [%4].</p>")
                 .arg(i)
                 .arg(qv.join(QStringLiteral(", ")))
                 .arg(j)
                 .arg(kv.join(QStringLiteral(", ")));
    if (layout.grouped())
        s += tr("<p>Query head %1 reads key/value head %2, which it shares with query heads %3 to %4.</p>")
                 .arg(h)
                 .arg(g)
                 .arg(layout.firstQueryHead(g))
                 .arg(layout.firstQueryHead(g) + layout.groupSize() - 1);
    s += tr("<p>2. Their dot product q\u00b7k = %1 = <b>%2</b>.</p>").arg(terms.join(QStringLiteral(" + ")), num(dot));
    if (p.spec.softcap)
        s += tr("<p>3. Scaled by %1 and soft-capped at %2: score = %2\u00b7tanh(%3 \u00d7 %1 / %2) = "
                "<b>%4</b>.</p>")
                 .arg(num(scale), num(*p.spec.softcap), num(dot), num(t.scores[size_t(h)](i, j)));
    else
        s += tr("<p>3. Scaled by %1: score = %2 \u00d7 %1 = <b>%3</b>.</p>")
                 .arg(num(scale), num(dot), num(t.scores[size_t(h)](i, j)));
    const bool allowed = !t.allowed.size() || t.allowed(i, j);
    const MaskFill fillKind = p.spec.maskFill;
    const QString fill = QString::fromLatin1(maskFillText(fillKind));
    if (!allowed)
        s += tr("<p>4. The mask forbids this cell (%1): its score becomes %2.</p>")
                 .arg(maskReasonText(structure.reason(i, j), p.mask.window), fill);
    else
        s += tr("<p>4. The mask allows this cell: the score stays.</p>");
    // The softmax over the row as core/attention/AttentionRules works it through (row maximum
    // subtracted, as the backends do); this text only phrases it.
    const MatrixF &scores = t.scores[size_t(h)];
    const double sinkValue = p.weights.sinks ? double((*p.weights.sinks)[h]) : 0.0;
    const double *sink = p.weights.sinks ? &sinkValue : nullptr;
    const SoftmaxRowSteps steps =
        softmaxRowSteps(&scores(i, 0), t.allowed.size() ? &t.allowed(i, 0) : nullptr, scores.cols(), fillKind, j, sink);
    switch (steps.rule.kind) {
    case WeightCase::EmptyRowZero:
        s += tr("<p>5. Every key of this row is masked and the fill is %1: AttnScope gives the whole row "
                "weight 0 (PyTorch would give NaN), and the row's output is 0.</p>")
                 .arg(fill);
        break;
    case WeightCase::EmptyRowUniform:
        if (!sink) {
            s += tr("<p>5. Every key of this row is masked, so every logit is the fill %1 and the softmax is "
                    "uniform: each of the %2 keys gets 1/%2 = <b>%3</b>.</p>")
                     .arg(fill)
                     .arg(scores.cols())
                     .arg(num(steps.rule.weight));
            break;
        }
        [[fallthrough]]; // with a sink the fill's logits compete with it: worked through below
    case WeightCase::Masked:
    case WeightCase::Softmax: {
        QStringList exps;
        for (Eigen::Index c = 0; c < scores.cols() && c < kMaxShown; ++c)
            exps << (c == j ? QStringLiteral("<b>%1</b>") : QStringLiteral("%1")).arg(num(steps.exps[size_t(c)]));
        if (scores.cols() > kMaxShown)
            exps << QStringLiteral("\u2026");
        if (sink)
            s += tr("<p>5. Softmax over the row and the sink %6: exp(score \u2212 row max %1) = [%2] and "
                    "exp(sink \u2212 row max) = %7, their sum %3; weight = %4 / %3 = <b>%5</b>. The sink keeps "
                    "%8 of the row, so the weights sum to %9.</p>")
                     .arg(num(steps.rowMax), exps.join(QStringLiteral(", ")), sumText(steps.sum),
                          num(steps.exps[size_t(j)]), num(steps.weight), num(sinkValue), num(steps.sinkExp),
                          num(steps.sinkShare), num(1.0 - steps.sinkShare));
        else
            s += tr("<p>5. Softmax over the row: exp(score \u2212 row max %1) = [%2], their sum %3; "
                    "weight = %4 / %3 = <b>%5</b>.</p>")
                     .arg(num(steps.rowMax), exps.join(QStringLiteral(", ")), sumText(steps.sum),
                          num(steps.exps[size_t(j)]), num(steps.weight));
        if (steps.rule.kind == WeightCase::Masked)
            s += tr("<p>A masked key's exp(%1 \u2212 row max) is 0: its weight is exactly 0.</p>").arg(fill);
        break;
    }
    }
    QStringList weighted;
    for (Eigen::Index c = 0; c < v.rows() && c < kMaxShown; ++c) {
        QStringList row;
        for (Eigen::Index d = 0; d < v.cols(); ++d)
            row << num(v(c, d));
        weighted << QStringLiteral("%1\u00b7[%2]").arg(num(t.weights[size_t(h)](i, c)), row.join(QStringLiteral(", ")));
    }
    if (v.rows() > kMaxShown)
        weighted << QStringLiteral("\u2026");
    QStringList out;
    for (Eigen::Index d = 0; d < t.headOutputs[size_t(h)].cols(); ++d)
        out << num(t.headOutputs[size_t(h)](i, d));
    s += tr("<p>6. The head's output row %1 is the weighted sum of the value rows: %2 = <b>[%3]</b>.</p>")
             .arg(i)
             .arg(weighted.join(QStringLiteral(" + ")), out.join(QStringLiteral(", ")));
    return s;
}

QString TeachingRenderer::html() const
{
    if (m_trace.heads() == 0)
        return tr("<p>Computing\u2026</p>");
    const AttentionTrace &t = m_trace;
    const Project &pr = m_project;
    const AttentionProblem &p = pr.problem;
    const int h = m_head, H = t.heads(), dK = p.spec.headDimQK, dV = p.spec.headDimV;
    const int i = m_query, j = m_key;
    QString s;
    // Heads count from 0 here as everywhere (window, figures, CLI, JSON), so the range is named.
    s += H == 1 ? tr("<h2>Head 0 (the only head), step by step</h2>")
                : tr("<h2>Head %1 of heads 0 to %2, step by step</h2>").arg(h).arg(H - 1);
    if (m_interactive)
        s += tr("<p>Select a cell in a heatmap, or click a number of a query-by-key table below, to have it "
                "explained at the end.</p>");
    s += tr("<h3>1. Inputs</h3>");
    s += matrixTable(tr("X (query input)"), p.xq, tr("Tq \u00d7 d_q"), i);
    // With a value input of its own, the other one feeds the keys alone: named for what it does.
    if (p.hasSeparateValue())
        s += matrixTable(tr("X_kv (key input)"), p.xkv, tr("Tk \u00d7 d_kv"), j);
    else if (p.spec.mode == AttentionMode::Cross)
        s += matrixTable(tr("X (key/value input)"), p.xkv, tr("Tk \u00d7 d_kv"), j);
    if (p.hasSeparateValue())
        s += matrixTable(tr("X_v (value input)"), *p.xv, tr("Tk × d_v"), j);
    s += tr("<h3>2. Projections %1, %2, %3</h3>")
             .arg(formula(Projection::Query, p), formula(Projection::Key, p), formula(Projection::Value, p));
    const HeadLayout layout = HeadLayout::of(p.spec);
    const int g = layout.kvHeadOf(h), G = layout.kvHeads;
    if (layout.grouped())
        s += tr("<p>Q: %1 \u00d7 %2 (%3 query heads), K: %4 \u00d7 %5, V: %4 \u00d7 %6 (%7 key/value heads, each "
                "shared by %8 query heads)</p>")
                 .arg(p.tq())
                 .arg(layout.queryWidth())
                 .arg(H)
                 .arg(p.tk())
                 .arg(layout.keyWidth())
                 .arg(layout.valueWidth())
                 .arg(G)
                 .arg(layout.groupSize());
    else
        s += tr("<p>Q: %1 \u00d7 %2, K: %3 \u00d7 %2, V: %3 \u00d7 %4 (all heads side by side)</p>")
                 .arg(p.tq())
                 .arg(layout.queryWidth())
                 .arg(p.tk())
                 .arg(layout.valueWidth());
    if (layout.grouped())
        s += tr("<h3>3. Split heads: head %1 takes columns %2..%3 of Q and reads key/value head %4: columns %5..%6 "
                "of K, %7..%8 of V (shared with query heads %9)</h3>")
                 .arg(h)
                 .arg(layout.queryColumn(h))
                 .arg(layout.queryColumn(h) + dK - 1)
                 .arg(g)
                 .arg(layout.keyColumn(g))
                 .arg(layout.keyColumn(g) + dK - 1)
                 .arg(layout.valueColumn(g))
                 .arg(layout.valueColumn(g) + dV - 1)
                 .arg(QStringLiteral("%1\u2013%2")
                          .arg(layout.firstQueryHead(g))
                          .arg(layout.firstQueryHead(g) + layout.groupSize() - 1));
    else
        s += tr("<h3>3. Split heads: head %1 takes columns %2..%3 of Q and K, %4..%5 of V</h3>")
                 .arg(h)
                 .arg(layout.queryColumn(h))
                 .arg(layout.queryColumn(h) + dK - 1)
                 .arg(layout.valueColumnOfHead(h))
                 .arg(layout.valueColumnOfHead(h) + dV - 1);
    const bool rope = p.spec.rope && !t.qBeforeRope.empty();
    const MatrixF &qBefore = rope ? t.qBeforeRope[size_t(h)] : t.q[size_t(h)];
    const MatrixF &kBefore = rope ? t.kBeforeRope[size_t(g)] : t.k[size_t(g)];
    s += sideBySide({{matrixTable(tr("Q_h"), qBefore, tr("Tq \u00d7 dK"), i), dK},
                     {matrixTable(tr("K_h"), kBefore, tr("Tk \u00d7 dK"), j), dK},
                     {matrixTable(tr("V_h"), t.v[size_t(g)], tr("Tk \u00d7 dV")), dV}},
                    m_room);
    if (rope) {
        // The rotation of the selected query and key rows, pair by pair.
        const StructuralMask structure(p);
        const std::int64_t qp = structure.queryPosition(i), kp = structure.keyPosition(j);
        const std::vector<double> theta = ropeFrequencies(*p.spec.rope, dK);
        s += QStringLiteral("<a name='%1'></a>").arg(kAnchorRope) +
             tr("<h3>3b. RoPE: rotate q and k by their positions</h3>");
        s += tr("<p>Dimension d is paired with d + %1; the pair turns by position \u00d7 \u03b8<sub>d</sub>, "
                "\u03b8<sub>d</sub> = %2<sup>−2d/%3</sup>. A score then depends on the query and key "
                "positions only through their difference (here %4 \u2212 %5 = %6).</p>")
                 .arg(dK / 2)
                 .arg(num(p.spec.rope->base))
                 .arg(dK)
                 .arg(qp)
                 .arg(kp)
                 .arg(qp - kp);
        const QString angles = table(
            tr("angle per pair"), Eigen::Index(theta.size()), 3,
            [&](Eigen::Index r, Eigen::Index c) {
                const double a = c == 0 ? theta[size_t(r)] : double(c == 1 ? qp : kp) * theta[size_t(r)];
                return num(a);
            },
            [](Eigen::Index, Eigen::Index) { return false; },
            tr("rows: pairs (d, d + %1); columns: \u03b8<sub>d</sub>, query %2 at %3, key %4 at %5")
                .arg(dK / 2)
                .arg(i)
                .arg(qp)
                .arg(j)
                .arg(kp));
        s += sideBySide({{matrixTable(tr("Q_h after RoPE"), t.q[size_t(h)], tr("Tq \u00d7 dK"), i), dK},
                         {matrixTable(tr("K_h after RoPE"), t.k[size_t(g)], tr("Tk \u00d7 dK"), j), dK},
                         {angles, 3}},
                        m_room);
    }
    const double scale = p.spec.scale();
    const MatrixF &scores = t.scores[size_t(h)];
    const bool links = m_interactive;
    // q·k of the cells a table shows (at most kMaxShown square), never the whole Tq x Tk product:
    // the step view is built on the GUI thread, and a project may have thousands of tokens.
    auto products = [&](const QString &name, const MatrixF &q, const MatrixF &k, double factor, bool linked) {
        return table(
            name, q.rows(), k.rows(),
            [&](Eigen::Index r, Eigen::Index c) { return num(factor * double(q.row(r).dot(k.row(c)))); },
            [&](Eigen::Index r, Eigen::Index c) { return r == i && c == j; }, tr("Tq \u00d7 Tk"), linked);
    };
    const QString qk = products(tr("Q_h\u00b7K_h\u1d40"), t.q[size_t(h)], t.k[size_t(g)], 1.0, links);
    const QString scaled = p.spec.softcap ? products(tr("scaled"), t.q[size_t(h)], t.k[size_t(g)], scale, links)
                                          : matrixTable(tr("scores"), scores, tr("Tq \u00d7 Tk"), i, j, links);
    const QString fill = QString::fromLatin1(maskFillText(p.spec.maskFill));
    const QString masked = table(
        tr("masked scores"), scores.rows(), scores.cols(),
        [&](Eigen::Index r, Eigen::Index c) {
            return (!t.allowed.size() || t.allowed(r, c)) ? num(scores(r, c)) : fill;
        },
        [&](Eigen::Index r, Eigen::Index c) { return r == i && c == j; }, tr("Tq \u00d7 Tk"), links);
    const bool sinks = bool(p.weights.sinks);
    const QString rowSums = sinks ? tr("Tq \u00d7 Tk, each row sums to 1 less the sink's share")
                            : everyRowSumsToOne(p.spec.maskFill, t.emptyRows)
                                ? tr("Tq \u00d7 Tk, rows sum to 1")
                                : tr("Tq \u00d7 Tk, rows sum to 1; rows with no allowed key are 0");
    const QString weights = matrixTable(tr("weights"), t.weights[size_t(h)], rowSums, i, j, links);
    const Eigen::Index tk = scores.cols();
    // Side by side, the steps' titles go above the row of tables; one under the other, each
    // table under its own title.
    // With a soft-cap the capping comes between scaling and the mask: one step under the other.
    const bool together =
        !p.spec.softcap &&
        sideBySide({{qk, tk}, {scaled, tk}, {masked, tk}}, m_room).startsWith(QLatin1String("<table"));
    if (together) {
        s += tr("<h3>4–6. Q_h\u00b7K_h\u1d40, scaled by %1, masked (forbidden cells become %2)</h3>")
                 .arg(num(scale), fill);
        s += sideBySide({{qk, tk}, {scaled, tk}, {masked, tk}}, m_room);
    } else {
        s += QStringLiteral("<h3>4. Q_h\u00b7K_h\u1d40</h3>") + qk;
        s += tr("<h3>5. Scaled by %1</h3>").arg(num(scale)) + scaled;
        if (p.spec.softcap) {
            s += tr("<h3>5b. Soft-capped at %1: score = %1\u00b7tanh(scaled / %1)</h3>").arg(num(*p.spec.softcap));
            s += tr("<p>Large scores flatten towards \u00b1%1, so no key can take a row over alone.</p>")
                     .arg(num(*p.spec.softcap));
            s += matrixTable(tr("scores"), scores, tr("Tq \u00d7 Tk"), i, j, links);
        }
        s += tr("<h3>6. Masked (forbidden cells become %1)</h3>").arg(fill) + masked;
    }
    if (rope) {
        if (m_interactive)
            s += QStringLiteral("<p><a href='%1'>%2</a></p>")
                     .arg(kLinkCompareRope, m_compareWithoutRope ? tr("Hide the scores without RoPE")
                                                                 : tr("Compare with the scores without RoPE"));
        if (m_compareWithoutRope) {
            s += tr("<h3>Scores with and without RoPE</h3>");
            s += sideBySide({{products(tr("scaled, with RoPE"), t.q[size_t(h)], t.k[size_t(g)], scale, false), tk},
                             {products(tr("scaled, without RoPE"), t.qBeforeRope[size_t(h)], t.kBeforeRope[size_t(g)],
                                       scale, false),
                              tk}},
                            m_room);
        }
    }
    if (sinks) {
        s += tr("<h3>7. Softmax over each row with the head's sink %1</h3>").arg(num((*p.weights.sinks)[h]));
        s += tr("<p>The sink is one more logit in every row, never masked; its share is then dropped.</p>");
        const MatrixF &w = t.weights[size_t(h)];
        const QString shares = table(
            tr("sink's share"), w.rows(), 1,
            [&](Eigen::Index r, Eigen::Index) { return num(1.0 - double(w.row(r).sum())); },
            [&](Eigen::Index r, Eigen::Index) { return r == i; }, tr("Tq \u00d7 1: 1 \u2212 row sum"));
        s += sideBySide({{weights, tk}, {shares, 1}}, m_room);
    } else {
        s += tr("<h3>7. Softmax over each row</h3>");
        s += weights;
    }
    s += tr("<h3>8. Weights\u00b7V_h</h3>");
    s += matrixTable(tr("head output"), t.headOutputs[size_t(h)], tr("Tq \u00d7 dV"), i);
    // The step view only: the tutorial's 3-D tensor would make a figure a page longer.
    if (m_interactive)
        s += WeightedValuesStep(pr, t).html();
    // No English translation is loaded: the singular is its own string, the plural takes %n
    // so that translations can give every plural form.
    s += H == 1 ? tr("<h3>9. Concatenate the heads: with one head, the context is its output</h3>")
                : tr("<h3>9. Concatenate the %n heads</h3>", nullptr, H);
    s += matrixTable(tr("context"), t.context, tr("Tq \u00d7 H·dV"), i);
    if (p.weights.o) {
        s += tr("<h3>10. Output projection %1</h3>").arg(formula(Projection::Output, p));
        s += matrixTable(tr("output"), t.output, tr("Tq \u00d7 d_out"), i);
    } else {
        s += tr("<h3>10. No W_O: the output is the context</h3>");
    }
    s += QStringLiteral("<hr/>") + explanation();
    return s;
}

std::optional<QPoint> TeachingRenderer::cellOfLink(const QString &link)
{
    if (!link.startsWith(QLatin1String("cell:")))
        return std::nullopt;
    const QStringList parts = link.mid(5).split(QLatin1Char(','));
    bool okQuery = false, okKey = false;
    const int query = parts.value(0).toInt(&okQuery), key = parts.value(1).toInt(&okKey);
    if (parts.size() != 2 || !okQuery || !okKey || query < 0 || key < 0)
        return std::nullopt;
    return QPoint(key, query);
}

std::unique_ptr<QTextDocument> TeachingRenderer::document(const QFont &font, double width) const
{
    auto doc = std::make_unique<QTextDocument>();
    doc->setDefaultFont(font);
    // Prose wraps between words only; numbers in tables do not wrap at all (nowrap cells).
    QTextOption option = doc->defaultTextOption();
    option.setWrapMode(QTextOption::WordWrap);
    doc->setDefaultTextOption(option);
    doc->setDocumentMargin(std::max(2.0, QFontMetricsF(font).height() * 0.3));
    doc->setHtml(html());
    doc->setTextWidth(width);
    return doc;
}

QSizeF TeachingRenderer::naturalSize(const QFont &font, double width) const
{
    auto doc = document(font, width);
    // Wide tables can overflow the text width: the figure grows to hold them.
    return QSizeF(std::max(width, doc->idealWidth()), doc->size().height());
}

void TeachingRenderer::paint(QPainter &painter, const QRectF &target, const QFont &font) const
{
    if (target.width() <= 0 || target.height() <= 0)
        return;
    auto doc = document(font, target.width());
    // Too tall or too wide for the target: laid out wider and scaled down as a whole, so
    // nothing is cut off (a figure of the full pipeline is tall).
    double scale = 1.0;
    for (int i = 0; i < 4; ++i) {
        const QSizeF size(std::max(doc->textWidth(), doc->idealWidth()), doc->size().height());
        const double s = std::min(target.width() / size.width(), target.height() / size.height());
        if (s >= 0.999)
            break;
        scale = std::min(scale, s);
        doc->setTextWidth(target.width() / scale);
        if (doc->size().height() * scale <= target.height() + 0.5 &&
            std::max(doc->textWidth(), doc->idealWidth()) * scale <= target.width() + 0.5)
            break;
    }
    painter.save();
    painter.translate(target.topLeft());
    painter.scale(scale, scale);
    QAbstractTextDocumentLayout::PaintContext context;
    context.palette.setColor(QPalette::Text, Qt::black);
    context.clip = QRectF(0, 0, target.width() / scale, target.height() / scale);
    painter.setClipRect(context.clip);
    doc->documentLayout()->draw(&painter, context);
    painter.restore();
}

} // namespace attnscope
