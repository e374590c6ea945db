#include "app/gui/document/Autosave.h"

#include "core/ErrorCode.h"
#include "core/io/FileIo.h"
#include "core/io/JsonDocument.h"
#include "core/io/MemoryLimits.h"
#include "core/io/UserText.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRandomGenerator>
#include <QSet>
#include <QStandardPaths>

#include <algorithm>
#include <atomic>

#include <cerrno>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attnscope {

namespace {

constexpr const char *kRecoveryField = "attnscopeRecovery";
const QLatin1String kCopySuffix(".attnscope.json");
const QLatin1String kLockSuffix(".lock");

bool processAlive(qint64 pid)
{
    if (pid <= 0)
        return false;
    // Signal 0 checks existence only; EPERM means it exists but belongs to someone else.
    if (::kill(pid_t(pid), 0) != 0 && errno != EPERM)
        return false;
    // A killed process whose parent has not reaped it yet (a zombie) still answers: it is gone.
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (stat.open(QIODevice::ReadOnly)) {
        const QByteArray line = stat.readAll();
        const qsizetype end = line.lastIndexOf(')');
        if (end >= 0 && end + 2 < line.size() && (line[end + 2] == 'Z' || line[end + 2] == 'X'))
            return false;
    }
    return true;
}

// This run's lock: INSTANCE.lock in the recovery folder, flock()ed from the first copy on
// and for the life of the process (the kernel lets go when the process ends, however it ends).
struct RunLock {
    QString instance;
    QString path;
    QByteArray encodedPath; // for the destructor, which runs after Qt has gone
    int fd = -1;

    RunLock()
    {
        // The process id for people reading the folder; the random part so that two runs with
        // the same process id (a PID namespace) never share a name.
        instance = QStringLiteral("%1-%2")
                       .arg(QCoreApplication::applicationPid())
                       .arg(QRandomGenerator::system()->generate64(), 16, 16, QLatin1Char('0'));
    }
    ~RunLock()
    {
        // A normal exit: the copies went with their documents; the lock file goes too.
        if (fd >= 0) {
            ::unlink(encodedPath.constData());
            ::close(fd);
        }
    }

