#include "app/gui/views/ComparisonPanels.h"

#include "app/gui/views/PlainText.h"
#include "app/gui/views/StatsTable.h"

#include <QGraphicsColorizeEffect>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QVBoxLayout>

namespace attnscope {

SideBySideView::SideBySideView(QWidget *parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("sideBySide"));
    auto *row = new QHBoxLayout(this);
    row->setContentsMargins(2, 2, 2, 2);
    row->setSpacing(6);
    const char *names[] = {"sideA", "sideB", "sideDifference"};
    for (int i = 0; i < 3; ++i) {
        auto *column = new QVBoxLayout;
        column->setSpacing(0);
        m_titles[size_t(i)] = plainLabel();
        m_titles[size_t(i)]->setAlignment(Qt::AlignHCenter);
        QFont bold = m_titles[size_t(i)]->font();
        bold.setBold(true);
        m_titles[size_t(i)]->setFont(bold);
        // A long text is cut, whole in the tooltip: the three maps keep equal widths.
        m_titles[size_t(i)]->setMinimumWidth(1);
        m_titles[size_t(i)]->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
        m_views[size_t(i)] = new HeatmapView;
        m_views[size_t(i)]->setObjectName(QString::fromLatin1(names[i]));
        auto *grey = new QGraphicsColorizeEffect(m_views[size_t(i)]);
        grey->setColor(QColor(0x80, 0x80, 0x80));
        grey->setStrength(0.85);
        grey->setEnabled(false);
        m_views[size_t(i)]->setGraphicsEffect(grey);
        column->addWidget(m_titles[size_t(i)]);
        column->addWidget(m_views[size_t(i)], 1);
        row->addLayout(column, 1);
        connect(m_views[size_t(i)], &HeatmapView::cellSelected, this, [this](int, int query, int key) {
            for (HeatmapView *v : m_views)
                v->setSelectedCell(QPoint(key, query));
            emit cellSelected(query, key);
        });
    }
    m_titles[Difference]->setText(tr("B \u2212 A"));
}

void SideBySideView::setLayers(const ShownAttention &a, const ShownAttention &b, const ShownAttention &difference)
{
    m_views[A]->setAttention(a);
    m_views[B]->setAttention(b);
    m_views[Difference]->setAttention(difference);
}

void SideBySideView::setTitles(const QString &a, const QString &b)
{
    const QString titles[] = {a, b};
    for (int i = 0; i < 2; ++i) {
        m_titles[size_t(i)]->setText(titles[i]);
        m_titles[size_t(i)]->setToolTip(plainToolTip(titles[i]));
    }
}

void SideBySideView::setGreyed(bool greyed)
{
    for (HeatmapView *v : m_views)
        v->graphicsEffect()->setEnabled(greyed);
}

bool SideBySideView::isGreyed() const
{
    return m_views[A]->graphicsEffect()->isEnabled();
}

QString SideBySideView::title(Which which) const
{
    return m_titles[which]->text();
}

void SideBySideView::setHead(int head)
{
    for (HeatmapView *v : m_views)
        v->setHead(head);
}

void SideBySideView::setSettings(const HeatmapViewSettings &settings)
{
    HeatmapViewSettings s = settings;
    s.quantity = HeatmapQuantity::Weights; // a comparison compares weights
    s.showValues = false;                  // three maps side by side: the hover says each value
    for (HeatmapView *v : m_views)
        v->setSettings(s);
}

void ComparisonStatsModel::setStatistics(std::vector<HeadDifference> stats)
{
    beginResetModel();
    m_stats.clear();
    for (HeadDifference &d : stats)
        if (d.sample == 0) // the views show sample 0
            m_stats.push_back(std::move(d));
    endResetModel();
}

int ComparisonStatsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_stats.size());
}

int ComparisonStatsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ComparisonStatsModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount() ||
        (role != Qt::DisplayRole && role != Qt::UserRole && role != Qt::TextAlignmentRole))
        return {};
    if (role == Qt::TextAlignmentRole)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    const HeadDifference &d = m_stats[size_t(index.row())];
    double value = 0.0;
    switch (Column(index.column())) {
    case Layer:
        return d.layer;
    case Head:
        return d.head;
    case TotalVariation:
        value = d.totalVariation;
        break;
    case MaxAbs:
        value = d.maxAbs;
        break;
    case MeanAbs:
        value = d.meanAbs;
        break;
    case EntropyA:
        value = d.a.entropy;
        break;
    case EntropyB:
        value = d.b.entropy;
        break;
    case ColumnCount:
        break;
    }
    return role == Qt::UserRole ? QVariant(value) : QVariant(QString::number(value, 'f', 4));
}

QVariant ComparisonStatsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || (role != Qt::DisplayRole && role != Qt::ToolTipRole))
        return {};
    const bool tip = role == Qt::ToolTipRole;
    switch (Column(section)) {
    case Layer:
        return tip ? tr("The layer, from 0.") : tr("Layer");
    case Head:
        return tip ? tr("The head, from 0.") : tr("Head");
    case TotalVariation:
        return tip ? tr("Mean over query rows of half the summed |B \u2212 A|: 0 where each row attends alike, "
                        "1 where A's and B's rows attend to different keys.")
                   : tr("Total variation");
    case MaxAbs:
        return tip ? tr("The largest |B \u2212 A| of any cell.") : tr("Max |\u0394|");
    case MeanAbs:
        return tip ? tr("The mean |B \u2212 A| over every cell.") : tr("Mean |\u0394|");
    case EntropyA:
        return tip ? tr("A's mean row entropy (natural log): high where a head spreads its attention.")
                   : tr("Entropy A");
    case EntropyB:
        return tip ? tr("B's mean row entropy (natural log).") : tr("Entropy B");
    case ColumnCount:
        break;
    }
    return {};
}

ComparisonStatsTable::ComparisonStatsTable(QWidget *parent)
    : QTableView(parent), m_model(new ComparisonStatsModel(this)), m_proxy(new QSortFilterProxyModel(this))
{
    setObjectName(QStringLiteral("comparisonStatsTable"));
    setUpHeadsTable(*this, *m_proxy, m_model, ComparisonStatsModel::TotalVariation, Qt::DescendingOrder);
    connect(this, &QAbstractItemView::activated, this, [this](const QModelIndex &index) {
        const auto [layer, head] = headAtRow(index.row());
        if (layer >= 0)
            emit headActivated(layer, head);
    });
    connect(this, &QAbstractItemView::clicked, this, [this](const QModelIndex &index) {
        const auto [layer, head] = headAtRow(index.row());
        if (layer >= 0)
            emit headActivated(layer, head);
    });
}

void ComparisonStatsTable::setStatistics(std::vector<HeadDifference> stats)
{
    m_model->setStatistics(std::move(stats));
}

std::pair<int, int> ComparisonStatsTable::headAtRow(int viewRow) const
{
    const QModelIndex source = m_proxy->mapToSource(m_proxy->index(viewRow, 0));
    if (!source.isValid())
        return {-1, -1};
    const HeadDifference &d = m_model->statistics()[size_t(source.row())];
    return {d.layer, d.head};
}

} // namespace attnscope
