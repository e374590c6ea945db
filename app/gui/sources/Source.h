#pragma once

#include "app/gui/document/MemoryBudget.h"
#include "app/render/ShownAttention.h"
#include "core/formats/ProjectFile.h"

#include <QObject>
#include <QString>

#include <memory>
#include <optional>

class QAction;
class QMainWindow;
class QMenu;
class QVBoxLayout;

namespace attnscope {

class AttentionController;
class AttentionViews;
class BackendHost;
class PooledHeatmapView;
class StaleBanner;
class ViewToolBar;
class WindowStatus;

// What a window lends the source it shows: the views every source feeds, the jobs over a set, the
// status bar, the banner over the views, the View toolbar, the menus a source adds to, and what
// every source of the window shares (the memory budget, the last folder, the chosen backend).
struct SourceHost {
    QMainWindow *window = nullptr;
    AttentionViews *views = nullptr;
    AttentionController *jobs = nullptr;
    WindowStatus *status = nullptr;
    StaleBanner *banner = nullptr;
    ViewToolBar *viewBar = nullptr;
    QVBoxLayout *central = nullptr; // the banner, then the views: a source adds its widgets here
    QMenu *viewMenu = nullptr;
    QAction *viewMenuSlot = nullptr; // a source's View menu entries go before this separator
    MemoryBudget budget;
    QString lastDir;
    QString typedText; // the text last run through a model here: the next model opened reads it
    std::shared_ptr<BackendHost> backend;
};

// Where the attention a window shows comes from: a project being edited, an attention file, a
// model run, a comparison of two (and next: a growing generation, a Q/K dump). A source brings
// its set (the views' ShownAttention) and its own toolbars, docks and widgets; the window hosts
// one at a time and knows no source's kind. A source being opened (a file read, a model loaded)
// says ready() or failed() before the window shows it, so a failed open changes nothing.
class Source : public QObject
{
    Q_OBJECT

public:
    explicit Source(SourceHost &host, QObject *parent = nullptr) : QObject(parent), m_host(host) {}

    // Comes to the front (its widgets, docks and toolbars shown, the views given its set) or
    // leaves it (hidden, and its jobs no longer delivered).
    virtual void setInFront(bool front) = 0;
    virtual QString title() const = 0; // the window's title ("[*]" where it can be modified)
    virtual bool isModified() const { return false; }
    // What the jobs over the whole set describe (model view, statistics, rollout): the views'
    // set, merged into words as the View menu says.
    virtual ShownAttention requested() const = 0;
    // The layer the heads views show, where the source has several.
    virtual void setLayer(int layer) { (void)layer; }
    // Export: the name files are proposed under; the pooled view in front, if any, and the name
    // its figures get.
    virtual QString exportStem() const = 0;
    virtual PooledHeatmapView *pooledInFront() const { return nullptr; }
    virtual QString pooledFigureName() const { return exportStem(); }
    // A head as an editable project with its real inputs and weights, where the source has them.
    virtual bool hasHeadProjects() const { return false; }
    virtual std::optional<Project> headProject(int layer, int head) const
    {
        (void)layer, (void)head;
        return std::nullopt;
    }
    // The host's budget changed: it applies from the next computation or layer read.
    virtual void budgetChanged() {}

signals:
    void ready();                                             // opened: show it
    void failed(const QString &path, const QString &message); // could not be opened
    void shown();                                             // the views show new contents
    void opened(const QString &path); // in front, from this file or folder (a new one each time)
    void titleChanged();
    // Asks the window to show (layer, head) in the heads grid and the enlarged head (a row of a
    // source's own table activated).
    void headRequested(int layer, int head);

protected:
    SourceHost &m_host;
};

} // namespace attnscope
