#include "app/gui/document/Document.h"

#include "app/gui/document/DocumentCommands.h"
#include "app/gui/document/MemoryBudget.h"
#include "app/render/ErrorText.h"
#include "core/ErrorCode.h"
#include "core/io/FileIo.h"
#include "core/io/MemoryLimits.h"

#include <QFile>
#include <QFileInfo>
#include <QUndoStack>

#include <cmath>
#include <new>

namespace attnscope {

namespace {

QVariant scaleVariant(ScaleMode mode, double value)
{
    return QVariantList{int(mode), value};
}

} // namespace

Document::Document(Project project, QObject *parent)
    : QObject(parent), m_project(std::move(project)), m_undoStack(new QUndoStack(this))
{
    edit::compactExtra(m_project);
    connect(m_undoStack, &QUndoStack::cleanChanged, this, [this](bool clean) { emit modifiedChanged(!clean); });
}

Document::~Document() = default;

Result<Project> Document::readProject(const QString &path)
{
    // Built-in examples are resources; files on disk are read with the CLI's bounds (a size
    // cap, no endless reads from a FIFO or a device) and may reference .npy files beside them.
    if (path.startsWith(QLatin1Char(':'))) {
        QFile file(path);
        const QString name = QFileInfo(path).fileName();
        if (!file.open(QIODevice::ReadOnly))
            return Error{(name + QStringLiteral(": ") + file.errorString()).toStdString(), ErrorKind::Io};
        const QByteArray data = file.readAll();
        auto project = parseProject(std::string_view(data.constData(), size_t(data.size())));
        if (!project)
            return prefixedError((name + QStringLiteral(": ")).toStdString(), project.error());
        return project;
    }
    // The full trace's size is not checked here: the window shows a project too large for
    // it pooled (needsPooledView), and refuses only what cannot even be pooled.
    ProjectReadOptions options;
    options.checkTraceSize = false;
    return readProjectFile(path.toStdString(), options);
}

void Document::setFilePath(const QString &path)
{
    if (m_filePath == path)
        return;
    m_filePath = path;
    emit filePathChanged(path);
}

QString Document::displayName() const
{
    if (!m_filePath.isEmpty())
        return QFileInfo(m_filePath).fileName();
    if (!m_project.title.empty())
        return QString::fromStdString(m_project.title);
    return tr("Untitled");
}

bool Document::isModified() const
{
    return !m_undoStack->isClean();
}

void Document::markModified()
{
    m_undoStack->resetClean();
}

Status Document::save(const QString &path)
{
    // References are checked (and copied, if need be) before the project is written; copies
    // made for a save that then fails are removed again.
    SavedReferences references(m_project.folder, QFileInfo(path).absolutePath().toStdString());
    const std::string text = serializeProject(m_project, [&](const std::string &field, const NpyReference &reference) {
        return references(field, reference);
    });
    // Whole or nothing, as the CLI writes (a link is replaced, never its target).
    AtomicFileWriter file(path.toStdString());
    Status s = file.open();
    if (s) {
        file.write(text);
        s = file.commit();
    }
    if (!s) {
        references.discardCopies();
        return s;
    }
    m_saveNotes = references.notes();
    setFilePath(path);
    m_undoStack->setClean();
    return Ok{};
}

bool Document::pushSnapshot(Project after, Changes what, const QString &text, int mergeKey)
{
    m_undoStack->push(new ProjectSnapshotCommand(this, m_project, std::move(after), what, text, mergeKey));
    return true;
}

bool Document::refuse(const QString &message)
{
    m_lastRefusal = message;
    emit editRefused(message);
    return false;
}

bool Document::pushResized(const ProblemSize &after, const std::function<Project()> &build, Changes what,
                           const QString &text)
{
    // Estimated before anything is allocated: a size the machine cannot hold is refused
    // with what it would need, and the document stays as it was.
    const std::int64_t need = editBytes(after, m_budget), budget = m_budget.bytes();
    if (need > budget)
        return refuse(tr("%1: the change would need about %2 of memory (%3 for the project and its undo copies, %4 "
                         "for its intermediate tensors); this machine allows %5. Nothing was changed.")
                          .arg(text, QString::fromStdString(formatBytes(need)),
                               QString::fromStdString(formatBytes(projectBytes(after) * 5)),
                               QString::fromStdString(formatBytes(traceBytes(after))),
                               QString::fromStdString(formatBytes(budget))));
    try {
        return pushSnapshot(build(), what, text);
    } catch (const std::bad_alloc &) {
        // The estimate passed but the allocation failed all the same (memory taken meanwhile).
        return refuse(tr("%1: out of memory while making the change. Nothing was changed.").arg(text));
    }
}

bool Document::setValue(MatrixId id, int row, int col, float value, int mergeKey)
{
    if (!matrixExists(m_project, id) || row < 0 || col < 0 || row >= matrixRows(m_project, id) ||
        col >= matrixCols(m_project, id))
        return false;
    if (!std::isfinite(value))
        // Saved as null, the file would no longer open.
        return refuse(tr("%1[%2, %3]: expected a finite number within float32 range (±3.4e38)")
                          .arg(matrixName(id))
                          .arg(row)
                          .arg(col));
    const float old = matrixValue(m_project, id, row, col);
    if (old == value)
        return false;
    const QVariant key = QVariantList{int(id), row, col, mergeKey};
    m_undoStack->push(new ChangeValueCommand(
        this, CommandId::CellValue, key, old, value,
        [id, row, col](Document *d, const QVariant &v) { d->applyValue(id, row, col, v.toFloat()); },
        tr("Edit %1[%2, %3]").arg(matrixName(id)).arg(row).arg(col), mergeKey != 0));
    return true;
}

bool Document::pasteBlock(MatrixId id, int row, int col, const NumberBlock &block, int fillRows, int fillCols)
{
    if (!matrixExists(m_project, id) || row < 0 || col < 0 || block.rows <= 0 || block.cols <= 0)
        return false;
    const bool fill = block.rows == 1 && block.cols == 1;
    const int rows = fill ? std::max(fillRows, 1) : block.rows, cols = fill ? std::max(fillCols, 1) : block.cols;
    const Eigen::Index haveRows = matrixRows(m_project, id), haveCols = matrixCols(m_project, id);
    if (row + rows > haveRows || col + cols > haveCols)
        return refuse(tr("The pasted block is %1 \u00d7 %2; %3 from [%4, %5] has room for %6 \u00d7 %7.")
                          .arg(rows)
                          .arg(cols)
                          .arg(matrixName(id))
                          .arg(row)
                          .arg(col)
                          .arg(haveRows - row)
                          .arg(haveCols - col));
    Project after = m_project;
    bool changed = false;
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) {
            const float v = float(fill ? block.at(0, 0) : block.at(r, c));
            changed = changed || matrixValue(after, id, row + r, col + c) != v;
            setMatrixValue(after, id, row + r, col + c, v);
        }
    if (!changed)
        return false;
    return pushSnapshot(std::move(after), ValuesChanged, tr("Paste into %1").arg(matrixName(id)));
}

