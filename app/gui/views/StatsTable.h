#pragma once

#include "app/gui/document/AttentionController.h"

#include <QAbstractTableModel>
#include <QTableView>

class QAction;
class QSortFilterProxyModel;

namespace attnscope {

// The statistics of every head (core/analysis/AttentionStats.h), one row per (layer, head), numbered
// from 0 as the views number them. Qt::DisplayRole gives text (4 decimals), Qt::UserRole the number
// itself (what sorting uses); an absent value (self of a non-square map, induction without a
// repeated token) is empty and sorts first. `first` is shown as "Sink mass". The last column,
// Unlike, is filled once a reference head is chosen (setReference): each head's distance to it
// over the standardised metrics (core's headDistances), 0 for the reference itself.
class HeadStatsModel : public QAbstractTableModel
{
    Q_OBJECT

public:
    // The first eight keep their places (tests and exports index them); new metrics follow.
    enum Column {
        Layer,
        Head,
        Entropy,
        Distance,
        Confidence,
        First,
        Self,
        Previous,
        Spread,
        Induction,
        Unlike,
        ColumnCount
    };

    explicit HeadStatsModel(QObject *parent = nullptr) : QAbstractTableModel(parent) {}

    void setStatistics(AttentionController::StatisticsPtr stats);
    AttentionController::StatisticsPtr statistics() const { return m_stats; }
    const HeadStats *statsAt(int row) const;
    // The row of (layer, head) in sample 0, or -1.
    int rowOf(int layer, int head) const;
    // Fills the Unlike column with every head's distance to the head in `row` (-1: empties it).
    void setReference(int row);
    int reference() const { return m_reference; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    AttentionController::StatisticsPtr m_stats;
    int m_reference = -1;
    std::vector<double> m_distances;
};

// The statistics table: sortable by any column (click a header); a click on a row activates
// that (layer, head). "Find Heads Like This" (its context menu, on the row under the mouse) sorts
// every head by its distance to that one, the most alike first.
// A table of heads as the statistics and the comparison's differences show them: `source` through
// `proxy`, sorted by `column` on the numbers (Qt::UserRole), one whole row selected at a time,
// read-only, alternating rows, columns stretched.
void setUpHeadsTable(QTableView &view, QSortFilterProxyModel &proxy, QAbstractItemModel *source, int column,
                     Qt::SortOrder order);

class StatsTable : public QTableView
{
    Q_OBJECT

public:
    explicit StatsTable(QWidget *parent = nullptr);

    HeadStatsModel *statsModel() const { return m_model; }
    QSortFilterProxyModel *proxy() const { return m_proxy; }
    void setStatistics(AttentionController::StatisticsPtr stats);
    bool isFilled() const { return m_model->rowCount() > 0; }
    // The (layer, head) shown in a row of the view (as sorted), or (-1, -1).
    std::pair<int, int> headAtRow(int viewRow) const;
    // Sorts every head by its distance to (layer, head), most alike first, and selects it. When the
    // statistics have not arrived yet, done when they do. False where no such head is shown.
    bool findHeadsLike(int layer, int head);
    QAction *findHeadsLikeAction() const { return m_findLike; }

signals:
    void headActivated(int layer, int head);

private:
    void applyReference();

    HeadStatsModel *m_model;
    QSortFilterProxyModel *m_proxy;
    QAction *m_findLike;
    std::pair<int, int> m_like{-1, -1}; // the reference head asked for, kept across new statistics
};

} // namespace attnscope
