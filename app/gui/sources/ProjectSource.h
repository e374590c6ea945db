#pragma once

#include "app/gui/document/ComputeController.h"
#include "app/gui/document/Document.h"
#include "app/gui/sources/Source.h"

#include <QPointer>

#include <map>

class QAction;
class QDockWidget;
class QLabel;
class QTimer;
class QUndoGroup;

namespace attnscope {

class Autosaver;
class BatchBar;
class MaskEditor;
class MatrixEditor;
class ModelPanel;
class PooledHeatmapView;

// The editable source: a project (Document, with undo) computed as it is edited (ComputeController,
// on the backend the user chose). It brings the editor docks (model, mask, inputs, weights,
// history), the batch bar, Save and Save As, autosave and crash recovery. A project too large for
// full traces is shown pooled instead of the views (a PooledHeatmapView over ProjectTiles), with a
// notice saying why. A window has one project source all its life: while another source is in
// front it stands behind with a new, unmodified project (the one it had was saved or discarded
// before the other was opened), its docks hidden and remembered.
class ProjectSource : public Source
{
    Q_OBJECT

public:
    explicit ProjectSource(SourceHost &host, QObject *parent = nullptr);
    ~ProjectSource() override; // no more recomputation: waits for the worker

    Document *document() const { return m_document; }
    ComputeController *compute() const { return m_compute; }
    QUndoGroup *undoGroup() const { return m_undoGroup; }
    Autosaver *autosaver() const { return m_autosaver; }
    // The newest result shown (null before the first, and while another source is in front).
    ComputedTracePtr result() const { return m_result; }
    static constexpr int kProgressAfterMs = 500; // the status bar's progress shows after this

    // Shows this document (taking it) and says ready(): the window brings the project to the front.
    void setDocument(Document *document);
    void newDocument();
    // What File > New starts from: a small self-attention problem, four tokens and two heads.
    static Project newProject();
    // A project read from path (a resource path, or a file that becomes the document's); on failure
    // the document stays as it was and the error is said.
    bool open(const QString &path, Result<Project> project);

    // Save and Save As, for the File menu (off while another source is in front).
    QList<QAction *> saveActions() const;
    // "Compare With Saved" (File menu): on while the project in front has a file and is modified;
    // compareWithSavedRequested() (the window opens the comparison, leaving the project as it is).
    QAction *compareWithSavedAction() const { return m_compareSaved; }
    bool saveTo(const QString &path);
    bool save();
    bool saveAs();
    // Asks to save a modified project; false: the user cancelled.
    bool maybeSave();
    // One sentence on what a save did with a `{"npy": ...}` reference (Document::lastSaveNotes()).
    static QString referenceNoteText(const ReferenceNote &note);
    // Offers the recovery copies left by runs that are gone, newest first: Recover opens one as a
    // modified document with its original path; Discard deletes it. A copy that cannot be read is
    // shown with its error: Keep leaves it, Discard deletes it. `answer` answers without asking
    // (true: recover, or keep an unreadable copy), for tests of the executable. Returns whether a
    // copy was recovered.
    bool offerRecovery(std::optional<bool> answer = std::nullopt);

    // What to tell the user about a failed computation of this kind ("device lost: choose the
    // CPU..."); empty where there is nothing to add to the message.
    static QString failureAdvice(ErrorKind kind);
    void requestCompute();

    // The editors, for the View menu and tests.
    BatchBar *batchBar() const { return m_batchBar; }
    MaskEditor *maskEditor() const { return m_mask; }
    ModelPanel *modelPanel() const { return m_model; }
    MatrixEditor *matrixEditor(MatrixId id) const;
    QList<QDockWidget *> docks() const { return m_docks; }

    // Long projects (ProjectPooled.cpp): shown pooled once needsPooledView says so.
    bool isPooled() const { return m_pooledShown; }
    PooledHeatmapView *pooledView() const { return m_pooled; }
    QLabel *pooledNotice() const { return m_pooledNotice; }

    void setInFront(bool front) override;
    QString title() const override;
    bool isModified() const override;
    ShownAttention requested() const override;
    QString exportStem() const override;
    PooledHeatmapView *pooledInFront() const override;
    void budgetChanged() override;

signals:
    // Every view shows this result now (the edit-to-repaint benchmark waits for it).
    void resultShown(attnscope::ComputedTracePtr result);
    // The user asked to compare the project as saved (A) with the project as edited (B).
    void compareWithSavedRequested();

private:
    void createDocks();
    void createPooledView();
    // Replaces the document without asking to be shown (the blank one behind another source).
    void replaceDocument(Document *document);
    void showResult(ComputedTracePtr result);
    void computeFailed(const QString &message, ErrorKind kind);
    void updateProgress();
    bool showPooledIfNeeded(); // true: the document is shown pooled, no full computation
    void setPooled(bool pooled);
    void updateCompareWithSaved();

    QPointer<Document> m_document;
    ComputeController *m_compute;
    QUndoGroup *m_undoGroup;
    Autosaver *m_autosaver;
    bool m_front = false;
    QString m_backendText;            // what the status bar says of the project's backend, kept while behind
    quint64 m_documentGeneration = 0; // the current document's first computation
    ComputedTracePtr m_result;
    QTimer *m_progressTimer;
    QAction *m_save = nullptr;
    QAction *m_saveAs = nullptr;
    QAction *m_compareSaved = nullptr;

    BatchBar *m_batchBar = nullptr;
    MaskEditor *m_mask = nullptr;
    ModelPanel *m_model = nullptr;
    std::map<MatrixId, MatrixEditor *> m_editors;
    QList<QDockWidget *> m_docks;
    std::map<QDockWidget *, bool> m_dockVisible; // before another source hid them

    PooledHeatmapView *m_pooled = nullptr;
    QLabel *m_pooledNotice = nullptr;
    bool m_pooledShown = false;
    bool m_maskDockWasVisible = true;
};

} // namespace attnscope