bool Document::pasteText(MatrixId id, int row, int col, const QString &text, int fillRows, int fillCols)
{
    const auto block = parseNumberBlock(text.toStdString());
    if (!block)
        return refuse(tr("Paste into %1: %2").arg(matrixName(id), errorText(block.error())));
    return pasteBlock(id, row, col, *block, fillRows, fillCols);
}

bool Document::setTokenLabel(TokenSide side, int row, const QString &label)
{
    const bool keySide = side == TokenSide::Key && m_project.problem.spec.mode == AttentionMode::Cross;
    const auto &tokens = keySide ? m_project.keyTokens : m_project.queryTokens;
    if (row < 0 || size_t(row) >= tokens.size())
        return false;
    const QString old = QString::fromStdString(tokens[size_t(row)]);
    if (old == label)
        return false;
    m_undoStack->push(new ChangeValueCommand(
        this, CommandId::TokenLabel, QVariantList{int(keySide), row}, old, label,
        [keySide, row](Document *d, const QVariant &v) {
            d->applyTokenLabel(keySide ? TokenSide::Key : TokenSide::Query, row, v.toString());
        },
        tr("Rename token \"%1\" to \"%2\"").arg(old, label), false));
    return true;
}

bool Document::insertToken(TokenSide side, int row, const QString &label)
{
    ProblemSize after = problemSize(m_project.problem);
    if (side == TokenSide::Query || !after.cross)
        ++after.tq;
    if (side == TokenSide::Key || !after.cross)
        ++after.tk;
    return pushResized(
        after, [&] { return edit::insertToken(m_project, side, row, label, m_init); },
        ShapeChanged | TokensChanged | MaskChanged, tr("Insert token \"%1\"").arg(label));
}

bool Document::removeToken(TokenSide side, int row)
{
    const bool keySide = side == TokenSide::Key && m_project.problem.spec.mode == AttentionMode::Cross;
    const MatrixF &x = keySide ? m_project.problem.xkv : m_project.problem.xq;
    if (x.rows() <= 1 || row < 0 || row >= x.rows())
        return false;
    const auto &tokens = keySide ? m_project.keyTokens : m_project.queryTokens;
    const QString label = size_t(row) < tokens.size() ? QString::fromStdString(tokens[size_t(row)]) : QString();
    return pushSnapshot(edit::removeToken(m_project, side, row), ShapeChanged | TokensChanged | MaskChanged,
                        tr("Remove token \"%1\"").arg(label));
}