    // Holds the lock file in `dir`, making it again if it was removed meanwhile.
    bool hold(const QString &dir)
    {
        const QString wanted = QDir(dir).filePath(instance + kLockSuffix);
        struct stat held, there;
        if (fd >= 0 && wanted == path && ::fstat(fd, &held) == 0 &&
            ::stat(QFile::encodeName(path).constData(), &there) == 0 && held.st_dev == there.st_dev &&
            held.st_ino == there.st_ino)
            return true;
        if (fd >= 0)
            ::close(fd);
        fd = -1;
        // Locked under a temporary name, then renamed into place: no one can see the lock file
        // before it is locked (and take it for a dead run's).
        const QByteArray temporary =
            QFile::encodeName(QDir(dir).filePath(QStringLiteral(".") + instance + kLockSuffix));
        const int f = ::open(temporary.constData(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (f < 0)
            return false;
        if (::flock(f, LOCK_EX | LOCK_NB) != 0 ||
            ::rename(temporary.constData(), QFile::encodeName(wanted).constData()) != 0) {
            ::unlink(temporary.constData());
            ::close(f);
            return false;
        }
        fd = f;
        path = wanted;
        encodedPath = QFile::encodeName(wanted);
        return true;
    }
};

RunLock &runLock()
{
    static RunLock lock;
    return lock;
}

QString nextCopyName()
{
    // One run may hold copies of several documents over its life: number them.
    static std::atomic<int> counter{0};
    return QStringLiteral("%1-%2").arg(Autosaver::instanceId()).arg(++counter) + kCopySuffix;
}

// What a copy's name says of its writer: INSTANCE-N.attnscope.json, INSTANCE being PID-RANDOM
// (or PID alone for a copy of an older version).
void entryFromName(const QFileInfo &file, Autosaver::Entry &entry)
{
    QString name = file.fileName();
    name.chop(kCopySuffix.size());
    entry.instance = name.section(QLatin1Char('-'), 0, -2);
    entry.pid = name.section(QLatin1Char('-'), 0, 0).toLongLong();
}

// Whether the run that wrote a copy is still running.
bool writerRunning(const Autosaver::Entry &entry, const QString &dir)
{
    if (entry.instance == Autosaver::instanceId())
        return true;
    if (entry.instance.contains(QLatin1Char('-'))) {
        const QByteArray lock = QFile::encodeName(QDir(dir).filePath(entry.instance + kLockSuffix));
        const int fd = ::open(lock.constData(), O_RDWR | O_CLOEXEC);
        if (fd < 0)
            return false; // it never locked, or ended normally: its copies are left over
        const bool taken = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
        const bool held = !taken && errno == EWOULDBLOCK;
        ::close(fd); // releases what was taken
        if (taken || held)
            return held;
        // The file system cannot lock: fall back on the process id.
    }
    // A copy of an older version, which named copies after the process alone: one with this
    // process's id was written by an earlier run (this one writes none such).
    if (entry.pid == QCoreApplication::applicationPid())
        return false;
    return processAlive(entry.pid);
}

// Lock files of runs that are gone and left no copy.
void removeStaleLocks(const QDir &dir, const QSet<QString> &instancesWithCopies)
{
    for (const QFileInfo &info : dir.entryInfoList({QStringLiteral("*") + kLockSuffix}, QDir::Files)) {
        QString instance = info.fileName();
        instance.chop(kLockSuffix.size());
        if (instance == Autosaver::instanceId() || instancesWithCopies.contains(instance))
            continue;
        const QByteArray path = QFile::encodeName(info.absoluteFilePath());
        const int fd = ::open(path.constData(), O_RDWR | O_CLOEXEC);
        if (fd < 0)
            continue;
        if (::flock(fd, LOCK_EX | LOCK_NB) == 0)
            ::unlink(path.constData()); // still locked by us while it goes
        ::close(fd);
    }
}

nlohmann::ordered_json referencesValue(const Project &project)
{
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    for (const auto &[field, r] : project.npyReferences)
        out[field] = {{"path", r.path},
                      {"rows", r.rows},
                      {"cols", r.cols},
                      {"sequences", r.sequences},
                      {"fingerprint", QString::number(r.fingerprint, 16).toStdString()}};
    return out;
}

// The references a copy remembers; malformed entries are left out (their matrices are then
// saved inline, which is always right).
std::map<std::string, NpyReference> referencesFrom(const nlohmann::ordered_json &value)
{
    std::map<std::string, NpyReference> out;
    if (!value.is_object())
        return out;
    for (const auto &[field, r] : value.items()) {
        if (!r.is_object() || !r.contains("path") || !r["path"].is_string() || !r.contains("fingerprint") ||
            !r["fingerprint"].is_string())
            continue;
        auto count = [&](const char *key) -> std::optional<Eigen::Index> {
            if (!r.contains(key) || !r[key].is_number_integer() || r[key].get<std::int64_t>() < 0)
                return std::nullopt;
            return Eigen::Index(r[key].get<std::int64_t>());
        };
        bool ok = false;
        const std::uint64_t fingerprint =
            QString::fromStdString(r["fingerprint"].get<std::string>()).toULongLong(&ok, 16);
        const auto rows = count("rows"), cols = count("cols"), sequences = count("sequences");
        if (!ok || !rows || !cols || !sequences)
            continue;
        out[field] = NpyReference{r["path"].get<std::string>(), *rows, *cols, fingerprint, *sequences};
    }
    return out;
}

} // namespace

QString Autosaver::instanceId()
{
    return runLock().instance;
}

Autosaver::Autosaver(QObject *parent) : QObject(parent)
{
    m_timer.setSingleShot(true);
    m_timer.setInterval(defaultInterval());
    connect(&m_timer, &QTimer::timeout, this, &Autosaver::saveNow);
}

Autosaver::~Autosaver()
{
    removeCopy();
}

int Autosaver::defaultInterval()
{
    bool ok = false;
    const int ms = qEnvironmentVariableIntValue("ATTNSCOPE_AUTOSAVE_MS", &ok);
    return ok && ms > 0 ? ms : kDefaultIntervalMs;
}

void Autosaver::setInterval(int ms)
{
    m_timer.setInterval(std::max(ms, 1));
}

QString Autosaver::recoveryDirectory()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/recovery");
}

void Autosaver::setDocument(Document *document)
{
    if (m_document)
        disconnect(m_document, nullptr, this, nullptr);
    removeCopy();
    m_timer.stop();
    m_document = document;
    m_path = QDir(recoveryDirectory()).filePath(nextCopyName());
    if (!document)
        return;
    connect(document, &Document::changed, this, &Autosaver::documentChanged);
    connect(document, &Document::modifiedChanged, this, &Autosaver::modifiedChanged);
    connect(document, &Document::filePathChanged, this, &Autosaver::documentChanged);
    connect(document, &QObject::destroyed, this, [this] {
        m_timer.stop();
        removeCopy();
    });
    if (document->isModified())
        documentChanged();
}

void Autosaver::documentChanged()
{
    // At most one write per interval: the first change after a write starts the clock, later
    // ones ride along.
    if (m_document && m_document->isModified() && !m_timer.isActive())
        m_timer.start();
}

void Autosaver::modifiedChanged(bool modified)
{
    if (modified) {
        documentChanged();
    } else {
        m_timer.stop();
        removeCopy();
    }
}

bool Autosaver::saveNow()
{
    if (!m_document || !m_document->isModified())
        return true;
    if (!QDir().mkpath(recoveryDirectory())) {
        m_lastError = tr("Cannot create %1").arg(recoveryDirectory());
        return false;
    }
    // Without the lock (a file system that cannot lock) the copy would look like a dead run's
    // to another instance, which would offer it; it is written all the same, better than none.
    runLock().hold(recoveryDirectory());
    Status s = writeCopy(m_path, m_document->project(), m_document->filePath(), QCoreApplication::applicationPid());
    if (!s) {
        m_lastError = QString::fromStdString(s.message());
        return false;
    }
    m_lastError.clear();
    emit saved(m_path);
    return true;
}

void Autosaver::removeCopy()
{
    if (!m_path.isEmpty() && QFile::exists(m_path))
        QFile::remove(m_path);
}

Status Autosaver::writeCopy(const QString &path, const Project &project, const QString &originalPath, qint64 pid,
                            const QString &instance)
{
    const QString writer = !instance.isEmpty()                         ? instance
                           : pid == QCoreApplication::applicationPid() ? instanceId()
                                                                       : QString();
    Project copy = project;
    copy.extra[kRecoveryField] = {{"originalPath", originalPath.toStdString()},
                                  {"pid", pid},
                                  {"instance", writer.toStdString()},
                                  {"saved", QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs).toStdString()},
                                  {"folder", project.folder},
                                  {"references", referencesValue(project)}};
    // Matrices inline, so that the copy holds what was shown whatever becomes of the .npy files
    // before it is recovered. A large one (a long input: inline, each autosave would take
    // seconds) stays a reference, which readCopy() resolves against the original folder and
    // checks against the fingerprint kept above.
    const std::string text =
        serializeProject(copy, [](const std::string &, const NpyReference &reference) -> std::optional<std::string> {
            if (reference.rows * reference.cols <= Autosaver::kMaxInlineValues)
                return std::nullopt;
            return reference.path;
        });
    // As every output is written: whole or not at all, nothing left behind by a kill.
    AtomicFileWriter file(QFile::encodeName(path).toStdString());
    if (Status s = file.open(); !s)
        return s;
    file.write(text);
    return file.commit();
}

