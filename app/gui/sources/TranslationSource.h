#pragma once

#include "app/gui/document/TranslationController.h"
#include "app/gui/sources/SetSource.h"

#include <QPointer>

class QComboBox;
class QDockWidget;
class QLabel;
class QLineEdit;

namespace attnscope {

class AlignmentView;

// A translation model folder (Marian) run on typed text, as a read-only source (issue 27). The
// model is loaded on a worker: ready() follows its first translation, failed() a folder that
// cannot be loaded. Above the views: the source text (typing it translates again, the older
// request cancelled), the target text (typed: teacher-forced; empty: the model's greedy
// translation, shown beside it), and which attention the views show: the encoder's
// self-attention (source by source), the decoder's (target by target) or the cross-attention
// (target by source). The Alignment dock draws the current decoder layer's cross-attention as
// lines from the target words below to the source words above, with the two reading aids
// (shift by one step, hide </s>). Any head of any kind opens in the editor with the model's real
// inputs and weights; a cross-attention head as a cross-attention project with the decoder's
// queries and the encoder's keys and values.
class TranslationSource : public SetSource
{
    Q_OBJECT

public:
    explicit TranslationSource(SourceHost &host, QObject *parent = nullptr);
    ~TranslationSource() override;

    void load(const QString &dir);
    TranslationController *jobs() const { return m_jobs; }
    const Translation &translation() const { return m_translation; }
    TranslationAttention kind() const;
    void setKind(TranslationAttention kind);
    QLineEdit *sourceEdit() const { return m_source; }
    QLineEdit *targetEdit() const { return m_target; }
    QLabel *translationLabel() const { return m_result; }
    AlignmentView *alignmentView() const { return m_alignment; }

    void setLayer(int layer) override;
    void setInFront(bool front) override;
    bool hasHeadProjects() const override { return true; }
    std::optional<Project> headProject(int layer, int head) const override;

signals:
    void translationShown(); // the views and the alignment show a new translation

protected:
    QString origin() const override { return m_summary; }

private:
    // "encoder", "decoder" or "cross-attention", in projects' and layers' titles.
    static QString kindName(TranslationAttention kind);
    void showTranslation(const TranslationModelPtr &model, const Translation &translation);
    void showKind(bool keepView);
    void updateAlignment();
    void request();

    TranslationController *m_jobs;
    QPointer<QWidget> m_rows; // the two text rows (in the window's layout, which may go first)
    QLineEdit *m_source;
    QLineEdit *m_target;
    QLabel *m_result;
    QComboBox *m_kind;
    AlignmentView *m_alignment;
    QPointer<QDockWidget> m_dock;
    TranslationModelPtr m_model;
    Translation m_translation;
    QString m_loadedDir, m_summary;
};

} // namespace attnscope
