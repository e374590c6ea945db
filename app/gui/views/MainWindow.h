#pragma once

#include "app/gui/document/ComputeController.h"
#include "app/gui/document/Document.h"
#include "app/gui/views/HeatmapView.h"
#include "app/render/FigureExporter.h"

#include <QMainWindow>
#include <QPointer>

#include <map>
#include <optional>

class QAction;
class QActionGroup;
class QCheckBox;
class QComboBox;
class QLabel;
class QMenu;
class QTabWidget;
class QUndoGroup;

namespace attnscope {

class Autosaver;
class ExportDataDialog;
class ExportFigureDialog;
class HeadLinesView;
class MaskEditor;
class MatrixEditor;
class ModelPanel;
class TeachingView;
class BatchBar;

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
    bool openFile(const QString &path);
    // Opens a built-in example (":/examples/NAME.attnscope.json") as an untitled document.
    bool openExample(const QString &resourcePath);
    void newDocument();
    bool saveTo(const QString &path);
    static QStringList exampleFiles();

    Document *document() const { return m_document; }
    ComputeController *computeController() const { return m_compute; }
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
    // Offers the recovery copies left by processes that are gone, newest first: Recover
    // opens one as a modified document with its original path; Discard deletes it. `answer`
    // answers without asking (true: recover), for tests of the executable. Returns whether
    // a copy was recovered.
    bool offerRecovery(std::optional<bool> answer = std::nullopt);

    HeadsGridView *headsGrid() const { return m_grid; }
    HeatmapView *headView() const { return m_headView; }
    HeatmapView *meanView() const { return m_meanView; }
    HeadLinesView *headLinesView() const { return m_lines; }
    TeachingView *teachingView() const { return m_teaching; }
    BatchBar *batchBar() const { return m_batchBar; }
    MaskEditor *maskEditor() const { return m_mask; }
    ModelPanel *modelPanel() const { return m_model; }
    MatrixEditor *matrixEditor(MatrixId id) const;
    QTabWidget *viewTabs() const { return m_tabs; }
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
    // Every view shows this result now (the edit-to-repaint benchmark waits for it).
    void resultShown(attnscope::ComputedTracePtr result);

protected:
    void closeEvent(QCloseEvent *event) override;
    void dragEnterEvent(QDragEnterEvent *event) override;
    void dropEvent(QDropEvent *event) override;

private:
    void createViews();
    void createDocks();
    void createActions();
    void createStatusBar();
    void createExportActions(QMenu *file, QMenu *edit);
    QString suggestedExportPath(const QString &suffix) const;
    void setDocument(Document *document);
    void requestCompute();
    void showResult(ComputedTracePtr result);
    void applyViewSettings();
    void updateTitle();
    void setBackend(BackendRequest request, const QString &vulkanDevice = {});
    void computeFailed(const QString &message, ErrorKind kind);
    void setStale(bool stale, const QString &reason = {});

    // File handling (MainWindowFiles.cpp).
    bool maybeSave();
    void open();
    bool save();
    bool saveAs();
    void addRecentFile(const QString &path);
    void fillRecentMenu();
    void fillExamplesMenu();
    void showError(const QString &message);
    void readSettings();
    void writeSettings();

    QPointer<Document> m_document;
    ComputeController *m_compute;
    ComputedTracePtr m_result;
    QUndoGroup *m_undoGroup;
    QString m_lastError;
    Autosaver *m_autosaver = nullptr;
    bool m_stale = false;
    QString m_staleReason;

    QTabWidget *m_tabs = nullptr;
    QLabel *m_staleBanner = nullptr;
    HeadsGridView *m_grid = nullptr;
    HeatmapView *m_headView = nullptr;
    HeatmapView *m_meanView = nullptr;
    HeadLinesView *m_lines = nullptr;
    TeachingView *m_teaching = nullptr;
    BatchBar *m_batchBar = nullptr;
    MaskEditor *m_mask = nullptr;
    ModelPanel *m_model = nullptr;
    std::map<MatrixId, MatrixEditor *> m_editors;

    QComboBox *m_colorMapBox = nullptr;
    QComboBox *m_quantityBox = nullptr;
    QComboBox *m_scopeBox = nullptr;
    QCheckBox *m_valuesBox = nullptr;
    QCheckBox *m_overlayBox = nullptr;
    QMenu *m_recentMenu = nullptr;
    QMenu *m_examplesMenu = nullptr;
    QMenu *m_viewMenu = nullptr;
    QActionGroup *m_backendGroup = nullptr;
    QAction *m_copyFigureAction = nullptr;

    QLabel *m_backendLabel = nullptr;
    QLabel *m_timeLabel = nullptr;
    QLabel *m_noticeLabel = nullptr;
    QString m_lastDir;
};

} // namespace attnscope
