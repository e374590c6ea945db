#pragma once

#include "app/gui/document/Document.h"
#include "core/Result.h"

#include <QDateTime>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QTimer>

namespace attnscope {

// Keeps a recovery copy of a modified document, so that a crash or a kill loses at most the
// last interval of edits. The copy is the project file itself (written atomically, by
// AtomicFileWriter) under AppDataLocation/recovery/, named after this process, with the original
// file path and the process id in a field of its own. A clean document (saved, or undone to
// its saved state) has no copy; closing or replacing it normally removes the copy. At the
// next start, copies left by processes that are gone are offered for recovery.
class Autosaver : public QObject
{
    Q_OBJECT

public:
    // What a recovery copy holds besides the project.
    struct Entry {
        QString recoveryPath;
        QString originalPath; // empty for a document never saved
        qint64 pid = 0;
        QDateTime saved;
    };

    static constexpr int kDefaultIntervalMs = 30000;

    explicit Autosaver(QObject *parent = nullptr);
    ~Autosaver() override; // removes this process's copy (a normal exit)

    // ATTNSCOPE_AUTOSAVE_MS overrides the default, for tests that kill the application.
    static int defaultInterval();
    void setInterval(int ms);
    int interval() const { return m_timer.interval(); }

    // Watches this document from now on; the previous one's copy is removed.
    void setDocument(Document *document);
    // Where this process keeps its copy (written or not).
    QString recoveryPath() const { return m_path; }
    // Writes the copy now if the document is modified. False with lastError() on failure.
    bool saveNow();
    // Removes the copy (a clean save, a close, a discarded document).
    void removeCopy();
    QString lastError() const { return m_lastError; }

    static QString recoveryDirectory();
    // Copies whose process is gone, newest first. This process's copy is never listed.
    static QList<Entry> orphanedCopies();
    // Writes `project` as a recovery copy (atomically).
    static Status writeCopy(const QString &path, const Project &project, const QString &originalPath, qint64 pid);
    // Reads a copy back: the project without the recovery field, and the entry.
    static Result<std::pair<Project, Entry>> readCopy(const QString &path);

signals:
    void saved(const QString &path);

private:
    void documentChanged();
    void modifiedChanged(bool modified);

    QPointer<Document> m_document;
    QTimer m_timer;
    QString m_path;
    QString m_lastError;
};

} // namespace attnscope
