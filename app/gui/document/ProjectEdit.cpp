#include "app/gui/document/ProjectEdit.h"

#include <QCoreApplication>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>

namespace attnscope {

namespace {

MatrixF asMatrix(const VectorF &v)
{
    return MatrixF(v);
}

VectorF asVector(const MatrixF &m)
{
    return VectorF(m.row(0));
}

std::optional<VectorF> *biasOf(Project &p, MatrixId id)
{
    AttentionWeights &w = p.problem.weights;
    switch (id) {
    case MatrixId::BiasQ:
        return &w.qBias;
    case MatrixId::BiasK:
        return &w.kBias;
    case MatrixId::BiasV:
        return &w.vBias;
    case MatrixId::BiasO:
        return &w.oBias;
    case MatrixId::Sinks:
        return &w.sinks;
    default:
        return nullptr;
    }
}

MatrixF *denseOf(Project &p, MatrixId id)
{
    AttentionProblem &pr = p.problem;
    switch (id) {
    case MatrixId::Xq:
        return &pr.xq;
    case MatrixId::Xkv:
        return pr.spec.mode == AttentionMode::Cross ? &pr.xkv : &pr.xq;
    case MatrixId::Xv:
        return pr.hasSeparateValue() ? &*pr.xv : nullptr;
    case MatrixId::Wq:
        return &pr.weights.q;
    case MatrixId::Wk:
        return &pr.weights.k;
    case MatrixId::Wv:
        return &pr.weights.v;
    case MatrixId::Wo:
        return pr.weights.o ? &*pr.weights.o : nullptr;
    default:
        return nullptr;
    }
}

const MatrixF *denseOf(const Project &p, MatrixId id)
{
    return denseOf(const_cast<Project &>(p), id);
}

const std::optional<VectorF> *biasOf(const Project &p, MatrixId id)
{
    return biasOf(const_cast<Project &>(p), id);
}

InitOptions zeros()
{
    return InitOptions{InitKind::Zeros, 0, 0.0};
}

// Applies f to a bias as a 1 x n matrix, if present.
template <typename F>
void withBias(std::optional<VectorF> &bias, F f)
{
    if (bias)
        bias = asVector(f(asMatrix(*bias)));
}

MaskMatrix resizedMask(const MaskMatrix &m, Eigen::Index rows, Eigen::Index cols)
{
    MaskMatrix out = MaskMatrix::Ones(rows, cols);
    const Eigen::Index r = std::min(rows, m.rows()), c = std::min(cols, m.cols());
    out.topLeftCorner(r, c) = m.topLeftCorner(r, c);
    return out;
}

template <typename M>
M insertRow(const M &m, Eigen::Index at, const M &row)
{
    M out(m.rows() + 1, m.cols());
    out.topRows(at) = m.topRows(at);
    out.row(at) = row.row(0);
    out.bottomRows(m.rows() - at) = m.bottomRows(m.rows() - at);
    return out;
}

template <typename M>
M removeRow(const M &m, Eigen::Index at)
{
    M out(m.rows() - 1, m.cols());
    out.topRows(at) = m.topRows(at);
    out.bottomRows(m.rows() - at - 1) = m.bottomRows(m.rows() - at - 1);
    return out;
}

MaskMatrix insertMaskCol(const MaskMatrix &m, Eigen::Index at)
{
    MaskMatrix t = m.transpose();
    return insertRow<MaskMatrix>(t, at, MaskMatrix::Ones(1, m.rows())).transpose();
}

MaskMatrix removeMaskCol(const MaskMatrix &m, Eigen::Index at)
{
    MaskMatrix t = m.transpose();
    return removeRow<MaskMatrix>(t, at).transpose();
}

} // namespace

QString matrixName(MatrixId id)
{
    switch (id) {
    case MatrixId::Xq:
        return QCoreApplication::translate("attnscope::Matrix", "X (query)");
    case MatrixId::Xkv:
        return QCoreApplication::translate("attnscope::Matrix", "X (key/value)");
    case MatrixId::Xv:
        return QCoreApplication::translate("attnscope::Matrix", "X (value)");
    case MatrixId::Wq:
        return QStringLiteral("W_Q");
    case MatrixId::Wk:
        return QStringLiteral("W_K");
    case MatrixId::Wv:
        return QStringLiteral("W_V");
    case MatrixId::Wo:
        return QStringLiteral("W_O");
    case MatrixId::BiasQ:
        return QStringLiteral("b_Q");
    case MatrixId::BiasK:
        return QStringLiteral("b_K");
    case MatrixId::BiasV:
        return QStringLiteral("b_V");
    case MatrixId::BiasO:
        return QStringLiteral("b_O");
    case MatrixId::Sinks:
        return QCoreApplication::translate("attnscope::Matrix", "Sinks");
    }
    return {};
}

bool matrixExists(const Project &project, MatrixId id)
{
    if (id == MatrixId::Xkv)
        return project.problem.spec.mode == AttentionMode::Cross;
    if (auto *b = biasOf(project, id))
        return b->has_value();
    return denseOf(project, id) != nullptr;
}

Eigen::Index matrixRows(const Project &project, MatrixId id)
{
    if (!matrixExists(project, id))
        return 0;
    if (biasOf(project, id))
        return 1;
    return denseOf(project, id)->rows();
}

Eigen::Index matrixCols(const Project &project, MatrixId id)
{
    if (!matrixExists(project, id))
        return 0;
    if (auto *b = biasOf(project, id))
        return (*b)->cols();
    return denseOf(project, id)->cols();
}

float matrixValue(const Project &project, MatrixId id, Eigen::Index row, Eigen::Index col)
{
    if (auto *b = biasOf(project, id))
        return (**b)(col);
    return (*denseOf(project, id))(row, col);
}

void setMatrixValue(Project &project, MatrixId id, Eigen::Index row, Eigen::Index col, float value)
{
    if (auto *b = biasOf(project, id))
        (**b)(col) = value;
    else
        (*denseOf(project, id))(row, col) = value;
}

namespace edit {

std::uint64_t fillSeed(std::uint64_t seed, MatrixId id, FillRegion region, std::int64_t index, std::int64_t extent)
{
    // SplitMix64's finaliser over each part in turn: a change in any part changes the seed.
    auto mix = [](std::uint64_t z) {
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    };
    std::uint64_t h = mix(seed + 0x9e3779b97f4a7c15ULL);
    for (const std::uint64_t part :
         {std::uint64_t(id) + 1, std::uint64_t(region), std::uint64_t(index), std::uint64_t(extent)})
        h = mix(h ^ (part + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)));
    return h;
}

MatrixF fillBlock(Eigen::Index rows, Eigen::Index cols, Eigen::Index fanRows, Eigen::Index fanCols,
                  const InitOptions &init, std::uint64_t seed)
{
    switch (init.kind) {
    case InitKind::Xavier: {
        // initMatrix scales by the block's own fan; rescale to the whole matrix's.
        MatrixF m = initMatrix(rows, cols, InitKind::Xavier, seed);
        const double k = std::sqrt(double(rows + cols) / double(std::max<Eigen::Index>(fanRows + fanCols, 1)));
        return m * float(k);
    }
    case InitKind::Kaiming:
        return initMatrix(rows, cols, InitKind::Gaussian, seed,
                          std::sqrt(2.0 / double(std::max<Eigen::Index>(fanRows, 1))));
    case InitKind::Gaussian:
        return initMatrix(rows, cols, InitKind::Gaussian, seed, init.stddev);
    case InitKind::Zeros:
        break;
    }
    return MatrixF::Zero(rows, cols);
}

MatrixF resized(const MatrixF &m, MatrixId id, Eigen::Index rows, Eigen::Index cols, const InitOptions &init)
{
    MatrixF out = fillBlock(rows, cols, rows, cols, init, fillSeed(init.seed, id, FillRegion::Resize, rows, cols));
    const Eigen::Index r = std::min(rows, m.rows()), c = std::min(cols, m.cols());
    out.topLeftCorner(r, c) = m.topLeftCorner(r, c);
    return out;
}

MatrixF regrouped(const MatrixF &m, MatrixId id, int oldHeads, int oldWidth, int newHeads, int newWidth, bool alongRows,
                  const InitOptions &init)
{
    const MatrixF src = alongRows ? MatrixF(m.transpose()) : m;
    const Eigen::Index width = Eigen::Index(newHeads) * newWidth;
    // The fan of the matrix as it is used (W_O's rows are the heads' outputs).
    const Eigen::Index fanRows = alongRows ? width : src.rows(), fanCols = alongRows ? src.rows() : width;
    MatrixF out(src.rows(), width);
    const int keptHeads = std::min(oldHeads, newHeads), keptWidth = std::min(oldWidth, newWidth);
    for (int h = 0; h < newHeads; ++h) {
        const Eigen::Index at = Eigen::Index(h) * newWidth;
        if (h < keptHeads && keptWidth == newWidth) {
            out.middleCols(at, newWidth) = src.middleCols(Eigen::Index(h) * oldWidth, newWidth);
            continue;
        }
        out.middleCols(at, newWidth) = fillBlock(src.rows(), newWidth, fanRows, fanCols, init,
                                                 fillSeed(init.seed, id, FillRegion::Head, h, newWidth));
        if (h < keptHeads)
            out.middleCols(at, keptWidth) = src.middleCols(Eigen::Index(h) * oldWidth, keptWidth);
    }
    if (alongRows)
        return out.transpose();
    return out;
}

Project setHeads(Project p, int heads, const InitOptions &init)
{
    AttentionSpec &s = p.problem.spec;
    AttentionWeights &w = p.problem.weights;
    const int oldHeads = s.heads;
    // Key/value heads that were one per head stay so; a G set apart from H keeps dividing it.
    const int kvHeads = s.kvHeads == 0 ? heads : std::gcd(heads, s.kvHeads);
    w.q = regrouped(w.q, MatrixId::Wq, oldHeads, s.headDimQK, heads, s.headDimQK, false, init);
    regroupKeyValues(p.problem, kvHeads, s.headDimQK, s.headDimV, init);
    if (w.o)
        w.o = regrouped(*w.o, MatrixId::Wo, oldHeads, s.headDimV, heads, s.headDimV, true, init);
    withBias(w.qBias, [&](const MatrixF &b) {
        return regrouped(b, MatrixId::BiasQ, oldHeads, s.headDimQK, heads, s.headDimQK, false, zeros());
    });
    withBias(w.sinks,
             [&](const MatrixF &b) { return regrouped(b, MatrixId::Sinks, oldHeads, 1, heads, 1, false, zeros()); });
    s.heads = heads;
    s.kvHeads = kvHeads == heads ? 0 : kvHeads;
    return p;
}

Project setHeadDimQK(Project p, int headDimQK, const InitOptions &init)
{
    AttentionSpec &s = p.problem.spec;
    AttentionWeights &w = p.problem.weights;
    w.q = regrouped(w.q, MatrixId::Wq, s.heads, s.headDimQK, s.heads, headDimQK, false, init);
    withBias(w.qBias, [&](const MatrixF &b) {
        return regrouped(b, MatrixId::BiasQ, s.heads, s.headDimQK, s.heads, headDimQK, false, zeros());
    });
    regroupKeyValues(p.problem, s.keyValueHeads(), headDimQK, s.headDimV, init); // G blocks, not H
    s.headDimQK = headDimQK;
    return p;
}

Project setHeadDimV(Project p, int headDimV, const InitOptions &init)
{
    AttentionSpec &s = p.problem.spec;
    AttentionWeights &w = p.problem.weights;
    regroupKeyValues(p.problem, s.keyValueHeads(), s.headDimQK, headDimV, init); // G blocks, not H
    if (w.o)
        w.o = regrouped(*w.o, MatrixId::Wo, s.heads, s.headDimV, s.heads, headDimV, true, init);
    s.headDimV = headDimV;
    return p;
}

Project setInputDim(Project p, TokenSide side, int dims, const InitOptions &init)
{
    AttentionProblem &pr = p.problem;
    const bool cross = pr.spec.mode == AttentionMode::Cross;
    auto rowsTo = [&](MatrixF &m, MatrixId id) { m = resized(m, id, dims, m.cols(), init); };
    if (side == TokenSide::Query || !cross) {
        pr.xq = resized(pr.xq, MatrixId::Xq, pr.xq.rows(), dims, init);
        rowsTo(pr.weights.q, MatrixId::Wq);
        if (!cross) {
            rowsTo(pr.weights.k, MatrixId::Wk);
            rowsTo(pr.weights.v, MatrixId::Wv);
        }
    } else {
        pr.xkv = resized(pr.xkv, MatrixId::Xkv, pr.xkv.rows(), dims, init);
        rowsTo(pr.weights.k, MatrixId::Wk);
        if (!pr.hasSeparateValue()) // Wv's rows follow the value input's width, not d_kv
            rowsTo(pr.weights.v, MatrixId::Wv);
    }
    return p;
}

Project setOutputDim(Project p, int dOut, const InitOptions &init)
{
    AttentionWeights &w = p.problem.weights;
    if (!w.o)
        return p;
    w.o = resized(*w.o, MatrixId::Wo, w.o->rows(), dOut, init);
    withBias(w.oBias, [&](const MatrixF &b) { return resized(b, MatrixId::BiasO, 1, dOut, zeros()); });
    return p;
}

Project insertToken(Project p, TokenSide side, int row, const QString &label, const InitOptions &init)
{
    AttentionProblem &pr = p.problem;
    const bool cross = pr.spec.mode == AttentionMode::Cross;
    const bool keySide = side == TokenSide::Key && cross;
    MatrixF &x = keySide ? pr.xkv : pr.xq;
    auto &tokens = keySide ? p.keyTokens : p.queryTokens;
    row = std::clamp(row, 0, int(x.rows()));
    // Each inserted row its own stream: by position and by the number of rows it makes.
    const MatrixId id = keySide ? MatrixId::Xkv : MatrixId::Xq;
    x = insertRow<MatrixF>(
        x, row, fillBlock(1, x.cols(), 1, x.cols(), init, fillSeed(init.seed, id, FillRegion::Row, row, x.rows() + 1)));
    tokens.insert(tokens.begin() + row, label.toStdString());
    if (keySide && pr.xv) // a separate value input has one row per key: a new key's value is 0
        pr.xv = insertRow<MatrixF>(*pr.xv, row, MatrixF::Zero(1, pr.xv->cols()));
    const bool queryGrows = !keySide;
    const bool keyGrows = keySide || !cross;
    if (pr.mask.allowed) {
        if (queryGrows)
            pr.mask.allowed =
                insertRow<MaskMatrix>(*pr.mask.allowed, row, MaskMatrix::Ones(1, pr.mask.allowed->cols()));
        if (keyGrows)
            pr.mask.allowed = insertMaskCol(*pr.mask.allowed, row);
    }
    if (keyGrows && !pr.mask.keyPadding.empty())
        pr.mask.keyPadding.insert(pr.mask.keyPadding.begin() + row, true);
    insertPosition(pr, queryGrows, keyGrows, row);
    return p;
}

Project removeToken(Project p, TokenSide side, int row)
{
    AttentionProblem &pr = p.problem;
    const bool cross = pr.spec.mode == AttentionMode::Cross;
    const bool keySide = side == TokenSide::Key && cross;
    MatrixF &x = keySide ? pr.xkv : pr.xq;
    auto &tokens = keySide ? p.keyTokens : p.queryTokens;
    if (x.rows() <= 1 || row < 0 || row >= x.rows())
        return p;
    x = removeRow<MatrixF>(x, row);
    if (size_t(row) < tokens.size())
        tokens.erase(tokens.begin() + row);
    if (keySide && pr.xv && row < pr.xv->rows())
        pr.xv = removeRow<MatrixF>(*pr.xv, row);
    const bool queryShrinks = !keySide;
    const bool keyShrinks = keySide || !cross;
    if (pr.mask.allowed) {
        if (queryShrinks)
            pr.mask.allowed = removeRow<MaskMatrix>(*pr.mask.allowed, row);
        if (keyShrinks)
            pr.mask.allowed = removeMaskCol(*pr.mask.allowed, row);
    }
    if (keyShrinks && size_t(row) < pr.mask.keyPadding.size())
        pr.mask.keyPadding.erase(pr.mask.keyPadding.begin() + row);
    removePosition(pr, queryShrinks, keyShrinks, row);
    return p;
}

Project setMode(Project p, AttentionMode mode, const InitOptions &init)
{
    AttentionProblem &pr = p.problem;
    if (pr.spec.mode == mode)
        return p;
    if (mode == AttentionMode::Cross) {
        // Start from the same tokens on both sides: nothing but the mode changes the result.
        pr.xkv = pr.xq;
        p.keyTokens = p.queryTokens;
        // The keys kept the queries' positions in self-attention; now they need their own copy.
        if (pr.spec.rope && pr.spec.rope->keyPositions.empty())
            pr.spec.rope->keyPositions = pr.spec.rope->queryPositions;
    } else {
        const Eigen::Index tq = pr.xq.rows(), dq = pr.xq.cols();
        pr.weights.k = resized(pr.weights.k, MatrixId::Wk, dq, pr.weights.k.cols(), init);
        pr.weights.v = resized(pr.weights.v, MatrixId::Wv, dq, pr.weights.v.cols(), init);
        if (pr.mask.allowed)
            pr.mask.allowed = resizedMask(*pr.mask.allowed, tq, tq);
        if (!pr.mask.keyPadding.empty())
            pr.mask.keyPadding.resize(size_t(tq), true);
        pr.xkv = MatrixF();
        pr.xv.reset(); // self-attention takes its values from query.x
        p.keyTokens.clear();
        if (pr.spec.rope) // the keys are the query tokens again, at the queries' positions
            pr.spec.rope->keyPositions.clear();
    }
    pr.spec.mode = mode;
    return p;
}

Project reinitialise(Project p, MatrixId id, const InitOptions &init)
{
    if (!matrixExists(p, id))
        return p;
    const Eigen::Index rows = matrixRows(p, id), cols = matrixCols(p, id);
    const MatrixF fresh =
        fillBlock(rows, cols, rows, cols, init, fillSeed(init.seed, id, FillRegion::Whole, rows, cols));
    if (auto *b = biasOf(p, id))
        *b = asVector(fresh);
    else
        *denseOf(p, id) = fresh;
    return p;
}

Project setMatrixPresent(Project p, MatrixId id, bool present, const InitOptions &init)
{
    AttentionProblem &pr = p.problem;
    AttentionWeights &w = pr.weights;
    if (matrixExists(p, id) == present)
        return p;
    if (id == MatrixId::Xv) {
        if (pr.spec.mode != AttentionMode::Cross)
            return p; // self-attention takes its values from the query input
        if (present) {
            pr.xv = pr.xkv; // the values start as the keys: nothing but the new matrix changes
        } else {
            // W_V's rows follow the key input's width again.
            w.v = resized(w.v, MatrixId::Wv, pr.xkv.cols(), w.v.cols(), init);
            pr.xv.reset();
        }
        return p;
    }
    if (id == MatrixId::Wo) {
        if (present) {
            w.o = fillBlock(pr.vWidth(), pr.vWidth(), pr.vWidth(), pr.vWidth(), init,
                            fillSeed(init.seed, MatrixId::Wo, FillRegion::Whole, pr.vWidth(), pr.vWidth()));
        } else {
            w.o.reset();
            w.oBias.reset();
        }
        return p;
    }
    auto *bias = biasOf(p, id);
    if (!bias)
        return p;
    if (!present) {
        bias->reset();
        return p;
    }
    Eigen::Index n = 0;
    switch (id) {
    case MatrixId::BiasQ:
    case MatrixId::BiasK:
        n = pr.qkWidth();
        break;
    case MatrixId::BiasV:
        n = pr.vWidth();
        break;
    case MatrixId::Sinks:
        n = pr.spec.heads;
        break;
    default:
        if (!w.o)
            return p; // b_O needs W_O
        n = w.o->cols();
        break;
    }
    *bias = VectorF::Zero(n);
    return p;
}

Project setMaskCells(Project p, const std::vector<std::pair<int, int>> &cells, bool allowed)
{
    AttentionProblem &pr = p.problem;
    if (!pr.mask.allowed)
        pr.mask.allowed = MaskMatrix::Ones(pr.tq(), pr.tk());
    for (const auto &[r, c] : cells)
        if (r >= 0 && c >= 0 && r < pr.tq() && c < pr.tk())
            (*pr.mask.allowed)(r, c) = allowed ? 1 : 0;
    return p;
}

void compactExtra(Project &p)
{
    auto &e = p.extra;
    if (!e.is_object())
        return;
    for (const char *side : {"query", "key"})
        if (e.contains(side) && e[side].is_object()) {
            for (const char *field : {"x", "tokens"})
                if (e[side].contains(field))
                    e[side][field] = nullptr;
        }
    if (e.contains("weights") && e["weights"].is_object())
        for (auto &value : e["weights"])
            value = nullptr;
    if (e.contains("mask") && e["mask"].is_object())
        for (const char *field : {"allowed", "keyPadding"})
            if (e["mask"].contains(field))
                e["mask"][field] = nullptr;
}

bool isPaddingToken(const std::string &label)
{
    std::string s;
    for (char ch : label)
        s += char(std::tolower(static_cast<unsigned char>(ch)));
    return s == "<pad>" || s == "[pad]" || s == "<pad/>" || s == "pad";
}

Project applyMaskPreset(Project p, MaskPreset preset, int window)
{
    AttentionProblem &pr = p.problem;
    switch (preset) {
    case MaskPreset::None:
        pr.mask = MaskSpec{};
        break;
    case MaskPreset::Causal:
        pr.mask.causal = true;
        break;
    case MaskPreset::PaddingFromTokens: {
        const auto &labels = p.keyLabels();
        pr.mask.keyPadding.assign(size_t(pr.tk()), true);
        bool any = false;
        for (size_t j = 0; j < labels.size() && j < pr.mask.keyPadding.size(); ++j) {
            pr.mask.keyPadding[j] = !isPaddingToken(labels[j]);
            any = any || !pr.mask.keyPadding[j];
        }
        if (!any)
            pr.mask.keyPadding.clear();
        break;
    }
    case MaskPreset::SlidingWindow:
        // The structural field, as a model has it; the custom cells are left as they are.
        pr.mask.window = std::max(window, 1);
        pr.mask.causal = true;
        break;
    }
    return p;
}

} // namespace edit
} // namespace attnscope
