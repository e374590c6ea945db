// The edits of design.md's "Modern attention" fields: key/value heads, RoPE and its positions.
// The other edits are in ProjectEdit.cpp.

#include "app/gui/document/ProjectEdit.h"

#include "core/ErrorCode.h"

#include <QRegularExpression>

#include <algorithm>

namespace attnscope::edit {

void regroupKeyValues(AttentionProblem &p, int kvHeads, int headDimQK, int headDimV, const InitOptions &init)
{
    const AttentionSpec &s = p.spec;
    AttentionWeights &w = p.weights;
    const int oldG = s.keyValueHeads();
    w.k = regrouped(w.k, MatrixId::Wk, oldG, s.headDimQK, kvHeads, headDimQK, false, init);
    w.v = regrouped(w.v, MatrixId::Wv, oldG, s.headDimV, kvHeads, headDimV, false, init);
    // New bias blocks are 0, as a new head's (setHeads). A bias is a 1 x n matrix here.
    const InitOptions zeros{InitKind::Zeros, 0, 0.0};
    const auto regroupBias = [&](std::optional<VectorF> &bias, MatrixId id, int oldWidth, int newWidth) {
        if (bias)
            bias = VectorF(regrouped(MatrixF(*bias), id, oldG, oldWidth, kvHeads, newWidth, false, zeros).row(0));
    };
    regroupBias(w.kBias, MatrixId::BiasK, s.headDimQK, headDimQK);
    regroupBias(w.vBias, MatrixId::BiasV, s.headDimV, headDimV);
}

Project setKeyValueHeads(Project p, int kvHeads, const InitOptions &init)
{
    AttentionSpec &s = p.problem.spec;
    if (kvHeads < 1 || s.heads % kvHeads != 0 || kvHeads == s.keyValueHeads())
        return p;
    regroupKeyValues(p.problem, kvHeads, s.headDimQK, s.headDimV, init);
    s.kvHeads = kvHeads == s.heads ? 0 : kvHeads; // as the file reader stores it
    return p;
}

Project setRope(Project p, std::optional<RopeSpec> rope)
{
    p.problem.spec.rope = std::move(rope);
    return p;
}

namespace {

// The given position lists that number the query rows and the key rows (in self-attention
// the keys are the query rows: both lists, where given).
std::vector<std::vector<std::int64_t> *> positionLists(AttentionProblem &p, bool queryRows, bool keyRows)
{
    std::vector<std::vector<std::int64_t> *> lists;
    if (!p.spec.rope)
        return lists;
    if (queryRows && !p.spec.rope->queryPositions.empty())
        lists.push_back(&p.spec.rope->queryPositions);
    if (keyRows && !p.spec.rope->keyPositions.empty())
        lists.push_back(&p.spec.rope->keyPositions);
    return lists;
}

} // namespace

void insertPosition(AttentionProblem &p, bool queryRows, bool keyRows, int row)
{
    for (auto *positions : positionLists(p, queryRows, keyRows)) {
        const auto at = std::clamp<std::ptrdiff_t>(row, 0, std::ptrdiff_t(positions->size()));
        // One past the row before it: a token inserted into a sentence sits right after it.
        const std::int64_t position = at > 0 ? (*positions)[size_t(at) - 1] + 1 : 0;
        positions->insert(positions->begin() + at, position);
    }
}

void removePosition(AttentionProblem &p, bool queryRows, bool keyRows, int row)
{
    for (auto *positions : positionLists(p, queryRows, keyRows))
        if (row >= 0 && size_t(row) < positions->size())
            positions->erase(positions->begin() + row);
}

Result<std::vector<std::int64_t>> parsePositions(const QString &text, const std::string &field)
{
    static const QRegularExpression separators(QStringLiteral("[\\s,]+"));
    std::vector<std::int64_t> positions;
    const QStringList parts = text.split(separators, Qt::SkipEmptyParts);
    constexpr std::int64_t kMaxPosition = std::int64_t(1) << 40; // the file reader's bound
    for (qsizetype i = 0; i < parts.size(); ++i) {
        const std::string at = field + "[" + std::to_string(i) + "]";
        bool ok = false;
        const qlonglong v = parts[i].toLongLong(&ok);
        if (!ok || v < 0)
            return codedError("validation.position", {at, parts[i].toStdString()});
        if (v > kMaxPosition)
            return codedError("value.tooLarge", {at, parts[i].toStdString(), std::to_string(kMaxPosition)});
        positions.push_back(std::int64_t(v));
    }
    return positions;
}

QString positionsText(const std::vector<std::int64_t> &positions)
{
    QStringList parts;
    parts.reserve(qsizetype(positions.size()));
    for (const std::int64_t v : positions)
        parts << QString::number(v);
    return parts.join(QStringLiteral(", "));
}

} // namespace attnscope::edit
