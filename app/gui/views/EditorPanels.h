#pragma once

#include "app/gui/document/Document.h"

#include <QPointer>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QTableView;

namespace attnscope {

class MatrixModel;
class ModernAttentionPanel;

// A matrix as an editable table with its shape; for inputs, token insert/remove; for every
// matrix "re-initialise"; for W_O and the biases, add/remove.
class MatrixEditor : public QWidget
{
    Q_OBJECT

public:
    MatrixEditor(MatrixId id, QWidget *parent = nullptr);

    void setDocument(Document *document);
    QTableView *table() const { return m_table; }
    MatrixModel *model() const { return m_model; }

    void insertToken();
    void removeToken();
    void reinitialise();
    // Ctrl+V: a block of numbers from the clipboard (a spreadsheet's cells, NumPy's print, a
    // Python list) into the selected cells, as one undo step; one number fills the selection.
    // Ctrl+C: the selected numbers as tab-separated lines. Tab and Shift+Tab move through the
    // numbers row by row, never into the token column.
    bool paste();
    void copy();

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void updateState();
    // The selected number cells' bounding box in matrix coordinates; empty when none.
    QRect selectedCells() const;

    MatrixId m_id;
    QPointer<Document> m_document;
    MatrixModel *m_model;
    QTableView *m_table;
    QLabel *m_shape;
    QPushButton *m_insert = nullptr;
    QPushButton *m_remove = nullptr;
    QPushButton *m_reinit;
    QCheckBox *m_present = nullptr;
};

// The shape of the model (heads, key/value heads, dK, dV, input and output sizes), self/cross
// mode, scale, mask fill, RoPE and soft-cap (ModernAttentionPanel), and how new values are
// initialised.
class ModelPanel : public QWidget
{
    Q_OBJECT

public:
    explicit ModelPanel(QWidget *parent = nullptr);

    void setDocument(Document *document);

    QSpinBox *headsBox() const { return m_heads; }
    // Key/value heads G: only the divisors of the heads are offered.
    QComboBox *kvHeadsBox() const { return m_kvHeads; }
    ModernAttentionPanel *modernPanel() const { return m_modern; }
    QSpinBox *headDimQKBox() const { return m_headDimQK; }
    QSpinBox *headDimVBox() const { return m_headDimV; }
    QSpinBox *inputDimBox() const { return m_dModel; }
    QComboBox *modeBox() const { return m_mode; }
    QComboBox *scaleBox() const { return m_scale; }
    QDoubleSpinBox *scaleValueBox() const { return m_scaleValue; }
    QComboBox *maskFillBox() const { return m_maskFill; }
    QComboBox *initBox() const { return m_init; }
    QSpinBox *seedBox() const { return m_seed; }

private:
    void updateFromDocument();
    void applyInitOptions();
    void applyScaleMode();
    void applyScaleValue();

    QPointer<Document> m_document;
    QSpinBox *m_heads;
    QComboBox *m_kvHeads;
    QSpinBox *m_headDimQK;
    QSpinBox *m_headDimV;
    QSpinBox *m_dModel;
    QSpinBox *m_dKv;
    QSpinBox *m_dOut;
    QComboBox *m_mode;
    QComboBox *m_scale;
    QDoubleSpinBox *m_scaleValue;
    QComboBox *m_maskFill;
    QComboBox *m_init;
    QSpinBox *m_seed;
    QDoubleSpinBox *m_stddev;
    ModernAttentionPanel *m_modern;
    QLabel *m_shapes;
};

} // namespace attnscope
