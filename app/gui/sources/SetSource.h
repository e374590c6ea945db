#pragma once

#include "app/gui/document/AttentionJobs.h"
#include "app/gui/sources/Source.h"

#include <QPointer>

class QAction;
class QSpinBox;
class QToolBar;

namespace attnscope {

// A read-only attention set of L layers: an attention file or a model run (FileSource,
// ModelRunSource). The heads grid, the enlarged head, the mean and the head view show the
// current layer, read on a worker; the model view, the statistics and the rollout describe every
// layer. It brings the Layer toolbar and View > Merge Sub-word Tokens into Words. A set too long
// to copy (isLongAttention) opens its heads pooled, in the "Head, pooled" tab, read block by block.
class SetSource : public Source
{
    Q_OBJECT

public:
    explicit SetSource(SourceHost &host, QObject *parent = nullptr);
    ~SetSource() override; // its toolbar and menu entry go with it

    LoadedAttentionPtr attention() const { return m_attention; }
    int layer() const { return m_layer; }
    bool isLong() const { return m_long; }
    QSpinBox *layerSelector() const { return m_layerSpin; }
    QAction *mergeWordsAction() const { return m_mergeWords; }

    void setLayer(int layer) override;
    void setInFront(bool front) override;
    QString title() const override;
    ShownAttention requested() const override;
    QString exportStem() const override;
    PooledHeatmapView *pooledInFront() const override;
    QString pooledFigureName() const override;

protected:
    // Shows `attention`: a new set from its first layer, or (keepView: another text through the
    // same model) with the layer and head in view kept.
    void setAttention(LoadedAttentionPtr attention, bool keepView);
    bool inFront() const { return m_front; }
    // Says the set was opened: remembered in File > Open Recent and as the last folder, said in
    // the status bar, and opened() emitted.
    virtual void announce();
    // What the status bar names as the set's origin ("Attention file: npz, float16").
    virtual QString origin() const = 0;

private:
    void refresh(bool layerToo);
    void showLongLayer(); // the current layer in the views' pooled tab
    void describeShape();

    LoadedAttentionPtr m_attention;
    int m_layer = 0;
    bool m_long = false;
    bool m_front = false;
    QPointer<QToolBar> m_layerBar; // the window's child, which may go first
    QSpinBox *m_layerSpin;
    QAction *m_mergeWords;
};

} // namespace attnscope
