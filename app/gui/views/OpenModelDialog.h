#pragma once

#include "app/gui/document/ModelCache.h"

#include <QDialog>

#include <memory>

class QLabel;
class QPushButton;
class QTreeWidget;

namespace attnscope {

// File > Open Model: the models already in the Hugging Face cache (hubCacheDir()), one row per
// snapshot with its name, family (model_type), size on disk and whether AttnScope can open it
// (a row it cannot open says why, from core's readModelConfig, in its last column and tooltip),
// beside "Open Folder…" (a folder chooser). The cache is scanned on a worker thread: the list
// says "Looking in…" until it arrives. accept() leaves the chosen folder in chosenDir().
class OpenModelDialog : public QDialog
{
    Q_OBJECT

public:
    // `startDir`: where "Open Folder…" starts. `hubDir`: the cache to list.
    OpenModelDialog(const QString &hubDir, const QString &startDir, QWidget *parent = nullptr);
    ~OpenModelDialog() override;

    QString chosenDir() const { return m_chosen; }
    bool isScanned() const { return m_scanned; }
    const std::vector<CachedModel> &models() const { return m_models; }
    QTreeWidget *list() const { return m_list; }
    QPushButton *openButton() const { return m_open; }

    // "Open Folder…": normally a folder chooser; tests replace it.
    std::function<QString()> chooseFolder;

    static QString sizeText(std::int64_t bytes);

private:
    void showModels(std::vector<CachedModel> models);
    void openSelected();

    QString m_hubDir, m_startDir, m_chosen;
    std::vector<CachedModel> m_models;
    bool m_scanned = false;
    std::shared_ptr<bool> m_alive; // the worker delivers only while the dialog lives
    QLabel *m_where;
    QTreeWidget *m_list;
    QPushButton *m_open;
};

} // namespace attnscope
