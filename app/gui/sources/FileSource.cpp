#include "app/gui/sources/FileSource.h"

#include "app/gui/document/AttentionController.h"
#include "app/gui/views/AttentionViews.h"
#include "app/gui/views/PooledHeatmapView.h"
#include "app/gui/views/StaleBanner.h"
#include "app/gui/views/WindowStatus.h"
#include "app/render/ErrorText.h"

#include <QFileInfo>
#include <QFileSystemWatcher>

namespace attnscope {

FileSource::FileSource(SourceHost &host, const QString &path, QObject *parent)
    : SetSource(host, parent), m_path(path), m_watcher(new QFileSystemWatcher(this))
{
    // A shown file rewritten on disk: said as soon as the file system tells, and by any job
    // (layer, thumbnails, statistics, rollout, pooled tiles) that read it meanwhile.
    connect(m_watcher, &QFileSystemWatcher::fileChanged, this, &FileSource::checkSource);
    connect(host.jobs, &AttentionController::sourceChanged, this, &FileSource::showSourceChanged);
    connect(host.views->filePooled()->jobs(), &PooledJobs::failed, this, [this](const QString &, ErrorKind kind) {
        if (kind == ErrorKind::Io)
            checkSource();
    });
    read();
}

void FileSource::read()
{
    disconnect(m_opened);
    disconnect(m_openFailed);
    m_opened = connect(m_host.jobs, &AttentionController::opened, this, [this](LoadedAttentionPtr attention) {
        disconnect(m_opened);
        disconnect(m_openFailed);
        const bool first = !this->attention();
        setAttention(std::move(attention), false);
        if (first) {
            emit ready(); // the window brings it to the front
        } else if (inFront()) {
            announce(); // read again (Reopen): said and watched anew
            showOpened();
        }
    });
    m_openFailed = connect(m_host.jobs, &AttentionController::openFailed, this,
                           [this](const QString &path, const QString &message, ErrorKind) {
                               disconnect(m_opened);
                               disconnect(m_openFailed);
                               emit failed(path, message);
                           });
    m_host.jobs->open(m_path);
    m_host.status->message(tr("Reading %1\u2026").arg(QFileInfo(m_path).fileName()));
}

void FileSource::setInFront(bool front)
{
    SetSource::setInFront(front);
    disconnect(m_reopen);
    if (front)
        m_reopen = connect(m_host.banner, &StaleBanner::buttonClicked, this, &FileSource::read);
    if (front && attention())
        showOpened();
    else if (!m_watcher->files().isEmpty())
        m_watcher->removePaths(m_watcher->files());
}

void FileSource::showOpened()
{
    if (!m_watcher->files().isEmpty())
        m_watcher->removePaths(m_watcher->files());
    // A file that is copied (not mapped) cannot change under the views.
    if (attention()->set.sourceFile())
        m_watcher->addPath(m_path);
}

QString FileSource::origin() const
{
    if (!attention() || !attention()->file)
        return {};
    return tr("Attention file: %1, %2")
        .arg(QString::fromStdString(attention()->file->container), QString::fromStdString(attention()->file->dtype));
}

bool FileSource::checkSource()
{
    if (!inFront() || !attention())
        return true;
    const Status s = attention()->set.checkSource();
    if (s)
        return true;
    showSourceChanged(errorText(s.error()));
    return false;
}

void FileSource::showSourceChanged(const QString &message)
{
    if (!inFront())
        return;
    m_host.status->setNotice(message);
    m_host.banner->setStale(tr("The views show the file as it was read: it changed on disk since."), message,
                            tr("Reopen"), tr("Read the file again as it is on disk now."));
}

} // namespace attnscope
