#pragma once

#include "app/gui/document/MemoryBudget.h"
#include "app/gui/document/ProjectEdit.h"
#include "core/Result.h"
#include "core/formats/NumberBlock.h"
#include "core/formats/ProjectReferences.h"

#include <QObject>
#include <QString>

#include <functional>
#include <utility>
#include <vector>

class QUndoStack;

namespace attnscope {

// The open project and its undo history. Every edit goes through a verb below, which pushes
// a QUndoCommand; the command changes the data through the apply* primitives, and those emit
// changed(). Views and models only listen. "Modified" is the undo stack's clean state.
class Document : public QObject
{
    Q_OBJECT

public:
    enum ChangeFlag {
        ValuesChanged = 0x01, // numbers in X, weights or biases; shapes unchanged
        ShapeChanged = 0x02,  // any size: tokens, heads, dK, dV, model dims, mode, present matrices
        TokensChanged = 0x04, // token labels
        SpecChanged = 0x08,   // scale, mask fill, mode, key/value heads, RoPE, soft-cap
        MaskChanged = 0x10,   // any mask part, the window too; RoPE positions (causal compares them)
        TitleChanged = 0x20,
        AllChanged = 0x3f,
    };
    Q_DECLARE_FLAGS(Changes, ChangeFlag)
    Q_FLAG(Changes)

    explicit Document(Project project, QObject *parent = nullptr);
    ~Document() override;

    // Reads and parses a project file (a resource path such as ":/examples/..." works too).
    // Errors name the file and then the field, as parseProject does.
    static Result<Project> readProject(const QString &path);

    const Project &project() const { return m_project; }
    const AttentionProblem &problem() const { return m_project.problem; }
    QUndoStack *undoStack() const { return m_undoStack; }

    QString filePath() const { return m_filePath; }
    void setFilePath(const QString &path);
    // The file name, or the title for an unsaved document.
    QString displayName() const;
    bool isModified() const;

    // Marks the document modified with no undo step to go back to (a recovered document:
    // its file on disk is not what it holds).
    void markModified();

    // Writes atomically (AtomicFileWriter) and marks the document clean. Each `{"npy": ...}` reference whose
    // matrix is unchanged is checked against its file first (core/formats/ProjectReferences.h,
    // SavedReferences): one whose file has gone or changed since it was read is written inline,
    // with the values the document holds; one the path would leave the new folder to reach is
    // copied beside the file. lastSaveNotes() says which.
    Status save(const QString &path);
    // What the last successful save did with references instead of keeping them as they were.
    const std::vector<ReferenceNote> &lastSaveNotes() const { return m_saveNotes; }

    // Options for values filled into grown or re-initialised matrices.
    InitOptions initOptions() const { return m_init; }
    void setInitOptions(const InitOptions &options) { m_init = options; }

    // The memory a size edit is checked against (MemoryBudget.h): the machine's unless the
    // window that shows this document holds another.
    const MemoryBudget &memoryBudget() const { return m_budget; }
    void setMemoryBudget(const MemoryBudget &budget) { m_budget = budget; }

