#pragma once

#include "app/gui/document/AttentionController.h"
#include "app/gui/document/ComputeController.h"
#include "app/gui/document/Document.h"
#include "app/gui/document/MemoryBudget.h"
#include "app/gui/document/ModelController.h"
#include "app/gui/views/AttentionViews.h"
#include "app/render/FigureExporter.h"

#include <QMainWindow>
#include <QPointer>

#include <map>
#include <optional>

class QAction;
class QActionGroup;
class QCheckBox;
class QComboBox;
class QFileSystemWatcher;
class QPushButton;
class QLabel;
class QLineEdit;
class QProgressBar;
class QSpinBox;
class QTimer;
class QToolBar;
class QMenu;
class QTabWidget;
class QUndoGroup;
class QVBoxLayout;

namespace attnscope {

class Autosaver;
class ExportDataDialog;
class ExportFigureDialog;
class HeadLinesView;
class MaskEditor;
class MatrixEditor;
class ModelPanel;
class ModelView;
class RolloutView;
class StatsTable;
class TeachingView;
class BatchBar;
class PooledHeatmapView;
class ElidedLabel;

// The main window: editors in docks, the heatmap views in tabs, file handling, the backend
// menu and the status bar. It owns the document and the compute controller; it never
// computes attention itself and never edits the project except through Document verbs.
class MainWindow : public QMainWindow
{
    Q_OBJECT

public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    // Opens a project file (no unsaved-changes prompt: callers ask first). On failure the
    // current document stays as it was, the error is shown and lastError() holds it.
    // An attention file (.npy, .npz, .safetensors) is read on a worker: this returns true once
    // the read has started, and attentionOpened() or openFailed() follows.
    bool openFile(const QString &path);
    // Opens a built-in example (":/examples/NAME.attnscope.json") as an untitled document.
    bool openExample(const QString &resourcePath);
    void newDocument();
    // File > New Window: another window with a new project of its own, so that several sources
    // (a project being edited, an attention file, a model run) are open side by side. Windows
    // rather than tabs: each keeps the docks and toolbars its source needs, and two can be put
    // on two screens or side by side to compare. It deletes itself when closed.
    MainWindow *openNewWindow();
    bool saveTo(const QString &path);
    // One sentence on what a save did with a `{"npy": ...}` reference (Document::lastSaveNotes()).
    static QString referenceNoteText(const ReferenceNote &note);
    static QStringList exampleFiles();

    Document *document() const { return m_document; }
    ComputeController *computeController() const { return m_compute; }
    // Shown in the status bar while a computation has run for more than kProgressAfterMs.
    QProgressBar *computeProgressBar() const { return m_computeProgress; }
    static constexpr int kProgressAfterMs = 500;
    ComputedTracePtr currentResult() const { return m_result; }
    QString lastError() const { return m_lastError; }
    QString statusText() const;

    // After a failed computation the views still hold the last result, which no longer
    // matches the document: they are greyed and a banner names the failure (staleReason(),
    // with advice for its kind). The next result clears it.
    bool resultIsStale() const { return m_stale; }
    QString staleReason() const { return m_staleReason; }
    // What to tell the user about a failed computation of this kind ("device lost: choose
    // the CPU..."); empty where there is nothing to add to the message.
    static QString failureAdvice(ErrorKind kind);

    // Autosave and crash recovery (MainWindowFiles.cpp).
    Autosaver *autosaver() const { return m_autosaver; }
    // Offers the recovery copies left by runs that are gone, newest first: Recover opens one
    // as a modified document with its original path; Discard deletes it. A copy that cannot be
    // read is shown with its error: Keep leaves it, Discard deletes it. `answer` answers
    // without asking (true: recover, or keep an unreadable copy), for tests of the executable.
    // Returns whether a copy was recovered.
    bool offerRecovery(std::optional<bool> answer = std::nullopt);

    // Imported attention (MainWindowAttention.cpp): a read-only document of L layers. The
    // heads grid, the enlarged head, the mean and the head view show the current layer; the
    // model view, the statistics and the rollout show every layer (a project's one layer
    // when a project is open).
    bool openAttentionFile(const QString &path);
    LoadedAttentionPtr attention() const { return m_attention; }
    bool isReadOnly() const { return m_attention != nullptr; }

