#pragma once

#include "app/gui/sources/SetSource.h"

class QFileSystemWatcher;

namespace attnscope {

// An attention file (.npy, .npz, .safetensors) as a read-only source. It is read on a worker:
// ready() or failed() follows the constructor. While it is in front the file is watched: one
// rewritten under the views (the script that wrote it ran again) greys them under a banner that
// says so, with a Reopen button that reads it again. A file whose rows are not attention (scores
// before softmax: negative values, rows above 1) is said the same way, with Apply Softmax; masked
// rows of zeros and sink rows below 1 are attention, said in the status bar's notice.
class FileSource : public SetSource
{
    Q_OBJECT

public:
    FileSource(SourceHost &host, const QString &path, QObject *parent = nullptr);

    QString path() const { return m_path; }
    void setInFront(bool front) override;

protected:
    QString origin() const override;

    // Softmax over the rows of a file of scores (the banner's Apply Softmax).
    void applySoftmax();

private:
    void read();
    // Listens for the next opened() or openFailed() of the window's attention jobs.
    void awaitOpen();
    // What the rows were found to be, said in the banner or the notice.
    void sayRows();
    void bannerClicked();
    void showOpened(); // watched while in front
    // False (and the banner says so) when the file shown changed on disk.
    bool checkSource();
    void showSourceChanged(const QString &message);

    QString m_path;
    QFileSystemWatcher *m_watcher;
    QMetaObject::Connection m_opened, m_openFailed, m_banner;
    bool m_bannerOffersSoftmax = false; // else it offers Reopen
};

} // namespace attnscope
