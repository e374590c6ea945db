#include "app/gui/views/StatsTable.h"

#include <QAction>
#include <QHeaderView>
#include <QMenu>
#include <QSortFilterProxyModel>

namespace attnscope {

void HeadStatsModel::setStatistics(AttentionController::StatisticsPtr stats)
{
    beginResetModel();
    m_stats = std::move(stats);
    m_reference = -1;
    m_distances.clear();
    endResetModel();
}

int HeadStatsModel::rowOf(int layer, int head) const
{
    if (!m_stats)
        return -1;
    for (std::size_t r = 0; r < m_stats->size(); ++r) {
        const HeadStats &s = (*m_stats)[r];
        if (s.sample == 0 && s.layer == layer && s.head == head)
            return int(r);
    }
    return -1;
}

void HeadStatsModel::setReference(int row)
{
    m_reference = statsAt(row) ? row : -1;
    m_distances = m_reference >= 0 ? headDistances(*m_stats, std::size_t(m_reference)) : std::vector<double>{};
    emit headerDataChanged(Qt::Horizontal, Unlike, Unlike);
    if (rowCount() > 0)
        emit dataChanged(index(0, Unlike), index(rowCount() - 1, Unlike));
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
    case Spread:
        value = s->spread;
        break;
    case Induction:
        value = s->induction;
        break;
    case Unlike:
        if (m_reference >= 0)
            value = m_distances[std::size_t(index.row())];
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
            return tr("Sink mass: the mean weight on the first key token.");
        case Self:
            return tr("Mean weight of a token on itself (square maps only).");
        case Previous:
            return tr("Mean weight of a token on the token before it.");
        case Spread:
            return tr("Mean over query rows of the weighted standard deviation of |query - key|: 0 when a "
                      "head always looks the same distance back.");
        case Induction:
            return tr("Induction score: the mean weight a repeated token puts on the token that followed its "
                      "earlier occurrences. Empty when no token repeats; type a sentence twice.");
        case Unlike:
            return tr("Distance to the chosen head over the standardised metrics (entropy, distance, spread, "
                      "confidence, sink mass, self, previous, induction): 0 for the head itself, small for "
                      "heads like it. Right-click a head: Find Heads Like This.");
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
        return tr("Sink mass");
    case Self:
        return tr("Self");
    case Previous:
        return tr("Previous");
    case Spread:
        return tr("Spread");
    case Induction:
        return tr("Induction");
    case Unlike:
        if (const HeadStats *r = statsAt(m_reference))
            return tr("Unlike L%1 H%2").arg(r->layer).arg(r->head);
        return tr("Unlike");
    case ColumnCount:
        break;
    }
    return {};
}

void setUpHeadsTable(QTableView &view, QSortFilterProxyModel &proxy, QAbstractItemModel *source, int column,
                     Qt::SortOrder order)
{
    proxy.setSourceModel(source);
    proxy.setSortRole(Qt::UserRole); // numbers, not their text
    view.setModel(&proxy);
    view.setSortingEnabled(true);
    view.sortByColumn(column, order);
    view.setSelectionBehavior(QAbstractItemView::SelectRows);
    view.setSelectionMode(QAbstractItemView::SingleSelection);
    view.setEditTriggers(QAbstractItemView::NoEditTriggers);
    view.setAlternatingRowColors(true);
    view.verticalHeader()->hide();
    view.horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
}

StatsTable::StatsTable(QWidget *parent)
    : QTableView(parent), m_model(new HeadStatsModel(this)), m_proxy(new QSortFilterProxyModel(this)),
      m_findLike(new QAction(tr("Find Heads Like This"), this))
{
    setObjectName(QStringLiteral("statsTable"));
    setUpHeadsTable(*this, *m_proxy, m_model, HeadStatsModel::Layer, Qt::AscendingOrder);
    connect(this, &QAbstractItemView::clicked, this, [this](const QModelIndex &index) {
        const auto [layer, head] = headAtRow(index.row());
        if (layer >= 0)
            emit headActivated(layer, head);
    });
    // On the current row: the context menu makes the row under the mouse current first.
    m_findLike->setObjectName(QStringLiteral("findHeadsLikeThis"));
    connect(m_findLike, &QAction::triggered, this, [this] {
        const auto [layer, head] = headAtRow(currentIndex().row());
        if (layer >= 0)
            findHeadsLike(layer, head);
    });
    setContextMenuPolicy(Qt::CustomContextMenu);
    connect(this, &QWidget::customContextMenuRequested, this, [this](const QPoint &pos) {
        const QModelIndex index = indexAt(pos);
        if (!index.isValid())
            return;
        setCurrentIndex(index);
        QMenu menu;
        menu.addAction(m_findLike);
        menu.exec(viewport()->mapToGlobal(pos));
    });
}

bool StatsTable::findHeadsLike(int layer, int head)
{
    m_like = {layer, head};
    if (m_model->rowCount() == 0)
        return true; // applied when the statistics arrive
    applyReference();
    return m_model->reference() >= 0;
}

void StatsTable::applyReference()
{
    const int row = m_model->rowOf(m_like.first, m_like.second);
    m_model->setReference(row);
    if (row < 0)
        return;
    sortByColumn(HeadStatsModel::Unlike, Qt::AscendingOrder);
    const QModelIndex shown = m_proxy->mapFromSource(m_model->index(row, HeadStatsModel::Layer));
    setCurrentIndex(shown);
    scrollTo(shown);
}

void StatsTable::setStatistics(AttentionController::StatisticsPtr stats)
{
    m_model->setStatistics(std::move(stats));
    if (m_like.first >= 0 && m_model->rowCount() > 0)
        applyReference(); // new statistics (another text): the same head's likes again
}

std::pair<int, int> StatsTable::headAtRow(int viewRow) const
{
    const QModelIndex source = m_proxy->mapToSource(m_proxy->index(viewRow, 0));
    const HeadStats *s = m_model->statsAt(source.row());
    return s ? std::pair{s->layer, s->head} : std::pair{-1, -1};
}

} // namespace attnscope
