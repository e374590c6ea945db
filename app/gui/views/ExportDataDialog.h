#pragma once

#include "app/render/ShownAttention.h"
#include "core/formats/TraceExport.h"

#include <QDialog>

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

// File > Export Data…: tensor, head and file. Of a project, every tensor of its trace; of a
// file's or a model run's layer, its weights.
class ExportDataDialog : public QDialog
{
    Q_OBJECT

public:
    // shown: its layer is read (shown.weights() is set).
    explicit ExportDataDialog(const ShownAttention &shown, QWidget *parent = nullptr);

    void setTensor(const QString &name);
    void setHead(int head); // 0-based
    void setPath(const QString &path);
    QString tensor() const;
    int head() const;
    QString path() const;
    QString lastError() const { return m_lastError; }

    bool exportData();

private:
    void updateEnabled();

    std::shared_ptr<const AttentionTrace> m_trace; // a project's, or a layer's weights
    TraceLabels m_labels;
    QComboBox *m_tensor;
    QSpinBox *m_head;
    QLineEdit *m_path;
    QLabel *m_error;
    QString m_lastError;
};

} // namespace attnscope