Result<std::pair<Project, Autosaver::Entry>> Autosaver::readCopy(const QString &path)
{
    Entry entry;
    entry.recoveryPath = path;
    entryFromName(QFileInfo(path), entry);
    const std::string shown = printableText(path.toStdString(), 200) + ": ";
    auto text = readInputFile(path.toStdString(), maxInputFileBytes());
    if (!text)
        return text.error(); // the message starts with the path
    // The bookkeeping first: a copy of an older version may hold references, which resolve
    // against the original project's folder.
    std::string folder;
    nlohmann::ordered_json recovery;
    const JsonLimits limits{64, std::max<std::int64_t>(1 << 20, memoryBudget() / 64)}; // as parseProject's
    if (auto root = parseJsonDocument(*text, limits);
        root && root->is_object() && root->contains(kRecoveryField) && (*root)[kRecoveryField].is_object()) {
        recovery = std::move((*root)[kRecoveryField]);
        if (recovery.contains("folder") && recovery["folder"].is_string())
            folder = recovery["folder"].get<std::string>();
        else if (recovery.contains("originalPath") && recovery["originalPath"].is_string() &&
                 !recovery["originalPath"].get_ref<const std::string &>().empty())
            folder = QFileInfo(QString::fromStdString(recovery["originalPath"].get<std::string>()))
                         .absolutePath()
                         .toStdString();
    }
    ProjectReadOptions options;
    options.folder = folder.empty() ? QFileInfo(path).absolutePath().toStdString() : folder;
    options.checkTraceSize = false; // as Document::readProject: a large project opens pooled
    auto project = parseProject(*text, options);
    if (!project)
        return prefixedError(shown, project.error());
    if (recovery.is_null())
        return Error{shown + "not a recovery copy"};
    if (recovery.contains("originalPath") && recovery["originalPath"].is_string())
        entry.originalPath = QString::fromStdString(recovery["originalPath"].get<std::string>());
    if (recovery.contains("pid") && recovery["pid"].is_number_integer())
        entry.pid = recovery["pid"].get<qint64>();
    if (recovery.contains("instance") && recovery["instance"].is_string())
        entry.instance = QString::fromStdString(recovery["instance"].get<std::string>());
    if (recovery.contains("saved") && recovery["saved"].is_string())
        entry.saved =
            QDateTime::fromString(QString::fromStdString(recovery["saved"].get<std::string>()), Qt::ISODateWithMs);
    // The original's folder and references: saving the recovered document keeps the unchanged
    // ones as they were (checked against their files then, as any save does). A large matrix
    // the copy kept as a reference must still be what its file holds.
    if (recovery.contains("references")) {
        auto remembered = referencesFrom(recovery["references"]);
        for (const auto &[field, read] : project->npyReferences) {
            const auto it = remembered.find(field);
            if (it == remembered.end() || it->second.fingerprint != read.fingerprint || it->second.rows != read.rows ||
                it->second.cols != read.cols || it->second.sequences != read.sequences)
                return Error{shown + field + ": " + printableText(read.path, 200) +
                             ": the file changed after this copy was written, which kept it as a reference; the copy "
                             "no longer holds what was shown"};
        }
        project->npyReferences = std::move(remembered);
        project->folder = folder;
    }
    project->extra.erase(kRecoveryField);
    return std::make_pair(std::move(*project), entry);
}

QList<Autosaver::Entry> Autosaver::orphanedCopies()
{
    QList<Entry> out;
    const QDir dir(recoveryDirectory());
    QSet<QString> instances;
    for (const QFileInfo &info : dir.entryInfoList({QStringLiteral("*") + kCopySuffix}, QDir::Files)) {
        Entry entry;
        auto copy = readCopy(info.absoluteFilePath());
        if (copy) {
            entry = copy->second;
        } else {
            // Unreadable: offered with its error, for the user to discard or keep.
            entry.recoveryPath = info.absoluteFilePath();
            entryFromName(info, entry);
            entry.error = QString::fromStdString(copy.message());
        }
        instances.insert(entry.instance);
        if (writerRunning(entry, dir.path()))
            continue;
        if (!entry.saved.isValid())
            entry.saved = info.lastModified();
        out << entry;
    }
    removeStaleLocks(dir, instances);
    std::sort(out.begin(), out.end(), [](const Entry &a, const Entry &b) { return a.saved > b.saved; });
    return out;
}

} // namespace attnscope