bool Document::setHeads(int heads)
{
    if (heads < 1 || heads == m_project.problem.spec.heads)
        return false;
    ProblemSize after = problemSize(m_project.problem);
    after.heads = heads;
    if (!after.outputProjection)
        after.dOut = std::int64_t(heads) * after.headDimV;
    return pushResized(
        after, [&] { return edit::setHeads(m_project, heads, m_init); }, ShapeChanged,
        tr("Set heads to %1").arg(heads));
}

bool Document::setHeadDimQK(int headDimQK)
{
    if (headDimQK < 1 || headDimQK == m_project.problem.spec.headDimQK)
        return false;
    if (m_project.problem.spec.rope && headDimQK % 2 != 0) // core's rule and message
        return refuse(errorText(codedError("validation.rope.odd", {std::to_string(headDimQK)})));
    ProblemSize after = problemSize(m_project.problem);
    after.headDimQK = headDimQK;
    return pushResized(
        after, [&] { return edit::setHeadDimQK(m_project, headDimQK, m_init); }, ShapeChanged,
        tr("Set dK to %1").arg(headDimQK));
}

bool Document::setHeadDimV(int headDimV)
{
    if (headDimV < 1 || headDimV == m_project.problem.spec.headDimV)
        return false;
    ProblemSize after = problemSize(m_project.problem);
    after.headDimV = headDimV;
    if (!after.outputProjection)
        after.dOut = after.heads * headDimV;
    return pushResized(
        after, [&] { return edit::setHeadDimV(m_project, headDimV, m_init); }, ShapeChanged,
        tr("Set dV to %1").arg(headDimV));
}

bool Document::setInputDim(TokenSide side, int dims)
{
    const bool keySide = side == TokenSide::Key && m_project.problem.spec.mode == AttentionMode::Cross;
    const Eigen::Index current = keySide ? m_project.problem.xkv.cols() : m_project.problem.xq.cols();
    if (dims < 1 || dims == current)
        return false;
    ProblemSize after = problemSize(m_project.problem);
    if (keySide) {
        after.dkv = dims;
    } else {
        after.dq = dims;
        if (!after.cross)
            after.dkv = dims;
    }
    return pushResized(
        after, [&] { return edit::setInputDim(m_project, side, dims, m_init); }, ShapeChanged,
        keySide ? tr("Set d_kv to %1").arg(dims) : tr("Set d_model to %1").arg(dims));
}

bool Document::setOutputDim(int dOut)
{
    const auto &o = m_project.problem.weights.o;
    if (!o || dOut < 1 || dOut == o->cols())
        return false;
    ProblemSize after = problemSize(m_project.problem);
    after.dOut = dOut;
    return pushResized(
        after, [&] { return edit::setOutputDim(m_project, dOut, m_init); }, ShapeChanged,
        tr("Set d_out to %1").arg(dOut));
}

bool Document::setMode(AttentionMode mode)
{
    if (mode == m_project.problem.spec.mode)
        return false;
    ProblemSize after = problemSize(m_project.problem);
    after.cross = mode == AttentionMode::Cross;
    after.tk = after.tq;
    after.dkv = after.dq;
    return pushResized(
        after, [&] { return edit::setMode(m_project, mode, m_init); },
        ShapeChanged | SpecChanged | TokensChanged | MaskChanged,
        mode == AttentionMode::Cross ? tr("Switch to cross-attention") : tr("Switch to self-attention"));
}

bool Document::setScale(ScaleMode mode, double value, int mergeKey)
{
    const AttentionSpec &s = m_project.problem.spec;
    if (mode == s.scaleMode && (mode != ScaleMode::Custom || value == s.scaleValue))
        return false;
    if (mode == ScaleMode::Custom && (!(value > 0.0 || value < 0.0) || !std::isfinite(value)))
        return false;
    // Editing the custom number merges (a drag is one step); switching the mode never does.
    const bool valueEdit = mode == ScaleMode::Custom && s.scaleMode == ScaleMode::Custom;
    m_undoStack->push(new ChangeValueCommand(
        this, valueEdit ? CommandId::ScaleValue : CommandId::ScaleMode, mergeKey,
        scaleVariant(s.scaleMode, s.scaleValue), scaleVariant(mode, value),
        [](Document *d, const QVariant &v) {
            const QVariantList l = v.toList();
            d->applyScale(ScaleMode(l.at(0).toInt()), l.at(1).toDouble());
        },
        valueEdit ? tr("Change scale") : tr("Change scale mode"), valueEdit && mergeKey != 0));
    return true;
}