    // Verbs: each pushes one command and returns false when it would change nothing or is
    // not allowed (e.g. removing the last token). `mergeKey` != 0 merges consecutive edits
    // of the same field with the same key into one undo step (dragging a value or a mask
    // stroke); edits of different fields never merge. A value that is not a finite float,
    // or a size memoryBudget() cannot hold, is refused: editRefused() says why.
    bool setValue(MatrixId id, int row, int col, float value, int mergeKey = 0);
    // Pastes a block of numbers with its top-left cell at (row, col), as one undo step; a single
    // number fills fillRows × fillCols cells from there (a selection). A block that runs past the
    // matrix is refused, naming both sizes.
    bool pasteBlock(MatrixId id, int row, int col, const NumberBlock &block, int fillRows = 1, int fillCols = 1);
    // The same from pasted text (parseNumberBlock); text that is no block of numbers is refused
    // with the parser's line ("Paste into X_q: line 2 has 3 numbers, line 1 has 4").
    bool pasteText(MatrixId id, int row, int col, const QString &text, int fillRows = 1, int fillCols = 1);
    bool setTokenLabel(TokenSide side, int row, const QString &label);
    bool insertToken(TokenSide side, int row, const QString &label);
    bool removeToken(TokenSide side, int row);
    bool setHeads(int heads);
    bool setHeadDimQK(int headDimQK);
    bool setHeadDimV(int headDimV);
    bool setInputDim(TokenSide side, int dims);
    bool setOutputDim(int dOut);
    bool setMode(AttentionMode mode);
    bool setScale(ScaleMode mode, double value, int mergeKey = 0);
    bool setMaskFill(MaskFill fill);
    bool reinitialise(MatrixId id);
    bool setMatrixPresent(MatrixId id, bool present);
    bool setMaskCells(const std::vector<std::pair<int, int>> &cells, bool allowed, int mergeKey = 0);
    bool applyMaskPreset(MaskPreset preset, int window = 2);
    bool setTitle(const QString &title);

    // Modern attention (design.md; DocumentModern.cpp). A value core's validateProblem refuses
    // is refused with its message (editRefused), and the project stays as it was.
    // Key/value heads G, a divisor of the heads: W_K, W_V, b_K, b_V regrouped (edit::setKeyValueHeads).
    bool setKeyValueHeads(int kvHeads);
    // RoPE on (base 10000, positions 0..T-1) or off; on needs an even dK.
    bool setRopeEnabled(bool on);
    bool setRopeBase(double base, int mergeKey = 0);
    // Positions of the query (key) rows; empty: 0..T-1. One per row, each 0 or more.
    bool setRopePositions(TokenSide side, const std::vector<std::int64_t> &positions);
    // The same from text: whole numbers separated by spaces or commas (edit::parsePositions).
    bool setRopePositionsText(TokenSide side, const QString &text);
    // Soft-cap c > 0 on the scores, or none. Value edits with the same mergeKey merge.
    bool setSoftcap(std::optional<double> softcap, int mergeKey = 0);
    // Sliding window W (key j allowed for query i only when i - W < j); 0: none.
    bool setMaskWindow(std::int64_t window, int mergeKey = 0);

    // The message of the last refused edit.
    QString lastRefusal() const { return m_lastRefusal; }

    // Primitives for the commands only: they change the data and emit changed().
    void applyValue(MatrixId id, int row, int col, float value);
    void applyTokenLabel(TokenSide side, int row, const QString &label);
    void applyScale(ScaleMode mode, double value);
    void applyMaskFill(MaskFill fill);
    void applyTitle(const QString &title);
    void applyRopeBase(double base);
    void applySoftcap(std::optional<double> softcap);
    void applyMaskWindow(std::int64_t window);
    void applyProject(const Project &project, Changes what);

signals:
    void changed(attnscope::Document::Changes what);
    void valueChanged(attnscope::MatrixId id, int row, int col);
    void modifiedChanged(bool modified);
    void filePathChanged(const QString &path);
    // A verb refused an edit that is allowed in principle but cannot be done here (a size
    // the machine cannot hold); the message says what it would need. Nothing changed.
    void editRefused(const QString &message);

private:
    bool pushSnapshot(Project after, Changes what, const QString &text, int mergeKey = 0);
    // A size edit: refused before `build` runs when `after` does not fit the memory budget.
    bool pushResized(const ProblemSize &after, const std::function<Project()> &build, Changes what,
                     const QString &text);
    bool refuse(const QString &message);
    // Pushes `after` when validateProblem passes it, else refuses with its message.
    bool pushValid(Project after, Changes what, const QString &text);

    Project m_project;
    QUndoStack *m_undoStack;
    QString m_filePath;
    InitOptions m_init;
    MemoryBudget m_budget;
    QString m_lastRefusal;
    std::vector<ReferenceNote> m_saveNotes;
};

} // namespace attnscope

Q_DECLARE_OPERATORS_FOR_FLAGS(attnscope::Document::Changes)
