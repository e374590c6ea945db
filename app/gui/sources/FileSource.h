#pragma once

#include "app/gui/sources/SetSource.h"

class QFileSystemWatcher;

namespace attnscope {

// An attention file (.npy, .npz, .safetensors) as a read-only source. It is read on a worker:
// ready() or failed() follows the constructor. While it is in front the file is watched: one
// rewritten under the views (the script that wrote it ran again) greys them under a banner that
// says so, with a Reopen button that reads it again.
class FileSource : public SetSource
{
    Q_OBJECT

public:
    FileSource(SourceHost &host, const QString &path, QObject *parent = nullptr);

    QString path() const { return m_path; }
    void setInFront(bool front) override;

protected:
    QString origin() const override;

private:
    void read();
    void showOpened(); // watched while in front
    // False (and the banner says so) when the file shown changed on disk.
    bool checkSource();
    void showSourceChanged(const QString &message);

    QString m_path;
    QFileSystemWatcher *m_watcher;
    QMetaObject::Connection m_opened, m_openFailed, m_reopen;
};

} // namespace attnscope