bool Document::setMaskFill(MaskFill fill)
{
    const MaskFill old = m_project.problem.spec.maskFill;
    if (fill == old)
        return false;
    m_undoStack->push(new ChangeValueCommand(
        this, CommandId::MaskFill, QVariant(), int(old), int(fill),
        [](Document *d, const QVariant &v) { d->applyMaskFill(MaskFill(v.toInt())); }, tr("Change mask fill"), false));
    return true;
}

bool Document::reinitialise(MatrixId id)
{
    if (!matrixExists(m_project, id))
        return false;
    return pushSnapshot(edit::reinitialise(m_project, id, m_init), ValuesChanged,
                        tr("Re-initialise %1").arg(matrixName(id)));
}

bool Document::setMatrixPresent(MatrixId id, bool present)
{
    if (matrixExists(m_project, id) == present)
        return false;
    ProblemSize size = problemSize(m_project.problem);
    if (id == MatrixId::Wo && present) {
        size.outputProjection = true;
        size.dOut = size.heads * size.headDimV;
    }
    const QString text = present ? tr("Add %1").arg(matrixName(id)) : tr("Remove %1").arg(matrixName(id));
    if (editBytes(size, m_budget) > m_budget.bytes())
        return pushResized(
            size, [&] { return m_project; }, ShapeChanged, text); // refuses with the message
    Project after = edit::setMatrixPresent(m_project, id, present, m_init);
    if (matrixExists(after, id) != present)
        return false;
    return pushSnapshot(std::move(after), ShapeChanged, text);
}

bool Document::setMaskCells(const std::vector<std::pair<int, int>> &cells, bool allowed, int mergeKey)
{
    Project after = edit::setMaskCells(m_project, cells, allowed);
    if (after.problem.mask.allowed && m_project.problem.mask.allowed &&
        *after.problem.mask.allowed == *m_project.problem.mask.allowed)
        return false;
    return pushSnapshot(std::move(after), MaskChanged, allowed ? tr("Allow mask cells") : tr("Mask cells"), mergeKey);
}

bool Document::applyMaskPreset(MaskPreset preset, int window)
{
    static const char *const names[] = {QT_TR_NOOP("No mask"), QT_TR_NOOP("Causal mask"),
                                        QT_TR_NOOP("Padding mask from tokens"), QT_TR_NOOP("Sliding-window mask")};
    Project after = edit::applyMaskPreset(m_project, preset, window);
    const MaskSpec &a = after.problem.mask, &b = m_project.problem.mask;
    if (a.causal == b.causal && a.window == b.window && a.keyPadding == b.keyPadding &&
        a.allowed.has_value() == b.allowed.has_value() && (!a.allowed || *a.allowed == *b.allowed))
        return false; // the mask is that already: no undo step that changes nothing
    return pushSnapshot(std::move(after), MaskChanged, tr(names[int(preset)]));
}

bool Document::setTitle(const QString &title)
{
    const QString old = QString::fromStdString(m_project.title);
    if (old == title)
        return false;
    m_undoStack->push(new ChangeValueCommand(
        this, CommandId::Title, QVariant(), old, title,
        [](Document *d, const QVariant &v) { d->applyTitle(v.toString()); }, tr("Change title"), false));
    return true;
}

void Document::applyValue(MatrixId id, int row, int col, float value)
{
    setMatrixValue(m_project, id, row, col, value);
    emit valueChanged(id, row, col);
    emit changed(ValuesChanged);
}

void Document::applyTokenLabel(TokenSide side, int row, const QString &label)
{
    auto &tokens = side == TokenSide::Key ? m_project.keyTokens : m_project.queryTokens;
    if (row >= 0 && size_t(row) < tokens.size())
        tokens[size_t(row)] = label.toStdString();
    emit changed(TokensChanged);
}

void Document::applyScale(ScaleMode mode, double value)
{
    m_project.problem.spec.scaleMode = mode;
    m_project.problem.spec.scaleValue = value;
    emit changed(SpecChanged);
}

void Document::applyMaskFill(MaskFill fill)
{
    m_project.problem.spec.maskFill = fill;
    emit changed(SpecChanged);
}

void Document::applyTitle(const QString &title)
{
    m_project.title = title.toStdString();
    emit changed(TitleChanged);
}

void Document::applyProject(const Project &project, Changes what)
{
    m_project = project;
    emit changed(what);
}

} // namespace attnscope
