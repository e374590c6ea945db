#pragma once

#include "app/gui/document/Document.h"
#include "app/render/MaskRenderer.h"

#include <QPointer>
#include <QWidget>

#include <optional>

class QComboBox;
class QLabel;
class QSpinBox;

namespace attnscope {

// The Tq x Tk mask grid: the effective mask (custom AND causal AND padding), painted by
// MaskRenderer; a click or a drag toggles cells of the custom part, one undo step per stroke.
class MaskGrid : public QWidget
{
    Q_OBJECT

public:
    explicit MaskGrid(QWidget *parent = nullptr);

    void setDocument(Document *document);
    QRectF cellRect(int query, int key) const;
    std::optional<QPoint> cellAt(const QPointF &pos) const; // x = key, y = query

    QSize sizeHint() const override { return {320, 260}; }

protected:
    void paintEvent(QPaintEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;

private:
    MaskRenderOptions renderOptions() const;
    void toggleAt(const QPointF &pos);

    QPointer<Document> m_document;
    int m_strokeId = 0;
    bool m_stroking = false;
    bool m_strokeValue = false;
    std::optional<QPoint> m_lastCell;
};

// The mask editor: presets (none, causal, padding from tokens, sliding window), the sliding
// window W (mask.window, edited live; 0: none) and the grid.
class MaskEditor : public QWidget
{
    Q_OBJECT

public:
    explicit MaskEditor(QWidget *parent = nullptr);

    void setDocument(Document *document);
    MaskGrid *grid() const { return m_grid; }
    QComboBox *presetBox() const { return m_preset; }
    QSpinBox *windowBox() const { return m_window; }
    void applyPreset();

private:
    void updateSummary();
    // The preset box shows the document's mask: its sliding window, else key padding, else
    // causal, else none; the window box shows mask.window. Set on each new document and each mask
    // change, so that it never shows another document's choice.
    void showDocumentPreset();

    QPointer<Document> m_document;
    MaskGrid *m_grid;
    QComboBox *m_preset;
    QSpinBox *m_window;
    int m_presetWindow = 2; // the width the Sliding window preset applies while no window is set
    QLabel *m_summary;
};

} // namespace attnscope
