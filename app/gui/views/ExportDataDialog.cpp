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

bool writeTraceData(const ComputedTrace &result, const QString &path, const QString &tensorName, int head,
                    QString *error)
{
    // The one export-by-suffix `attnscope-cli export` uses too; only the message for a wrong
    // suffix is the dialog's own, translated.
    if (!dataFormatFromPath(path.toStdString())) {
        if (error)
            *error = ExportDataDialog::tr("%1: the file name must end in .csv, .npy, .npz or .json.").arg(path);
        return false;
    }
    const Status written =
        writeTraceData(result.project, result.trace, path.toStdString(), tensorName.toStdString(), head);
    if (!written && error)
        *error = QString::fromStdString(written.message());
    return written.ok();
}

ExportDataDialog::ExportDataDialog(ComputedTracePtr result, QWidget *parent)
    : QDialog(parent), m_result(std::move(result))
{
    setWindowTitle(tr("Export Data"));
    setObjectName(QStringLiteral("ExportDataDialog"));
    m_tensor = new QComboBox;
    if (m_result)
        for (const std::string &name : traceTensorNames()) {
            // Names and shapes only: no tensor is copied to fill the list.
            QStringList shape;
            for (auto d : traceTensorShape(m_result->trace, name))
                shape << QString::number(d);
            m_tensor->addItem(QStringLiteral("%1 [%2]").arg(QString::fromStdString(name), shape.join(QLatin1Char(','))),
                              QString::fromStdString(name));
        }
    m_head = new QSpinBox;
    m_head->setRange(0, m_result ? std::max(1, m_result->trace.heads()) - 1 : 0);
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
    if (!m_result || m_result->trace.heads() == 0)
        m_lastError = tr("Nothing to export yet: the project is still being computed.");
    else if (path().isEmpty())
        m_lastError = tr("Choose a file name ending in .csv, .npy, .npz or .json.");
    else if (!writeTraceData(*m_result, path(), tensor(), head(), &m_lastError) && m_lastError.isEmpty())
        m_lastError = tr("%1: the data could not be written.").arg(path());
    m_error->setText(m_lastError);
    return m_lastError.isEmpty();
}

} // namespace attnscope
