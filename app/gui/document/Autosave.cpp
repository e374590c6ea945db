#include "app/gui/document/Autosave.h"

#include "core/FileIo.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>

#include <algorithm>
#include <atomic>

#include <cerrno>
#include <signal.h>

namespace attnscope {

namespace {

constexpr const char *kRecoveryField = "attnscopeRecovery";

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

QString nextCopyName()
{
    // One process may hold copies of several documents over its life: number them.
    static std::atomic<int> counter{0};
    return QStringLiteral("%1-%2.attnscope.json").arg(QCoreApplication::applicationPid()).arg(++counter);
}

} // namespace

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

Status Autosaver::writeCopy(const QString &path, const Project &project, const QString &originalPath, qint64 pid)
{
    Project copy = project;
    copy.extra[kRecoveryField] = {{"originalPath", originalPath.toStdString()},
                                  {"pid", pid},
                                  {"saved", QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs).toStdString()}};
    // As every output is written: whole or not at all, nothing left behind by a kill.
    AtomicFileWriter file(QFile::encodeName(path).toStdString());
    if (Status s = file.open(); !s)
        return s;
    file.write(serializeProject(copy));
    return file.commit();
}

Result<std::pair<Project, Autosaver::Entry>> Autosaver::readCopy(const QString &path)
{
    auto project = Document::readProject(path);
    if (!project)
        return project.error();
    Entry entry;
    entry.recoveryPath = path;
    auto &extra = project->extra;
    if (!extra.is_object() || !extra.contains(kRecoveryField) || !extra[kRecoveryField].is_object())
        return Error{(path + QStringLiteral(": not a recovery copy")).toStdString()};
    const auto &r = extra[kRecoveryField];
    if (r.contains("originalPath") && r["originalPath"].is_string())
        entry.originalPath = QString::fromStdString(r["originalPath"].get<std::string>());
    if (r.contains("pid") && r["pid"].is_number_integer())
        entry.pid = r["pid"].get<qint64>();
    if (r.contains("saved") && r["saved"].is_string())
        entry.saved = QDateTime::fromString(QString::fromStdString(r["saved"].get<std::string>()), Qt::ISODateWithMs);
    extra.erase(kRecoveryField);
    return std::make_pair(std::move(*project), entry);
}

QList<Autosaver::Entry> Autosaver::orphanedCopies()
{
    QList<Entry> out;
    const QDir dir(recoveryDirectory());
    for (const QFileInfo &info : dir.entryInfoList({QStringLiteral("*.attnscope.json")}, QDir::Files)) {
        auto copy = readCopy(info.absoluteFilePath());
        if (!copy)
            continue; // unreadable: leave it for the user to look at, never offer it
        Entry entry = copy->second;
        if (entry.pid == QCoreApplication::applicationPid() || processAlive(entry.pid))
            continue;
        if (!entry.saved.isValid())
            entry.saved = info.lastModified();
        out << entry;
    }
    std::sort(out.begin(), out.end(), [](const Entry &a, const Entry &b) { return a.saved > b.saved; });
    return out;
}

} // namespace attnscope
