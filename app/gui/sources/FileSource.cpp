#include "app/gui/sources/FileSource.h"

#include "app/gui/document/AttentionController.h"
#include "app/gui/views/AttentionViews.h"
#include "app/gui/views/PooledHeatmapView.h"
#include "app/gui/views/StaleBanner.h"
#include "app/gui/views/WindowStatus.h"
#include "app/render/ErrorText.h"

#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QLocale>

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
    awaitOpen();
    m_host.jobs->open(m_path);
    m_host.status->message(tr("Reading %1\u2026").arg(QFileInfo(m_path).fileName()));
}

void FileSource::applySoftmax()
{
    if (!attention() || attention()->softmaxApplied)
        return;
    awaitOpen();
    m_host.jobs->applySoftmax(attention());
    m_host.status->message(tr("Applying softmax to the rows of %1\u2026").arg(QFileInfo(m_path).fileName()));
}

void FileSource::awaitOpen()
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
            announce(); // read again (Reopen) or softmaxed: said and watched anew
            showOpened();
            sayRows();
        }
    });
    m_openFailed = connect(m_host.jobs, &AttentionController::openFailed, this,
                           [this](const QString &path, const QString &message, ErrorKind) {
                               disconnect(m_opened);
                               disconnect(m_openFailed);
                               if (!this->attention())
                                   emit failed(path, message);
                               else
                                   m_host.status->error(message);
                           });
}

void FileSource::setInFront(bool front)
{
    SetSource::setInFront(front);
    disconnect(m_banner);
    if (front)
        m_banner = connect(m_host.banner, &StaleBanner::buttonClicked, this, &FileSource::bannerClicked);
    if (front && attention()) {
        showOpened();
        sayRows();
    } else if (!m_watcher->files().isEmpty()) {
        m_watcher->removePaths(m_watcher->files());
    }
}

void FileSource::bannerClicked()
{
    if (m_bannerOffersSoftmax)
        applySoftmax();
    else
        read();
}

void FileSource::sayRows()
{
    m_bannerOffersSoftmax = false;
    if (!attention() || !attention()->file)
        return;
    m_host.status->setBackend(origin());
    const RowSumCheck &rows = attention()->file->rows;
    const QString sums =
        tr("Row sums %1 to %2").arg(QLocale().toString(rows.minSum, 'g', 3), QLocale().toString(rows.maxSum, 'g', 3));
    if (attention()->softmaxApplied) {
        m_host.status->setNotice(tr("Softmax applied to every row of the file (its %1).").arg(sums.toLower()));
        return;
    }
    if (!rows.isAttention()) {
        QStringList found;
        if (rows.above)
            found << tr("%1 of %2 rows sum above 1").arg(rows.above).arg(rows.rows);
        if (rows.negative)
            found << tr("%1 rows have negative values (down to %2)")
                         .arg(rows.negative)
                         .arg(QLocale().toString(rows.minValue, 'g', 3));
        const QString reason = tr("%1: %2. These look like scores before softmax; entropy, confidence and "
                                  "rollout mean nothing on them.")
                                   .arg(sums, found.join(tr("; ")));
        m_host.status->setNotice(tr("Not attention weights: %1").arg(sums.toLower()), reason);
        m_host.banner->setStale(tr("This file does not hold attention weights: its rows are not softmax rows."), reason,
                                tr("Apply Softmax"),
                                tr("Show softmax over each row of the file (the file itself is not changed)."));
        m_bannerOffersSoftmax = true;
        return;
    }
    if (!rows.isExact()) {
        QStringList found;
        if (rows.zeros)
            found << tr("%1 of %2 rows are all zero (masked queries)").arg(rows.zeros).arg(rows.rows);
        if (rows.below)
            found << tr("%1 of %2 rows sum below 1 (weight kept out of the map, as by a sink)")
                         .arg(rows.below)
                         .arg(rows.rows);
        m_host.status->setNotice(tr("%1: %2.").arg(sums, found.join(tr("; "))));
    }
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
    if (attention()->file->container == "attnscope-qk")
        return tr("Q/K dump: maps computed from queries and keys (%1)")
            .arg(QString::fromStdString(attention()->file->dtype));
    const QString origin = tr("Attention file: %1, %2")
                               .arg(QString::fromStdString(attention()->file->container),
                                    QString::fromStdString(attention()->file->dtype));
    return attention()->softmaxApplied ? tr("%1, softmax applied").arg(origin) : origin;
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
    m_bannerOffersSoftmax = false;
    m_host.status->setNotice(message);
    m_host.banner->setStale(tr("The views show the file as it was read: it changed on disk since."), message,
                            tr("Reopen"), tr("Read the file again as it is on disk now."));
}

} // namespace attnscope
