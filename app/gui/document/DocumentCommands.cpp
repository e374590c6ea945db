#include "app/gui/document/DocumentCommands.h"

namespace attnscope {

ChangeValueCommand::ChangeValueCommand(Document *document, CommandId id, QVariant key, QVariant oldValue,
                                       QVariant newValue, Setter setter, const QString &text, bool mergeable)
    : QUndoCommand(text), m_document(document), m_id(id), m_key(std::move(key)), m_old(std::move(oldValue)),
      m_new(std::move(newValue)), m_setter(std::move(setter)), m_mergeable(mergeable)
{
}

void ChangeValueCommand::undo()
{
    m_setter(m_document, m_old);
}

void ChangeValueCommand::redo()
{
    m_setter(m_document, m_new);
}

int ChangeValueCommand::id() const
{
    return m_mergeable ? int(m_id) : -1;
}

bool ChangeValueCommand::mergeWith(const QUndoCommand *other)
{
    const auto *o = static_cast<const ChangeValueCommand *>(other);
    if (!o->m_mergeable || o->m_key != m_key)
        return false;
    m_new = o->m_new;
    setObsolete(m_new == m_old);
    return true;
}

ProjectSnapshotCommand::ProjectSnapshotCommand(Document *document, Project before, Project after,
                                               Document::Changes what, const QString &text, int mergeKey)
    : QUndoCommand(text), m_document(document), m_before(std::move(before)), m_after(std::move(after)), m_what(what),
      m_mergeKey(mergeKey)
{
}

void ProjectSnapshotCommand::undo()
{
    m_document->applyProject(m_before, m_what);
}

void ProjectSnapshotCommand::redo()
{
    m_document->applyProject(m_after, m_what);
}

int ProjectSnapshotCommand::id() const
{
    return m_mergeKey != 0 ? int(CommandId::MaskStroke) : -1;
}

bool ProjectSnapshotCommand::mergeWith(const QUndoCommand *other)
{
    const auto *o = static_cast<const ProjectSnapshotCommand *>(other);
    if (o->m_mergeKey != m_mergeKey)
        return false;
    m_after = o->m_after;
    m_what |= o->m_what;
    return true;
}

} // namespace attnscope
