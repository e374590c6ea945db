#pragma once

#include "app/gui/document/ComputeController.h"

#include <QDialog>

class QComboBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace attnscope {

// Writes a computed trace as data through core/formats/TensorExport.h, the format by the file name's
// suffix: .csv (one head of the chosen tensor, token-labelled), .npy (the chosen tensor, as
// `attnscope-cli compute` writes it), .npz or .json (every tensor). Atomic (AtomicFileWriter).
bool writeTraceData(const ComputedTrace &result, const QString &path, const QString &tensor, int head, QString *error);

// File > Export Data…: tensor, head and file.
class ExportDataDialog : public QDialog
{
    Q_OBJECT

public:
    explicit ExportDataDialog(ComputedTracePtr result, QWidget *parent = nullptr);

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

    ComputedTracePtr m_result;
    QComboBox *m_tensor;
    QSpinBox *m_head;
    QLineEdit *m_path;
    QLabel *m_error;
    QString m_lastError;
};

} // namespace attnscope
