// MainWindow: long attention files (issue 11). A file whose layer is too large to copy
// (isLongAttention) keeps its model view, statistics and (where it fits) rollout, but its
// heads open pooled, in the "Head, pooled" tab, read block by block from the mapped file;
// the heads grid, the head view and the mean tab (each a full copy per head) are hidden.

#include "app/gui/document/LongAttention.h"
#include "app/gui/views/ElidedLabel.h"
#include "app/gui/views/MainWindow.h"
#include "app/gui/views/PooledHeatmapView.h"

#include <QAction>
#include <QComboBox>
#include <QFileInfo>
#include <QTabWidget>

namespace attnscope {

void MainWindow::setLongAttentionMode(bool on)
{
    m_longAttention = on;
    m_views->setLong(on);
    if (on) {
        // Merging words copies every map as doubles: not for files this long.
        m_mergeWordsAction->setChecked(false);
        m_mergeWordsAction->setEnabled(false);
    }
}

void MainWindow::showLongAttentionLayer()
{
    if (!m_attention || !m_longAttention)
        return;
    const AttentionSet &set = m_attention->set;
    attentionPooledView()->setSource(std::make_shared<const AttentionFileTiles>(set, m_layer));
    m_noticeLabel->setText(tr("Long attention file: heads open pooled (tab Head, pooled); the mouse wheel zooms "
                              "to exact values."));
    m_noticeLabel->show();
}

} // namespace attnscope