    // Real models (MainWindowModel.cpp): a Hugging Face GPT-2 or BERT folder, loaded on a
    // worker; the text box's sentence is run through it and shown as a read-only document.
    bool openModel(const QString &dir);
    // The built-in example model (File > Examples), after asking to save a modified project;
    // false with a message when it is not installed or the answer was Cancel.
    bool openExampleModel();
    // Head `head` of layer `layer` of the current model run as a new, editable project.
    bool openHeadInEditor(int layer, int head);
    ModelRunPtr modelRun() const { return m_modelRun; }
    QLineEdit *modelTextEdit() const { return m_modelText; }
    ModelController *modelJobs() const { return m_modelJobs; }
    AttentionController *attentionController() const { return m_attentionJobs; }
    ModelView *modelView() const { return m_views->modelView(); }
    StatsTable *statsTable() const { return m_views->statsTable(); }
    RolloutView *rolloutView() const { return m_views->rolloutView(); }
    QSpinBox *layerSelector() const { return m_layerSpin; }
    QAction *mergeWordsAction() const { return m_mergeWordsAction; }
    int currentLayer() const { return m_layer; }
    void setCurrentLayer(int layer);
    // Shows that (layer, head) in the heads grid and the enlarged head (0-based).
    void activateHead(int layer, int head);
    // What the views show now (ShownAttention): the set the model view, the statistics and the
    // rollout describe, and the layer the heads, the enlarged head, the mean and the head view
    // draw (a project's trace; a file's or a model run's layer once read: attentionShown()).
    const ShownAttention &shownAttention() const { return m_views->attention(); }
    // A long attention file (isLongAttention): its heads open in this pooled view (the "Head,
    // pooled" tab) instead of the heads grid, read block by block from the mapped file.
    bool isLongAttentionShown() const { return m_longAttention; }
    PooledHeatmapView *attentionPooledView() const { return m_views->filePooled(); }

    // Long sequences (MainWindowPooled.cpp): a project too large for full traces
    // (needsPooledView) is shown pooled instead of the tabs, with a notice saying why.
    // The memory budget and the size from which a project is shown pooled (MemoryBudget.h):
    // the defaults unless set; handed to the document, the computations and the attention jobs.
    // A new budget applies from the next edit, computation or file opened on.
    const MemoryBudget &memoryBudget() const { return m_budget; }
    void setMemoryBudget(const MemoryBudget &budget);
    PooledHeatmapView *pooledView() const { return m_pooled; }
    bool isPooledMode() const { return m_pooledMode; }
    QLabel *pooledNotice() const { return m_pooledNotice; }

    AttentionViews *views() const { return m_views; }
    HeadsGridView *headsGrid() const { return m_views->grid(); }
    HeatmapView *headView() const { return m_views->headView(); }
    HeatmapView *meanView() const { return m_views->meanView(); }
    HeadLinesView *headLinesView() const { return m_views->lines(); }
    TeachingView *teachingView() const { return m_views->teaching(); }
    BatchBar *batchBar() const { return m_batchBar; }
    MaskEditor *maskEditor() const { return m_mask; }
    ModelPanel *modelPanel() const { return m_model; }
    MatrixEditor *matrixEditor(MatrixId id) const;
    QTabWidget *viewTabs() const { return m_views->tabs(); }
    void setCurrentHead(int head);
    void setColorMap(ColorMapKind kind);

    // Export (MainWindowExport.cpp). The dialogs open window-modal and delete themselves on
    // close; null while there is no result to export.
    FigureOptions currentFigureOptions() const; // the view in front, with its settings
    ExportFigureDialog *showExportFigureDialog();
    ExportDataDialog *showExportDataDialog();
    bool copyFigure(); // the view in front, as an image on the clipboard
    QAction *copyFigureAction() const { return m_copyFigureAction; }

signals:
    // Every view shows this project result now (the edit-to-repaint benchmark waits for it).
    void resultShown(attnscope::ComputedTracePtr result);
    // The views show new contents: a project's result, or a file's or a model run's layer.
    void attentionShown();
    // An attention file is the document now, or could not be read (lastError() says why).
    void attentionOpened(const QString &path);
    void modelRunShown(attnscope::ModelRunPtr run);
    void openFailed(const QString &path, const QString &message);
    // The model view, the statistics or the rollout received new contents.
    void attentionViewsUpdated();

protected:
    void closeEvent(QCloseEvent *event) override;
    void dragEnterEvent(QDragEnterEvent *event) override;
    void dropEvent(QDropEvent *event) override;

private:
    void createViews();
    void createDocks();
    void createActions();
    void createStatusBar();
    void updateComputeProgress();
    // The pooled view in front (a long project, or a long attention file's pooled tab), if any:
    // figures are drawn from its visible block.
    PooledHeatmapView *pooledInFront() const;
    // The document's name without its suffix ("tutorial" for tutorial.attnscope.json).
    QString documentStem() const;
    // What a pooled figure's title names: the document, or the attention file and its layer.
    QString pooledFigureName() const;
    void createExportActions(QMenu *file, QMenu *edit);
    QString suggestedExportPath(const QString &suffix) const;
    // behindReadOnly: the document stands behind an attention file (stays in attention mode).
    void setDocument(Document *document, bool behindReadOnly = false);
    void setBlankDocumentBehind();
    void requestCompute();
    void showResult(ComputedTracePtr result);
    void applyViewSettings();
    void updateTitle();
    void setBackend(BackendRequest request, const QString &vulkanDevice = {});
    void computeFailed(const QString &message, ErrorKind kind);
    // headline: what the banner says above the reason (default: a computation failed).
    void setStale(bool stale, const QString &reason = {}, const QString &headline = {});
    // What a job over the set is asked with: the views' set, merged into words or not as the
    // View menu says now.
    ShownAttention requestedAttention() const;
    void createPooledView(QVBoxLayout *central);
    bool showPooledIfNeeded(); // true: the document is shown pooled, no full computation
    void setPooledMode(bool pooled);

