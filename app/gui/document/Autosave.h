#pragma once

#include "app/gui/document/Document.h"
#include "core/Result.h"

#include <QDateTime>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QTimer>

#include <cstdint>

namespace attnscope {

// Keeps a recovery copy of a modified document, so that a crash or a kill loses at most the
// last interval of edits. The copy is the project file itself (written atomically, by
// AtomicFileWriter) under AppDataLocation/recovery/, with its matrices inline so that it reads back
// wherever it is and whatever became of the project's .npy files (but for very large ones, see
// writeCopy()); a field of its own holds the
// original file path, the process id, and the project's folder and `{"npy": ...}` references,
// which a recovered document gets back (a later Save keeps unchanged references as before).
// A clean document (saved, or undone to its saved state) has no copy; closing or replacing it
// normally removes the copy. At the next start, copies left by runs that are gone are offered
// for recovery, and a copy that cannot be read is offered with its error.
//
// Runs are told apart by an instance id, the process id and a random part: in a PID
// namespace (Flatpak, a container) every start has the same process id, and a new run must
// neither take the name of a crashed one's copy nor think that copy its own. Copies are named
// INSTANCE-N.attnscope.json; each run holds an flock() on INSTANCE.lock in the same folder from
// its first copy on, which the kernel releases when the process ends however it ends, so
// "is its writer still running" is "is its lock still held".
class Autosaver : public QObject
{
    Q_OBJECT

public:
    // What a recovery copy holds besides the project.
    struct Entry {
        QString recoveryPath;
        QString originalPath; // empty for a document never saved
        qint64 pid = 0;
        QString instance; // the run that wrote it; empty for a copy of an older version
        QDateTime saved;
        QString error; // set when the copy cannot be read: it is offered with this, never hidden
    };

    static constexpr int kDefaultIntervalMs = 30000;
    // A referenced matrix of more values than this stays a reference in the copy (see writeCopy).
    static constexpr std::int64_t kMaxInlineValues = std::int64_t(1) << 18;

    explicit Autosaver(QObject *parent = nullptr);
    ~Autosaver() override; // removes this process's copy (a normal exit)

    // ATTNSCOPE_AUTOSAVE_MS overrides the default, for tests that kill the application.
    static int defaultInterval();
    void setInterval(int ms);
    int interval() const { return m_timer.interval(); }
    // Whether a write is scheduled: the document changed and the interval has not yet run out.
    bool isSavePending() const { return m_timer.isActive(); }

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
    // This run's instance id ("PID-RANDOM"), the prefix of its copies' names.
    static QString instanceId();
    // Copies whose run is gone, newest first, unreadable ones included (with their error).
    // This run's copies are never listed, nor those of a run that still holds its lock.
    // Lock files of runs that are gone and left no copy are removed.
    static QList<Entry> orphanedCopies();
    // Writes `project` as a recovery copy (atomically), every matrix inline but unchanged
    // references of more than kMaxInlineValues values (long inputs), which stay references to
    // the original folder. `instance` is the writing run's id; empty means this run's when pid
    // is this process's.
    static Status writeCopy(const QString &path, const Project &project, const QString &originalPath, qint64 pid,
                            const QString &instance = {});
    // Reads a copy back: the project without the recovery field (its folder and references as
    // the original had them), and the entry. A copy written by an older version, whose
    // references were kept, is read against the original project's folder.
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
