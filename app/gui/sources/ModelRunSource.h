#pragma once

#include "app/gui/document/ModelController.h"
#include "app/gui/sources/SetSource.h"

#include <QPointer>

class QLabel;
class QLineEdit;

namespace attnscope {

// A model folder (GPT-2, BERT) run on typed text, as a read-only source. The model is loaded on a
// worker: ready() follows its first run, failed() a folder that cannot be loaded. The text box
// above the views runs each sentence as it is typed (a newer text supersedes an older one), and
// any head opens as an editable project with the model's real inputs and weights.
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

    void setInFront(bool front) override;
    bool hasHeadProjects() const override { return true; }
    std::optional<Project> headProject(int layer, int head) const override;

signals:
    void runShown(attnscope::ModelRunPtr run);
    // The user asked to compare this text with another on the same model (the window opens the
    // comparison: ComparisonSource).
    void compareRequested();

protected:
    QString origin() const override { return m_summary; }

private:
    void showRun(const ModelPtr &model, ModelRunPtr run, const AttentionSet &set);

    ModelController *m_jobs;
    QPointer<QWidget> m_textRow; // "Text:", the box and the hint (in the window's layout, which may go first)
    QLineEdit *m_text;
    QLabel *m_hint;
    QAction *m_compare;
    ModelPtr m_model; // the model whose run is shown
    ModelRunPtr m_run;
    QString m_loadedDir; // the folder of the model loaded last
    QString m_summary;   // "Model: NAME (GPT-2, L layers, H heads)", before where it ran
};

} // namespace attnscope
