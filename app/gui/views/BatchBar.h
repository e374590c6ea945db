#pragma once

#include "core/formats/ProjectFile.h"

#include <QPointer>
#include <QWidget>

class QLabel;
class QSpinBox;

namespace attnscope {

class Document;

// Over the views of a batched project (design.md, "A batch"): says that the project holds B
// sequences and which one is shown, and picks it with a "Sequence" spin box. Hidden for a 2-D
// project. Showing another sequence is not an edit (the saved file is the same whichever is
// shown), so it goes to the document directly instead of onto the undo stack.
class BatchBar : public QWidget
{
    Q_OBJECT

public:
    explicit BatchBar(QWidget *parent = nullptr);

    void setDocument(Document *document);
    QSpinBox *sequenceBox() const { return m_sequence; }
    QString noticeText() const;

private:
    void sync();
    void showSequence(int sequence);

    QPointer<Document> m_document;
    QLabel *m_notice = nullptr;
    QSpinBox *m_sequence = nullptr;
    bool m_syncing = false;
};

// The teaching view's note on a batch: the tutorials' 4-D shapes ([B, H, T, d] and so on) with
// this project's numbers; empty for a 2-D project.
QString batchShapesHtml(const Project &project);

} // namespace attnscope
