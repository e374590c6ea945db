#pragma once

#include "app/gui/document/AttentionController.h"

#include <QAbstractTableModel>
#include <QTableView>

class QSortFilterProxyModel;

namespace attnscope {

// The statistics of every head (core/analysis/AttentionStats.h), one row per (layer, head). Layers and
// heads are numbered from 1, as the views number them. Qt::DisplayRole gives text (4 decimals),
// Qt::UserRole the number itself (what sorting uses); an absent value (self of a non-square
// map) is empty and sorts first.
class HeadStatsModel : public QAbstractTableModel
{
    Q_OBJECT

public:
    enum Column { Layer, Head, Entropy, Distance, Confidence, First, Self, Previous, ColumnCount };

    explicit HeadStatsModel(QObject *parent = nullptr) : QAbstractTableModel(parent) {}

    void setStatistics(AttentionController::StatisticsPtr stats);
    AttentionController::StatisticsPtr statistics() const { return m_stats; }
    const HeadStats *statsAt(int row) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    AttentionController::StatisticsPtr m_stats;
};

// The statistics table: sortable by any column (click a header); a click on a row activates
// that (layer, head).
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

signals:
    void headActivated(int layer, int head);

private:
    HeadStatsModel *m_model;
    QSortFilterProxyModel *m_proxy;
};

} // namespace attnscope
