#pragma once

#include "app/gui/document/ComputeController.h"
#include "app/gui/document/Document.h"
#include "app/gui/document/ExampleModel.h"
#include "app/gui/document/ModelController.h"
#include "app/gui/sources/Source.h"

#include <QMainWindow>
#include <QPointer>

namespace attnscope {

class AttentionController;
class AttentionViews;
class BackendMenu;
class ComparisonSource;
struct ComparisonSide;
class FigureActions;
class ModelRunSource;
class PresentationMode;
class ProjectSource;
class SetSource;
class StaleBanner;
class ViewToolBar;
class WindowStatus;

// The window: a shell that hosts one source at a time (a project being edited, an attention file,
// a model run: Source.h) and lends it the views, the status bar, the banner over the views, the
// View toolbar and the menus. It routes File > Open to the source that reads the path, brings a
// source to the front once it is ready (a failed open changes nothing), and knows no source's
// kind beyond making it. Several sources open side by side are several windows (File > New
// Window): each keeps the docks and toolbars its source needs, and two can be put on two screens.
class MainWindow : public QMainWindow
{
    Q_OBJECT

public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    // A project file, an attention file (.npy, .npz, .safetensors: read on a worker, true once the
    // read has started; attentionOpened() or openFailed() follows) or a model folder.
    bool openFile(const QString &path);
    // A built-in example (":/examples/NAME.attnscope.json") as an untitled project.
    bool openExample(const QString &resourcePath);
    // A Hugging Face GPT-2 or BERT folder, loaded on a worker and run on the text box's sentence.
    bool openModel(const QString &dir);
    // A built-in example model, after asking to save a modified project; false with a message
    // when it is not installed or the answer was Cancel.
    bool openExampleModel(ExampleModelId which = ExampleModelId::TinyGpt2);
    // Two runs compared (ComparisonSource): shown once both are read and compared; false, with
    // the side's problem in one line, when a side is not an attention file or a model folder
    // with a text. A comparison that fails to open changes nothing (openFailed()).
    bool openComparison(const ComparisonSide &a, const ComparisonSide &b);
    // The project as saved (A) against the project as edited (B, in memory), in a new window (this
    // one keeps the project and its unsaved edits). The window the comparison opens in, or null
    // (no file, or a problem said in the status bar).
    MainWindow *compareWithSaved();
    // Head `head` of layer `layer` of the source in front as a new, editable project.
    bool openHeadInEditor(int layer, int head);
    void newDocument();
    // File > New Window: another window with a new project of its own; deleted when closed.
    MainWindow *openNewWindow();
    bool offerRecovery(std::optional<bool> answer = std::nullopt); // ProjectSource::offerRecovery
    static QStringList exampleFiles();

    // The memory budget every source of the window is held to (MemoryBudget.h), from the next
    // edit, computation or file opened on.
    const MemoryBudget &memoryBudget() const { return m_host.budget; }
    void setMemoryBudget(const MemoryBudget &budget);

    Source *source() const { return m_source; } // in front
    ProjectSource *project() const { return m_project; }
    SetSource *setSource() const;               // the file or model run in front, or null
    ModelRunSource *modelSource() const;        // the model run in front or being opened, or null
    ComparisonSource *comparisonSource() const; // the comparison in front or being opened, or null
    AttentionViews *views() const { return m_host.views; }
    AttentionController *attentionController() const { return m_host.jobs; }
    WindowStatus *status() const { return m_host.status; }
    StaleBanner *banner() const { return m_host.banner; }
    ViewToolBar *viewBar() const { return m_host.viewBar; }
    FigureActions *figures() const { return m_figures; }
    PresentationMode *presentation() const { return m_presentation; } // View > Presentation Mode
    QString lastError() const;
    QString statusText() const;
    // What the views show now (ShownAttention): a project's trace, or a file's or a run's layer.
    const ShownAttention &shownAttention() const;
    // The project's, for the many callers that edit and compute (ProjectSource).
    Document *document() const;
    ComputeController *computeController() const;
    ComputedTracePtr currentResult() const;
    // Shows that (layer, head) in the heads grid and the enlarged head (0-based).
    void activateHead(int layer, int head);

signals:
    // Every view shows this project result now (the edit-to-repaint benchmark waits for it).
    void resultShown(attnscope::ComputedTracePtr result);
    // The views show new contents: a project's result, or a file's or a model run's layer.
    void attentionShown();
    // A file or a model folder is shown now, or could not be opened (lastError() says why).
    void attentionOpened(const QString &path);
    void openFailed(const QString &path, const QString &message);
    void modelRunShown(attnscope::ModelRunPtr run);

protected:
    void closeEvent(QCloseEvent *event) override;
    void dragEnterEvent(QDragEnterEvent *event) override;
    void dropEvent(QDropEvent *event) override;

private:
    void createCentral();
    void createMenus();
    // Shows `source` once it is ready: the one in front leaves (deleted, unless it is the project).
    void host(Source *source);
    // Watches a source being opened: shown when ready, dropped when it fails.
    void adopt(Source *source);
    void updateTitle();
    bool maybeSave();
    void open();
    void compare(); // File > Compare…
    void fillRecentMenu(QMenu *menu);
    void fillExamplesMenu(QMenu *menu);
    void readSettings();
    void writeSettings();

    SourceHost m_host;
    ProjectSource *m_project = nullptr;
    Source *m_source = nullptr;
    QPointer<Source> m_pending; // a file being read or a model being loaded, not shown yet
    BackendMenu *m_backendMenu = nullptr;
    FigureActions *m_figures = nullptr;
    QAction *m_openHead = nullptr;
    PresentationMode *m_presentation = nullptr;
};

} // namespace attnscope
