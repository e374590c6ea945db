#pragma once

#include "app/render/FigureExporter.h"

#include <QObject>

#include <functional>

class QAction;
class QMenu;

namespace attnscope {

class ExportDataDialog;
class ExportFigureDialog;
class Source;
struct SourceHost;

// File > Export Figure and Export Data, Edit > Copy Figure: what the view in front shows (the
// views' ShownAttention, or the visible block of a pooled view in front), in the source's name.
// The dialogs open window-modal and delete themselves on close; null while there is nothing to
// export.
class FigureActions : public QObject
{
    Q_OBJECT

public:
    // front: the source in front of the window now.
    FigureActions(SourceHost &host, std::function<Source *()> front, QObject *parent = nullptr);

    void addTo(QMenu *file, QMenu *edit);
    FigureOptions currentOptions() const; // the view in front, with its settings
    ExportFigureDialog *showFigureDialog();
    ExportDataDialog *showDataDialog();
    bool copyFigure(); // the view in front, as an image on the clipboard
    QAction *copyAction() const { return m_copy; }

private:
    QString suggestedPath(const QString &suffix) const;
    void exported(const QString &path);

    SourceHost &m_host;
    std::function<Source *()> m_front;
    QAction *m_figure;
    QAction *m_data;
    QAction *m_copy;
};

} // namespace attnscope
