#pragma once

#include "app/gui/document/Document.h"

#include <QUndoCommand>
#include <QVariant>

#include <functional>

namespace attnscope {

// Merge ids, one per field, in one enum (Tiled's convention): consecutive mergeable commands
// with the same id and the same key become one undo step. An id is never shared between
// fields, so edits of two fields never merge whatever keys their callers pass.
enum class CommandId {
    CellValue = 1,
    TokenLabel,
    ScaleValue, // the custom scale's number; switching the scale mode never merges
    ScaleMode,
    MaskFill,
    Title,
    MaskStroke,
    RopeBase,
    SoftcapValue, // the soft-cap's number; turning it on or off never merges
    MaskWindow,
};

// The one generic "change value" command: stores the old and new value of one field as
// QVariants and applies them through a setter on the document.
class ChangeValueCommand : public QUndoCommand
{
public:
    using Setter = std::function<void(Document *, const QVariant &)>;

    ChangeValueCommand(Document *document, CommandId id, QVariant key, QVariant oldValue, QVariant newValue,
                       Setter setter, const QString &text, bool mergeable);

    void undo() override;
    void redo() override;
    int id() const override;
    bool mergeWith(const QUndoCommand *other) override;

private:
    Document *m_document;
    CommandId m_id;
    QVariant m_key;
    QVariant m_old;
    QVariant m_new;
    Setter m_setter;
    bool m_mergeable;
};

// Structural edits (sizes, tokens, mode, masks, re-initialisation) swap the whole project
// before/after: they touch several matrices at once and must restore them exactly.
class ProjectSnapshotCommand : public QUndoCommand
{
public:
    ProjectSnapshotCommand(Document *document, Project before, Project after, Document::Changes what,
                           const QString &text, int mergeKey = 0);

    void undo() override;
    void redo() override;
    int id() const override;
    bool mergeWith(const QUndoCommand *other) override;

private:
    Document *m_document;
    Project m_before;
    Project m_after;
    Document::Changes m_what;
    int m_mergeKey;
};

} // namespace attnscope
