#include "app/gui/views/MatrixModel.h"

#include "core/attention/HeadLayout.h"

#include <QColor>

#include <cmath>
#include <limits>

namespace attnscope {

MatrixModel::MatrixModel(MatrixId id, QObject *parent) : QAbstractTableModel(parent), m_id(id) {}

void MatrixModel::setDocument(Document *document)
{
    beginResetModel();
    if (m_document)
        disconnect(m_document, nullptr, this, nullptr);
    m_document = document;
    m_rows = m_columns = 0;
    if (m_document) {
        connect(m_document, &Document::changed, this, &MatrixModel::documentChanged);
        m_rows = int(matrixRows(m_document->project(), m_id));
        m_columns = int(matrixCols(m_document->project(), m_id)) + (hasTokenColumn() && m_rows > 0 ? 1 : 0);
    }
    endResetModel();
}

void MatrixModel::documentChanged(Document::Changes what)
{
    const int rows = int(matrixRows(m_document->project(), m_id));
    const int columns = int(matrixCols(m_document->project(), m_id)) + (hasTokenColumn() && rows > 0 ? 1 : 0);
    if (what.testFlag(Document::ShapeChanged) || rows != m_rows || columns != m_columns) {
        beginResetModel();
        m_rows = rows;
        m_columns = columns;
        endResetModel();
        return;
    }
    if (m_rows == 0 || m_columns == 0)
        return;
    if (what & (Document::ValuesChanged | Document::TokensChanged)) {
        emit dataChanged(index(0, 0), index(m_rows - 1, m_columns - 1), {Qt::DisplayRole, Qt::EditRole});
        if (what.testFlag(Document::TokensChanged))
            emit headerDataChanged(Qt::Vertical, 0, m_rows - 1);
    }
}

int MatrixModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : m_rows;
}

int MatrixModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : m_columns;
}

QVariant MatrixModel::data(const QModelIndex &index, int role) const
{
    if (!m_document || !checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const Project &p = m_document->project();
    const int col = matrixColumn(index.column());
    if (col < 0) {
        const auto &tokens = side() == TokenSide::Key ? p.keyTokens : p.queryTokens;
        if (role == Qt::DisplayRole || role == Qt::EditRole)
            return size_t(index.row()) < tokens.size() ? QString::fromStdString(tokens[size_t(index.row())])
                                                       : QString();
        if (role == Qt::BackgroundRole)
            return QColor(0xf2, 0xf2, 0xf2);
        return {};
    }
    const float v = matrixValue(p, m_id, index.row(), col);
    switch (role) {
    case Qt::DisplayRole:
        return QString::number(double(v), 'g', 4);
    case Qt::EditRole:
        // Text, not a double: the default double editor would round to two decimals.
        return QString::number(double(v), 'g', 9);
    case Qt::ToolTipRole:
        return QStringLiteral("%1[%2, %3] = %4")
            .arg(matrixName(m_id))
            .arg(index.row())
            .arg(col)
            .arg(double(v), 0, 'g', 8);
    case Qt::TextAlignmentRole:
        return int(Qt::AlignRight | Qt::AlignVCenter);
    default:
        return {};
    }
}

bool MatrixModel::setData(const QModelIndex &index, const QVariant &value, int role)
{
    if (!m_document || role != Qt::EditRole || !checkIndex(index, CheckIndexOption::IndexIsValid))
        return false;
    const int col = matrixColumn(index.column());
    if (col < 0)
        return m_document->setTokenLabel(side(), index.row(), value.toString().trimmed());
    bool ok = false;
    const double v = value.toString().toDouble(&ok);
    if (!ok)
        return false;
    // 1e39 is a finite double but +inf as a float; the document refuses it (and NaN, inf)
    // with a message, so the cell keeps its value.
    const float f =
        std::abs(v) > double(std::numeric_limits<float>::max()) ? float(std::copysign(HUGE_VAL, v)) : float(v);
    return m_document->setValue(m_id, index.row(), col, f);
}

QVariant MatrixModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if ((role != Qt::DisplayRole && role != Qt::ToolTipRole) || !m_document)
        return {};
    const AttentionSpec &s = m_document->problem().spec;
    if (role == Qt::ToolTipRole)
        return orientation == Qt::Horizontal ? headerToolTip(matrixColumn(section)) : QVariant();
    if (orientation == Qt::Vertical) {
        if (m_id == MatrixId::Wo)
            return QStringLiteral("h%1·%2").arg(section / s.headDimV).arg(section % s.headDimV);
        return section;
    }
    const int col = matrixColumn(section);
    if (col < 0)
        return tr("token");
    // Head blocks of the projection columns: "h2·0" is head 2's first column, heads counting
    // from 0 as everywhere else. With fewer key/value heads than heads, the blocks of W_K and W_V
    // are key/value heads': "g1·0" (the tooltip names the query heads that read it).
    const bool grouped = HeadLayout::of(s).grouped();
    const auto block = [col](const char *prefix, int width) {
        return QStringLiteral("%1%2·%3").arg(QLatin1String(prefix)).arg(col / width).arg(col % width);
    };
    switch (m_id) {
    case MatrixId::Wq:
    case MatrixId::BiasQ:
        return block("h", s.headDimQK);
    case MatrixId::Wk:
    case MatrixId::BiasK:
        return block(grouped ? "g" : "h", s.headDimQK);
    case MatrixId::Wv:
    case MatrixId::BiasV:
        return block(grouped ? "g" : "h", s.headDimV);
    case MatrixId::Sinks:
        return QStringLiteral("h%1").arg(col);
    default:
        return QStringLiteral("d%1").arg(col);
    }
}

QString MatrixModel::headerToolTip(int col) const
{
    if (col < 0)
        return {};
    const HeadLayout layout = HeadLayout::of(m_document->problem().spec);
    const bool keys = m_id == MatrixId::Wk || m_id == MatrixId::BiasK;
    if (!layout.grouped() || (!keys && m_id != MatrixId::Wv && m_id != MatrixId::BiasV))
        return {};
    const int g = col / (keys ? layout.headDimQK : layout.headDimV), first = layout.firstQueryHead(g);
    return tr("Key/value head %1: read by query heads %2\u2013%3")
        .arg(g)
        .arg(first)
        .arg(first + layout.groupSize() - 1);
}

Qt::ItemFlags MatrixModel::flags(const QModelIndex &index) const
{
    if (!index.isValid())
        return Qt::NoItemFlags;
    return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsEditable;
}

} // namespace attnscope
