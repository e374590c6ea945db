#include "app/gui/views/BatchBar.h"

#include "app/gui/document/Document.h"
#include "app/gui/views/PlainText.h"
#include "core/formats/BatchedProject.h"

#include <QCoreApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QSpinBox>

namespace attnscope {

BatchBar::BatchBar(QWidget *parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("batchBar"));
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(6, 2, 6, 2);
    m_notice = plainLabel();
    m_notice->setObjectName(QStringLiteral("batchNotice"));
    m_notice->setWordWrap(true);
    m_notice->setStyleSheet(QStringLiteral("QLabel { color: #0b4f8a; }"));
    m_sequence = new QSpinBox;
    m_sequence->setObjectName(QStringLiteral("batchSequence"));
    m_sequence->setPrefix(tr("Sequence "));
    m_sequence->setAccessibleName(tr("Sequence"));
    layout->addWidget(m_sequence);
    layout->addWidget(m_notice, 1);
    connect(m_sequence, &QSpinBox::valueChanged, this, &BatchBar::showSequence);
    hide();
}

void BatchBar::setDocument(Document *document)
{
    if (m_document)
        disconnect(m_document, nullptr, this, nullptr);
    m_document = document;
    if (document)
        connect(document, &Document::changed, this, &BatchBar::sync);
    sync();
}

QString BatchBar::noticeText() const
{
    return m_notice->text();
}

void BatchBar::sync()
{
    const Project *project = m_document ? &m_document->project() : nullptr;
    if (!project || !project->batch) {
        hide();
        return;
    }
    const BatchedProject batch(*project);
    m_syncing = true;
    m_sequence->setRange(0, batch.sequenceCount() - 1);
    m_sequence->setValue(project->batch->shown);
    m_syncing = false;
    QString text = tr("This project holds a batch of %1 sequences; sequence %2 is shown (counting from 0). "
                      "Edits change the shown sequence; saving keeps every sequence.")
                       .arg(batch.sequenceCount())
                       .arg(project->batch->shown);
    if (!batch.sequencesAgree())
        text = tr("The shown sequence no longer has the shape of the other %1 sequences: saving writes it alone, "
                  "without the others.")
                   .arg(batch.sequenceCount() - 1);
    m_notice->setText(text);
    show();
}

void BatchBar::showSequence(int sequence)
{
    if (m_syncing || !m_document || !m_document->project().batch)
        return;
    m_document->applyProject(withSequenceShown(m_document->project(), sequence), Document::AllChanged);
}

QString batchShapesHtml(const Project &project)
{
    if (!project.batch)
        return {};
    const AttentionProblem &p = project.problem;
    const int b = BatchedProject(project).sequenceCount(), h = p.spec.heads;
    auto shape = [](std::initializer_list<qint64> dims) {
        QStringList parts;
        for (qint64 d : dims)
            parts << QString::number(d);
        return QStringLiteral("[%1]").arg(parts.join(QStringLiteral(", ")));
    };
    return QCoreApplication::translate(
               "attnscope::BatchBar",
               "<p style='color:#0b4f8a'>A batch of %1 sequences; below is sequence %2 alone. In the tutorials' "
               "code the tensors carry the batch first: Q %3 [B, H, Tq, dK], K %4 and V %5 [B, H, Tk, d], "
               "scores and weights %6 [B, H, Tq, Tk], context %7 [B, Tq, H·dV], output %8 [B, Tq, d_out].</p>")
        .arg(b)
        .arg(project.batch->shown)
        .arg(shape({b, h, p.tq(), p.spec.headDimQK}))
        .arg(shape({b, h, p.tk(), p.spec.headDimQK}))
        .arg(shape({b, h, p.tk(), p.spec.headDimV}))
        .arg(shape({b, h, p.tq(), p.tk()}))
        .arg(shape({b, p.tq(), p.vWidth()}))
        .arg(shape({b, p.tq(), p.dOut()}));
}

} // namespace attnscope
