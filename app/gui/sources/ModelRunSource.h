#pragma once

#include "app/gui/document/GenerationController.h"
#include "app/gui/document/ModelController.h"
#include "app/gui/sources/SetSource.h"

#include <QPointer>

class QDockWidget;
class QLabel;
class QLineEdit;

namespace attnscope {

class GenerationPanel;

// A model folder (GPT-2, BERT) run on typed text, as a read-only source. The model is loaded on a
// worker: ready() follows its first run, failed() a folder that cannot be loaded. The text box
// above the views runs each sentence as it is typed (a newer text supersedes an older one), and
// any head opens as an editable project with the model's real inputs and weights. A decoder
// generates after the typed text in the Generation dock (GenerationPanel): each step's row grows
// every view, its candidates are charted, and any step can be forced to another candidate; once
// the steps stop, one forward over the whole sequence gives the run the editor and the steps
// view read.
class ModelRunSource : public SetSource
{
    Q_OBJECT

public:
    explicit ModelRunSource(SourceHost &host, QObject *parent = nullptr);
    ~ModelRunSource() override;

    // Loads a model folder; its first run replaces the one shown (if any) and keeps the text.
    void load(const QString &dir);
    ModelController *jobs() const { return m_jobs; }
    ModelRunPtr run() const { return m_run; }
    ModelPtr shownModel() const { return m_model; } // the model whose run is shown
    // "Compare With Another Text…" (beside the text box and in the View menu): compareRequested().
    QAction *compareAction() const { return m_compare; }
    QLineEdit *textEdit() const { return m_text; }
    // Beside the text box: the heads worth a look, where the model is one AttnScope knows (the
    // built-in example); empty otherwise.
    QLabel *hintLabel() const { return m_hint; }
    GenerationController *generation() const { return m_generation; }
    GenerationPanel *generationPanel() const { return m_panel; }
    // Writes tokens.json (with the steps) and attentions.npy [L,H,T,T] of the generation shown.
    Status saveGeneration(const QString &dir) const;

    void setInFront(bool front) override;
    bool hasHeadProjects() const override { return true; }
    std::optional<Project> headProject(int layer, int head) const override;

signals:
    void runShown(attnscope::ModelRunPtr run);
    void generationShown(attnscope::GenerationShotPtr shot); // the views show this step
    // The user asked to compare this text with another on the same model (the window opens the
    // comparison: ComparisonSource).
    void compareRequested();

protected:
    QString origin() const override { return m_summary; }

private:
    void showRun(const ModelPtr &model, ModelRunPtr run, const AttentionSet &set);
    void showGeneration(const GenerationShotPtr &shot);
    // Generate (steps = the most new tokens) or Step (1): more of the generation shown, or a new
    // one after the text in the box.
    void requestSteps(int steps);
    void generationStopped(const GenerationShotPtr &shot);

    ModelController *m_jobs;
    QPointer<QWidget> m_textRow; // "Text:", the box and the hint (in the window's layout, which may go first)
    QLineEdit *m_text;
    QLabel *m_hint;
    QAction *m_compare;
    ModelPtr m_model; // the model whose run is shown
    ModelRunPtr m_run;
    QString m_loadedDir; // the folder of the model loaded last
    QString m_summary;   // "Model: NAME (GPT-2, L layers, H heads)", before where it ran
    GenerationController *m_generation;
    GenerationPanel *m_panel;
    QPointer<QDockWidget> m_dock;          // the window's child, which may go first
    std::vector<std::int32_t> m_generated; // the ids of the generation shown (its final run matches them)
};

} // namespace attnscope
