#pragma once

#include "app/gui/document/Document.h"

#include <QAbstractTableModel>
#include <QPointer>

namespace attnscope {

// One matrix of the document as a table. For the inputs X, column 0 holds the token labels
// and the other columns the model dimensions. setData() never changes the data itself: it
// calls a Document verb, which pushes an undoable command; the document's change signal
// comes back here as dataChanged or a reset.
class MatrixModel : public QAbstractTableModel
{
    Q_OBJECT

public:
    MatrixModel(MatrixId id, QObject *parent = nullptr);

    void setDocument(Document *document);
    Document *document() const { return m_document; }
    MatrixId matrix() const { return m_id; }
    bool hasTokenColumn() const { return m_id == MatrixId::Xq || m_id == MatrixId::Xkv || m_id == MatrixId::Xv; }
    // Whose tokens label the rows: the keys' for the key and value inputs.
    TokenSide side() const { return m_id == MatrixId::Xkv || m_id == MatrixId::Xv ? TokenSide::Key : TokenSide::Query; }
    // The matrix row and column of an index (column -1: the token label).
    int matrixColumn(int column) const { return hasTokenColumn() ? column - 1 : column; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    bool setData(const QModelIndex &index, const QVariant &value, int role = Qt::EditRole) override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex &index) const override;

private:
    void documentChanged(Document::Changes what);
    // Which key/value head a column of W_K, W_V, b_K or b_V belongs to and which query heads read it.
    QString headerToolTip(int column) const;

    MatrixId m_id;
    QPointer<Document> m_document;
    int m_rows = 0;
    int m_columns = 0;
};

} // namespace attnscope
