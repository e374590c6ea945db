#include "app/gui/views/ExportDataDialog.h"

#include "app/gui/views/PlainText.h"
#include "core/formats/TensorExport.h"
#include "core/formats/TraceDataExport.h"
#include "core/formats/TraceExport.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace attnscope {

bool writeTraceData(const TraceLabels &labels, const AttentionTrace &trace, const QString &path,
                    const QString &tensorName, int head, QString *error)
{
    // The one export-by-suffix `attnscope-cli export` uses too; only the message for a wrong
    // suffix is the dialog's own, translated.
    if (!dataFormatFromPath(path.toStdString())) {
        if (error)
            *error = ExportDataDialog::tr("%1: the file name must end in .csv, .npy, .npz or .json.").arg(path);
        return false;
    }
    const Status written = writeTraceData(labels, trace, path.toStdString(), tensorName.toStdString(), head);
    if (!written && error)
        *error = QString::fromStdString(written.message());
    return written.ok();
}

ExportDataDialog::ExportDataDialog(const ShownAttention &shown, QWidget *parent) : QDialog(parent)
{
    if (const LayerTensors *tensors = shown.shownTensors()) {
        m_trace = std::shared_ptr<const AttentionTrace>(shown.tensors, &tensors->trace);
        m_labels = TraceLabels::of(tensors->project);
    } else if (const auto *weights = shown.weights()) {
        auto trace = std::make_shared<AttentionTrace>(); // the weights are all a set has
        trace->weights = *weights;
        m_trace = std::move(trace);
        m_labels.title = shown.title.toStdString();
        for (const QString &t : shown.queryLabels())
            m_labels.queryTokens.push_back(t.toStdString());
        for (const QString &t : shown.keyLabels())
            m_labels.keyTokens.push_back(t.toStdString());
    }
    setWindowTitle(tr("Export Data"));
    setObjectName(QStringLiteral("ExportDataDialog"));
    m_tensor = new QComboBox;
    if (m_trace)
        for (const std::string &name : traceTensorNames()) {
            // Names and shapes only: no tensor is copied to fill the list.
            QStringList shape;
            std::int64_t values = 1;
            for (auto d : traceTensorShape(*m_trace, name)) {
                shape << QString::number(d);
                values *= d;
            }
            if (!shown.shownTensors() && values == 0)
                continue; // a set's layer has its weights only
            m_tensor->addItem(QStringLiteral("%1 [%2]").arg(QString::fromStdString(name), shape.join(QLatin1Char(','))),
                              QString::fromStdString(name));
        }
    m_head = new QSpinBox;
    m_head->setRange(0, m_trace ? std::max(1, m_trace->heads()) - 1 : 0);
    m_path = new QLineEdit;
    m_path->setPlaceholderText(tr("weights.csv, .npy, or all tensors: .npz, .json"));
    m_error = plainLabel();
    m_error->setStyleSheet(QStringLiteral("color: #b00020"));
    m_error->setWordWrap(true);
    auto *browse = new QPushButton(tr("Browse\u2026"));
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Export Data"), m_path->text(),
            tr("CSV, one head (*.csv);;NumPy array (*.npy);;All tensors, NumPy (*.npz);;All tensors, JSON (*.json)"));
        if (!path.isEmpty())
            m_path->setText(path);
    });
    m_tensor->setObjectName(QStringLiteral("tensor"));
    m_head->setObjectName(QStringLiteral("head"));
    m_path->setObjectName(QStringLiteral("path"));
    setTensor(QStringLiteral("weights"));

    auto *form = new QFormLayout;
    form->addRow(tr("Tensor:"), m_tensor);
    form->addRow(tr("Head (CSV):"), m_head);
    auto *pathRow = new QHBoxLayout;
    pathRow->addWidget(m_path, 1);
    pathRow->addWidget(browse);
    form->addRow(tr("File:"), pathRow);
    form->addRow(plainLabel(tr("The suffix picks the format: .csv and .npy write the tensor chosen, "
                               ".npz and .json every tensor.")));
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    QPushButton *exportButton = buttons->addButton(tr("Export"), QDialogButtonBox::AcceptRole);
    exportButton->setObjectName(QStringLiteral("exportButton"));
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(exportButton, &QPushButton::clicked, this, [this] {
        if (exportData())
            accept();
    });
    connect(m_path, &QLineEdit::textChanged, this, &ExportDataDialog::updateEnabled);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_error);
    layout->addWidget(buttons);
    updateEnabled();
}

void ExportDataDialog::updateEnabled()
{
    const auto format = dataFormatFromPath(m_path->text().toStdString());
    m_tensor->setEnabled(format != DataFormat::Npz && format != DataFormat::Json);
    m_head->setEnabled(format == DataFormat::Csv);
}

void ExportDataDialog::setTensor(const QString &name)
{
    m_tensor->setCurrentIndex(std::max(0, m_tensor->findData(name)));
}

void ExportDataDialog::setHead(int head)
{
    m_head->setValue(head);
}

void ExportDataDialog::setPath(const QString &path)
{
    m_path->setText(path);
}

QString ExportDataDialog::tensor() const
{
    return m_tensor->currentData().toString();
}

int ExportDataDialog::head() const
{
    return m_head->value();
}

QString ExportDataDialog::path() const
{
    return m_path->text();
}

bool ExportDataDialog::exportData()
{
    m_lastError.clear();
    if (!m_trace || m_trace->heads() == 0)
        m_lastError = tr("Nothing to export yet: the project is still being computed.");
    else if (path().isEmpty())
        m_lastError = tr("Choose a file name ending in .csv, .npy, .npz or .json.");
    else if (!writeTraceData(m_labels, *m_trace, path(), tensor(), head(), &m_lastError) && m_lastError.isEmpty())
        m_lastError = tr("%1: the data could not be written.").arg(path());
    m_error->setText(m_lastError);
    return m_lastError.isEmpty();
}

} // namespace attnscope