    // Imported attention (MainWindowAttention.cpp).
    void createAttentionJobs();
    void createAttentionActions(QToolBar *bar);
    void showAttention(LoadedAttentionPtr attention);
    void leaveAttentionMode();
    void setEditingEnabled(bool enabled);
    void refreshAttentionViews(bool layerToo);
    void setLongAttentionMode(bool on);
    void showLongAttentionLayer(); // the current layer in m_filePooled
    // The attention file shown changed on disk (the script that wrote it ran again): its views
    // are greyed under a banner that says so, with a Reopen button. Returns false then.
    bool checkAttentionSource();
    void showAttentionSourceChanged(const QString &message);
    void watchAttentionFile(const QString &path); // empty: none

    // Real models (MainWindowModel.cpp).
    void createModelViews(QMenu *file);
    void createExampleModelAction();
    void showModelRun(ModelPtr model, ModelRunPtr run, const AttentionSet &set);

    // File handling (MainWindowFiles.cpp).
    bool maybeSave();
    void open();
    bool save();
    bool saveAs();
    static void addRecentFile(const QString &path); // any thread
    void fillRecentMenu();
    void fillExamplesMenu();
    // Shows a project read from path (a resource path, or a file that becomes the document's).
    bool openProject(const QString &path, Result<Project> project);
    void showError(const QString &message);
    void readSettings();
    void writeSettings();

    QPointer<Document> m_document;
    ComputeController *m_compute;
    MemoryBudget m_budget;
    quint64 m_documentGeneration = 0; // the current document's first computation (setDocument)
    ComputedTracePtr m_result;        // the project's newest result
    QUndoGroup *m_undoGroup;
    QString m_lastError;
    Autosaver *m_autosaver = nullptr;
    bool m_stale = false;
    QString m_staleReason;

    AttentionViews *m_views = nullptr;
    QLabel *m_staleBanner = nullptr;
    QPushButton *m_reopenButton = nullptr;       // beside the banner when the file changed on disk
    QFileSystemWatcher *m_fileWatcher = nullptr; // the attention file shown
    PooledHeatmapView *m_pooled = nullptr;
    QLabel *m_pooledNotice = nullptr;
    bool m_pooledMode = false;
    bool m_maskDockWasVisible = true;
    // The toolbar's linear scale was switched to log for a project shown pooled (on linear
    // 0..1 a long head is one dark colour); given back when it leaves, unless the user chose.
    bool m_logForPooled = false;
    bool m_settingScale = false;
    BatchBar *m_batchBar = nullptr;
    MaskEditor *m_mask = nullptr;
    ModelPanel *m_model = nullptr;
    std::map<MatrixId, MatrixEditor *> m_editors;

    QComboBox *m_colorMapBox = nullptr;
    QComboBox *m_quantityBox = nullptr;
    QComboBox *m_scopeBox = nullptr;
    QComboBox *m_colorScaleBox = nullptr;
    QCheckBox *m_valuesBox = nullptr;
    QCheckBox *m_overlayBox = nullptr;
    QMenu *m_recentMenu = nullptr;
    QMenu *m_examplesMenu = nullptr;
    QMenu *m_viewMenu = nullptr;
    QActionGroup *m_backendGroup = nullptr;
    QAction *m_copyFigureAction = nullptr;
    QAction *m_saveAction = nullptr;
    QAction *m_saveAsAction = nullptr;

    AttentionController *m_attentionJobs = nullptr;
    LoadedAttentionPtr m_attention;
    QSpinBox *m_layerSpin = nullptr;
    QAction *m_layerAction = nullptr;
    QAction *m_mergeWordsAction = nullptr;
    int m_layer = 0;
    bool m_longAttention = false;
    ModelController *m_modelJobs = nullptr;
    QString m_modelSummary; // "Model: NAME (GPT-2, L layers, H heads)", before where it ran
    ModelPtr m_transformer; // the model the read-only document shows, null for none
    ModelRunPtr m_modelRun;
    QString m_modelDir;
    QLineEdit *m_modelText = nullptr;
    QAction *m_openHeadAction = nullptr;
    std::map<QString, bool> m_dockVisible; // before a read-only document hid them

    ElidedLabel *m_backendLabel = nullptr;
    QLabel *m_timeLabel = nullptr;
    QProgressBar *m_computeProgress = nullptr;
    QTimer *m_computeProgressTimer = nullptr;
    ElidedLabel *m_noticeLabel = nullptr;  // a fallback's notice or a failure, until the next result
    ElidedLabel *m_messageLabel = nullptr; // timed messages ("Saved ..."), elided, whole in the tooltip
    QString m_lastDir;
};

} // namespace attnscope
