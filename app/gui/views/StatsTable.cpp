#include "app/gui/views/StatsTable.h"

#include <QHeaderView>
#include <QSortFilterProxyModel>

namespace attnscope {

void HeadStatsModel::setStatistics(AttentionController::StatisticsPtr stats)
{
    beginResetModel();
    m_stats = std::move(stats);
    endResetModel();
}

const HeadStats *HeadStatsModel::statsAt(int row) const
{
    if (!m_stats || row < 0 || row >= int(m_stats->size()))
        return nullptr;
    return &(*m_stats)[std::size_t(row)];
}

int HeadStatsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() || !m_stats ? 0 : int(m_stats->size());
}

int HeadStatsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant HeadStatsModel::data(const QModelIndex &index, int role) const
{
    const HeadStats *s = statsAt(index.row());
    if (!s || (role != Qt::DisplayRole && role != Qt::UserRole && role != Qt::TextAlignmentRole))
        return {};
    if (role == Qt::TextAlignmentRole)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    std::optional<double> value;
    switch (Column(index.column())) {
    case Layer:
        return s->layer;
    case Head:
        return s->head;
    case Entropy:
        value = s->entropy;
        break;
    case Distance:
        value = s->distance;
        break;
    case Confidence:
        value = s->confidence;
        break;
    case First:
        value = s->first;
        break;
    case Self:
        value = s->self;
        break;
    case Previous:
        value = s->previous;
        break;
    case ColumnCount:
        break;
    }
    if (!value)
        return role == Qt::UserRole ? QVariant(-1.0) : QVariant(QString());
    return role == Qt::UserRole ? QVariant(*value) : QVariant(QString::number(*value, 'f', 4));
}

QVariant HeadStatsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return {};
    if (role == Qt::ToolTipRole) {
        switch (Column(section)) {
        case Entropy:
            return tr("Mean over query rows of the entropy of the row (natural log): low is focused.");
        case Distance:
            return tr("Mean over query rows of the weighted distance |query - key| in tokens.");
        case Confidence:
            return tr("Mean over query rows of the largest weight.");
        case First:
            return tr("Mean weight on the first key token.");
        case Self:
            return tr("Mean weight of a token on itself (square maps only).");
        case Previous:
            return tr("Mean weight of a token on the token before it.");
        default:
            return {};
        }
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (Column(section)) {
    case Layer:
        return tr("Layer");
    case Head:
        return tr("Head");
    case Entropy:
        return tr("Entropy");
    case Distance:
        return tr("Distance");
    case Confidence:
        return tr("Confidence");
    case First:
        return tr("First");
    case Self:
        return tr("Self");
    case Previous:
        return tr("Previous");
    case ColumnCount:
        break;
    }
    return {};
}

StatsTable::StatsTable(QWidget *parent)
    : QTableView(parent), m_model(new HeadStatsModel(this)), m_proxy(new QSortFilterProxyModel(this))
{
    setObjectName(QStringLiteral("statsTable"));
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(Qt::UserRole); // numbers, not their text
    setModel(m_proxy);
    setSortingEnabled(true);
    sortByColumn(HeadStatsModel::Layer, Qt::AscendingOrder);
    setSelectionBehavior(QAbstractItemView::SelectRows);
    setSelectionMode(QAbstractItemView::SingleSelection);
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    setAlternatingRowColors(true);
    verticalHeader()->hide();
    horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    connect(this, &QAbstractItemView::clicked, this, [this](const QModelIndex &index) {
        const auto [layer, head] = headAtRow(index.row());
        if (layer >= 0)
            emit headActivated(layer, head);
    });
}

void StatsTable::setStatistics(AttentionController::StatisticsPtr stats)
{
    m_model->setStatistics(std::move(stats));
}

std::pair<int, int> StatsTable::headAtRow(int viewRow) const
{
    const QModelIndex source = m_proxy->mapToSource(m_proxy->index(viewRow, 0));
    const HeadStats *s = m_model->statsAt(source.row());
    return s ? std::pair{s->layer, s->head} : std::pair{-1, -1};
}

} // namespace attnscope
