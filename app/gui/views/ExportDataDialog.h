#pragma once

#include "app/render/ShownAttention.h"
#include "core/formats/TraceExport.h"

#include <QDialog>

#include <optional>

class QComboBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace attnscope {

// Writes a trace as data through core/formats/TraceDataExport.h, the format by the file name's
// suffix: .csv (one head of the chosen tensor, token-labelled), .npy (the chosen tensor, as
// `attnscope-cli compute` writes it), .npz or .json (every tensor). Atomic (AtomicFileWriter).
bool writeTraceData(const TraceLabels &labels, const AttentionTrace &trace, const QString &path, const QString &tensor,
                    int head, QString *error);

// File > Export Data…: what, which layer and head, and the file. Of a project, any tensor of its
// trace (the names traceTensorNames() gives). Of an attention file or a model run, what the set
// holds (core/formats/AttentionExport.h): the weights of every layer, of one layer or of one head,
// one layer's mean over heads, the rollout, the statistics of every head; and, for a model run's
// layer whose tensors were computed, those tensors too ("layer:q").
class ExportDataDialog : public QDialog
{
    Q_OBJECT

public:
    // shown: its layer is read (shown.weights() is set).
    explicit ExportDataDialog(const ShownAttention &shown, QWidget *parent = nullptr);

    // A trace tensor's name ("weights", "q"); for a set: "weights-all", "weights-layer",
    // "weights-head", "mean", "rollout", "stats", or "layer:NAME" for a tensor of the layer shown.
    void setTensor(const QString &name);
    void setLayer(int layer); // 0-based; a set's
    void setHead(int head);   // 0-based
    void setPath(const QString &path);
    QString tensor() const;
    int layer() const;
    int head() const;
    QString path() const;
    QString lastError() const { return m_lastError; }
    // The suffix the first export proposes: "npz" for a project (every tensor), "npy" for a set.
    QString defaultSuffix() const { return m_set ? QStringLiteral("npy") : QStringLiteral("npz"); }
    // What the choice is written as ("npy, csv"), for the hint under the file name.
    QStringList suffixesOf(const QString &tensor) const;

    bool exportData();

private:
    void addTraceTensors(bool setToo);
    void addSetItems();
    void updateEnabled();
    bool exportSetData();

    std::shared_ptr<const AttentionTrace> m_trace; // a project's, or a layer's weights
    TraceLabels m_labels;
    std::optional<AttentionSet> m_set; // an attention file's or a model run's
    int m_shownLayer = 0;
    QComboBox *m_tensor;
    QSpinBox *m_layer;
    QSpinBox *m_head;
    QLineEdit *m_path;
    QLabel *m_formats;
    QLabel *m_error;
    QString m_lastError;
};

} // namespace attnscope
