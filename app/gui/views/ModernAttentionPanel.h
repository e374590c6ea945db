#pragma once

#include "app/gui/document/Document.h"

#include <QPointer>
#include <QWidget>

class QCheckBox;
class QDoubleSpinBox;
class QLineEdit;
class QToolButton;

namespace attnscope {

// design.md's "Modern attention" fields of the Model dock that are no size: RoPE (on/off, base,
// the query and key positions) and soft-capping (on/off, value). Every change is a document verb
// (one undo step); a value the document refuses leaves it as it was and the field shows it again.
// Key/value heads sit with the heads in ModelPanel; sinks are a matrix (MatrixId::Sinks), the
// sliding window is a part of the mask (MaskEditor).
// The fields fold away under their title, so that the Model dock still shows every other field
// without scrolling on a 1600×1000 screen; a document that uses RoPE or a soft-cap opens them.
class ModernAttentionPanel : public QWidget
{
    Q_OBJECT

public:
    explicit ModernAttentionPanel(QWidget *parent = nullptr);

    void setDocument(Document *document);
    bool isExpanded() const;
    void setExpanded(bool expanded);
    QToolButton *expandButton() const { return m_expand; }

    QCheckBox *ropeBox() const { return m_rope; }
    QDoubleSpinBox *ropeBaseBox() const { return m_ropeBase; }
    QLineEdit *queryPositionsEdit() const { return m_queryPositions; }
    QLineEdit *keyPositionsEdit() const { return m_keyPositions; }
    QCheckBox *softcapBox() const { return m_softcap; }
    QDoubleSpinBox *softcapValueBox() const { return m_softcapValue; }

private:
    void updateFromDocument(bool keepTyped);
    void applyPositions(TokenSide side);

    QPointer<Document> m_document;
    QToolButton *m_expand;
    QWidget *m_fields;
    QCheckBox *m_rope;
    QDoubleSpinBox *m_ropeBase;
    QLineEdit *m_queryPositions;
    QLineEdit *m_keyPositions;
    QCheckBox *m_softcap;
    QDoubleSpinBox *m_softcapValue;
};

} // namespace attnscope
