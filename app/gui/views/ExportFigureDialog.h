#pragma once

#include "app/render/FigureExporter.h"

#include <QDialog>
#include <QHash>
#include <QImage>
#include <QSize>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QSpinBox;
class QTimer;

namespace attnscope {

// File > Export Figure…: every figure option, a live preview painted by the same
// FigureRenderer the file gets, and the format by the file name's suffix. Works on what the
// views showed when it opened (a snapshot): it never edits the document. It offers the views
// the source has (a project's tensors: every view; a file's or a model run's set: its layers'
// views). The view and options chosen last (not the head, cell or title, which belong to the
// project) are remembered in QSettings and come back the next time, in this session and the
// next. A pooled block's dialog (pooledBlock) offers the one view it was opened with.
class ExportFigureDialog : public QDialog
{
    Q_OBJECT

public:
    ExportFigureDialog(ShownAttention shown, const FigureOptions &initial, QWidget *parent = nullptr);
    // A pooled block (a one-layer set of pooled cells): the figure of initial.view alone, with
    // `allowed` the cells drawn as masked (those without a weight), or null.
    static ExportFigureDialog *pooledBlock(ShownAttention block, const FigureOptions &initial,
                                           std::shared_ptr<const MaskMatrix> allowed, QWidget *parent);

    FigureOptions options() const;
    FigureSize figureSize() const;
    QString path() const;
    void setPath(const QString &path);
    // The preview as last painted, and how many times it has been painted.
    QImage previewImage() const { return m_previewImage; }
    int previewCount() const { return m_previewCount; }
    QString lastError() const { return m_lastError; }
    FigureExporter exporter() const;
    // Whether the chosen view can be painted now.
    bool hasFigure() const;

    // Writes the figure to path(); false (message shown, lastError() set) on failure.
    bool exportFigure();
    // The file suffix of the last export ("png" when none).
    static QString rememberedSuffix();
    void done(int result) override;

    // The preview fits in this many pixels.
    static constexpr int kPreviewWidth = 520, kPreviewHeight = 400;

signals:
    void previewUpdated();

private:
    void schedulePreview();
    void updatePreview();
    void browse();
    void updateEnabled();
    void restoreChoices();
    void saveChoices() const;
    // Each view has its own size (a grid of heads is not shaped like the step view): the spin
    // boxes show the size of the view chosen, "auto" (its natural size) until one is set.
    void showSizeOf(int view);

    ShownAttention m_shown;
    std::shared_ptr<const MaskMatrix> m_blockAllowed; // a pooled block's
    bool m_pooledBlock = false;
    FigureOptions m_initial; // the layer and word merging of the set's figures
    QComboBox *m_view;
    QSpinBox *m_head;
    QComboBox *m_quantity;
    QComboBox *m_colorMap;
    QComboBox *m_colorScale;
    QComboBox *m_scale;
    QCheckBox *m_colorBar;
    QCheckBox *m_labels;
    QCheckBox *m_values;
    QCheckBox *m_axisTitles;
    QCheckBox *m_overlay;
    QCheckBox *m_showTitle;
    QLineEdit *m_title;
    QSpinBox *m_fontSize;
    QSpinBox *m_dpi;
    QSpinBox *m_width;
    QSpinBox *m_height;
    QHash<int, QSize> m_sizes; // by FigureView: the width and height set (0: auto)
    int m_sizeView = -1;       // the view whose size the spin boxes show
    QComboBox *m_background;
    QLineEdit *m_path;
    QLabel *m_preview;
    QLabel *m_sizeLabel;
    QLabel *m_error;
    QTimer *m_previewTimer;
    QImage m_previewImage;
    int m_previewCount = 0;
    QString m_lastError;
};

} // namespace attnscope
