#pragma once

#include "app/gui/views/HeatmapView.h"
#include "core/analysis/Comparison.h"

#include <QAbstractTableModel>
#include <QTableView>
#include <QWidget>

#include <array>
#include <utility>
#include <vector>

class QLabel;
class QSortFilterProxyModel;

namespace attnscope {

// A comparison's current head side by side (issue 26): A's map, B's and B − A next to each other,
// each under its title ("A: <text or file>", "B: …", "B − A"). The difference is drawn as every
// signed set is (HeatmapData::difference): diverging around 0.
class SideBySideView : public QWidget
{
    Q_OBJECT

public:
    enum Which { A, B, Difference };

    explicit SideBySideView(QWidget *parent = nullptr);

    // One layer of A, of B and of the difference, each with its maps read (ShownAttention::maps).
    void setLayers(const ShownAttention &a, const ShownAttention &b, const ShownAttention &difference);
    void setTitles(const QString &a, const QString &b);
    void setHead(int head);
    void setSettings(const HeatmapViewSettings &settings);
    // Greyed, as the views under a banner are, while they show a comparison that is not current.
    void setGreyed(bool greyed);
    bool isGreyed() const;
    HeatmapView *view(Which which) const { return m_views[which]; }
    QString title(Which which) const;

    QSize sizeHint() const override { return {900, 300}; }

signals:
    void cellSelected(int query, int key); // in any of the three: selected in all

private:
    std::array<HeatmapView *, 3> m_views{};
    std::array<QLabel *, 3> m_titles{};
};

// The statistics of a comparison (comparisonStatistics): one row per (layer, head) of sample 0,
// with the total variation between A's and B's rows, the largest and the mean |B − A|, and the
// entropy of A and of B. Qt::DisplayRole gives text (4 decimals), Qt::UserRole the number.
class ComparisonStatsModel : public QAbstractTableModel
{
    Q_OBJECT

public:
    enum Column { Layer, Head, TotalVariation, MaxAbs, MeanAbs, EntropyA, EntropyB, ColumnCount };

    explicit ComparisonStatsModel(QObject *parent = nullptr) : QAbstractTableModel(parent) {}

    void setStatistics(std::vector<HeadDifference> stats);
    const std::vector<HeadDifference> &statistics() const { return m_stats; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    std::vector<HeadDifference> m_stats;
};

// The comparison's statistics table, sorted by total variation (the heads that changed most
// first) until a header is clicked; activating a row (a click, Enter) asks for that head.
class ComparisonStatsTable : public QTableView
{
    Q_OBJECT

public:
    explicit ComparisonStatsTable(QWidget *parent = nullptr);

    ComparisonStatsModel *statsModel() const { return m_model; }
    void setStatistics(std::vector<HeadDifference> stats);
    // The (layer, head) shown in a row of the view (as sorted), or (-1, -1).
    std::pair<int, int> headAtRow(int viewRow) const;

signals:
    void headActivated(int layer, int head);

private:
    ComparisonStatsModel *m_model;
    QSortFilterProxyModel *m_proxy;
};

} // namespace attnscope
