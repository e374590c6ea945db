#include "app/gui/views/ExportDataDialog.h"

#include "app/gui/views/PlainText.h"
#include "app/render/ErrorText.h"
#include "core/formats/AttentionExport.h"
#include "core/formats/TensorExport.h"
#include "core/formats/TraceDataExport.h"
#include "core/formats/TraceExport.h"
#include "core/io/FileIo.h"

#include <QApplication>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
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
    // A set's source (a file, a model run) has more than the layer shown: every layer, the
    // rollout, the statistics. A project's is the trace of its one layer.
    const bool isSet = shown.provider || !shown.shownTensors();
    if (isSet && !shown.set.isEmpty())
        m_set = shown.set;
    m_shownLayer = shown.layer;
    if (const LayerTensors *tensors = shown.shownTensors()) {
        m_trace = std::shared_ptr<const AttentionTrace>(shown.tensors, &tensors->trace);
        m_labels = TraceLabels::of(tensors->project);
    } else if (const auto *weights = shown.weights(); weights && !m_set) {
        auto trace = std::make_shared<AttentionTrace>(); // the weights are all a set has
        trace->weights = *weights;
        m_trace = std::move(trace);
        m_labels.title = shown.title.toStdString();
        for (const QString &t : shown.queryLabels())
            m_labels.queryTokens.push_back(t.toStdString());
        for (const QString &t : shown.keyLabels())
            m_labels.keyTokens.push_back(t.toStdString());
    }
    if (m_set && !shown.shownTensors())
        m_trace.reset(); // the set's own items cover the layer's weights
    setWindowTitle(tr("Export Data"));
    setObjectName(QStringLiteral("ExportDataDialog"));
    m_tensor = new QComboBox;
    m_layer = new QSpinBox(this); // a project's dialog keeps it hidden, out of the form
    m_head = new QSpinBox;
    if (m_set)
        addSetItems();
    if (m_trace)
        addTraceTensors(bool(m_set));
    const int heads = m_set ? m_set->heads() : m_trace ? m_trace->heads() : 1;
    m_head->setRange(0, std::max(1, heads) - 1);
    m_layer->setRange(0, m_set ? std::max(1, m_set->layers()) - 1 : 0);
    m_layer->setValue(m_shownLayer);
    m_path = new QLineEdit;
    m_path->setPlaceholderText(m_set ? tr("weights.npy, or one matrix or the statistics: .csv")
                                     : tr("weights.csv, .npy, or all tensors: .npz, .json"));
    m_formats = plainLabel();
    m_formats->setWordWrap(true);
    m_error = plainLabel();
    m_error->setStyleSheet(QStringLiteral("color: #b00020"));
    m_error->setWordWrap(true);
    auto *browse = new QPushButton(tr("Browse\u2026"));
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Export Data"), m_path->text(),
            m_set ? tr("NumPy array (*.npy);;CSV (*.csv);;JSON, statistics (*.json)")
                  : tr("CSV, one head (*.csv);;NumPy array (*.npy);;All tensors, NumPy (*.npz);;All tensors, JSON "
                       "(*.json)"));
        if (!path.isEmpty())
            m_path->setText(path);
    });
    m_tensor->setObjectName(QStringLiteral("tensor"));
    m_layer->setObjectName(QStringLiteral("layer"));
    m_head->setObjectName(QStringLiteral("head"));
    m_path->setObjectName(QStringLiteral("path"));
    setTensor(m_set ? QStringLiteral("weights-all") : QStringLiteral("weights"));

    auto *form = new QFormLayout;
    form->addRow(m_set ? tr("Data:") : tr("Tensor:"), m_tensor);
    if (m_set)
        form->addRow(tr("Layer:"), m_layer);
    else
        m_layer->hide();
    form->addRow(m_set ? tr("Head:") : tr("Head (CSV):"), m_head);
    auto *pathRow = new QHBoxLayout;
    pathRow->addWidget(m_path, 1);
    pathRow->addWidget(browse);
    form->addRow(tr("File:"), pathRow);
    form->addRow(m_formats);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    QPushButton *exportButton = buttons->addButton(tr("Export"), QDialogButtonBox::AcceptRole);
    exportButton->setObjectName(QStringLiteral("exportButton"));
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(exportButton, &QPushButton::clicked, this, [this] {
        if (exportData())
            accept();
    });
    connect(m_path, &QLineEdit::textChanged, this, &ExportDataDialog::updateEnabled);
    connect(m_tensor, &QComboBox::currentIndexChanged, this, &ExportDataDialog::updateEnabled);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_error);
    layout->addWidget(buttons);
    updateEnabled();
}

namespace {

QString shapeText(std::initializer_list<std::int64_t> shape)
{
    QStringList parts;
    for (auto d : shape)
        parts << QString::number(d);
    return QStringLiteral("[%1]").arg(parts.join(QStringLiteral(", ")));
}

} // namespace

void ExportDataDialog::addSetItems()
{
    const AttentionSet &set = *m_set;
    const std::int64_t l = set.layers(), h = set.heads(), tq = set.queries(), tk = set.keys();
    m_tensor->addItem(tr("Weights of every layer %1").arg(shapeText({l, h, tq, tk})), QStringLiteral("weights-all"));
    m_tensor->addItem(tr("Weights of one layer %1").arg(shapeText({h, tq, tk})), QStringLiteral("weights-layer"));
    m_tensor->addItem(tr("Weights of one head %1").arg(shapeText({tq, tk})), QStringLiteral("weights-head"));
    m_tensor->addItem(tr("Mean over the heads of one layer %1").arg(shapeText({tq, tk})), QStringLiteral("mean"));
    if (tq == tk)
        m_tensor->addItem(tr("Rollout over every layer %1").arg(shapeText({tq, tk})), QStringLiteral("rollout"));
    m_tensor->addItem(tr("Statistics of every head (%1 rows)").arg(l * h), QStringLiteral("stats"));
}

void ExportDataDialog::addTraceTensors(bool setToo)
{
    for (const std::string &name : traceTensorNames()) {
        // Names and shapes only: no tensor is copied to fill the list.
        QStringList shape;
        std::int64_t values = 1;
        for (auto d : traceTensorShape(*m_trace, name)) {
            shape << QString::number(d);
            values *= d;
        }
        if (values == 0)
            continue; // a layer read from a set has its weights only
        const QString text = QStringLiteral("%1 [%2]").arg(QString::fromStdString(name), shape.join(QLatin1Char(',')));
        if (setToo)
            m_tensor->addItem(tr("Layer %1: %2").arg(m_shownLayer).arg(text),
                              QStringLiteral("layer:") + QString::fromStdString(name));
        else
            m_tensor->addItem(text, QString::fromStdString(name));
    }
}

QStringList ExportDataDialog::suffixesOf(const QString &tensor) const
{
    if (!m_set || tensor.startsWith(QLatin1String("layer:")))
        return {QStringLiteral("csv"), QStringLiteral("npy"), QStringLiteral("npz"), QStringLiteral("json")};
    if (tensor == QLatin1String("stats"))
        return {QStringLiteral("csv"), QStringLiteral("json")};
    if (tensor == QLatin1String("weights-all") || tensor == QLatin1String("weights-layer"))
        return {QStringLiteral("npy")};
    return {QStringLiteral("npy"), QStringLiteral("csv")};
}

void ExportDataDialog::updateEnabled()
{
    const auto format = dataFormatFromPath(m_path->text().toStdString());
    const QString what = tensor();
    if (!m_set) {
        m_tensor->setEnabled(format != DataFormat::Npz && format != DataFormat::Json);
        m_head->setEnabled(format == DataFormat::Csv);
        m_formats->setText(tr("The suffix picks the format: .csv and .npy write the tensor chosen, "
                              ".npz and .json every tensor."));
        return;
    }
    const bool layerTensor = what.startsWith(QLatin1String("layer:"));
    m_layer->setEnabled(what == QLatin1String("weights-layer") || what == QLatin1String("weights-head") ||
                        what == QLatin1String("mean"));
    m_head->setEnabled(what == QLatin1String("weights-head") || (layerTensor && format == DataFormat::Csv));
    if (layerTensor)
        m_formats->setText(tr("The suffix picks the format: .csv and .npy write the tensor chosen, "
                              ".npz and .json every tensor of layer %1.")
                               .arg(m_shownLayer));
    else
        m_formats->setText(tr("Written as: %1.").arg(QStringLiteral(".") + suffixesOf(what).join(tr(", ."))));
}

void ExportDataDialog::setTensor(const QString &name)
{
    m_tensor->setCurrentIndex(std::max(0, m_tensor->findData(name)));
}

void ExportDataDialog::setLayer(int layer)
{
    m_layer->setValue(layer);
}

int ExportDataDialog::layer() const
{
    return m_layer->value();
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

bool ExportDataDialog::exportSetData()
{
    const QString what = tensor();
    const QString suffix = QFileInfo(path()).suffix().toLower();
    if (!suffixesOf(what).contains(suffix)) {
        m_lastError =
            tr("%1: %2 is written as %3.")
                .arg(path(), m_tensor->currentText(), QStringLiteral(".") + suffixesOf(what).join(tr(" or .")));
        return false;
    }
    // Writing over the file shown would pull the values from under the views (it is mapped).
    if (const auto &source = m_set->sourceFile(); source && sameFile(source->path(), path().toStdString())) {
        m_lastError = tr("%1 is the attention file shown; choose another name.").arg(path());
        return false;
    }
    std::string name = "weights";
    std::optional<int> layer, head;
    if (what == QLatin1String("weights-layer") || what == QLatin1String("mean"))
        layer = m_layer->value();
    if (what == QLatin1String("weights-head"))
        layer = m_layer->value(), head = m_head->value();
    if (what == QLatin1String("mean") || what == QLatin1String("rollout") || what == QLatin1String("stats"))
        name = what.toStdString();
    QApplication::setOverrideCursor(Qt::WaitCursor);
    auto written = writeAttentionTensor(*m_set, name, layer, head, path().toStdString());
    QApplication::restoreOverrideCursor();
    if (!written)
        m_lastError = errorText(written.error());
    return written.ok();
}

bool ExportDataDialog::exportData()
{
    m_lastError.clear();
    if (m_set && !tensor().startsWith(QLatin1String("layer:"))) {
        if (path().isEmpty())
            m_lastError = tr("Choose a file name ending in .%1.").arg(suffixesOf(tensor()).join(tr(" or .")));
        else
            exportSetData();
        m_error->setText(m_lastError);
        return m_lastError.isEmpty();
    }
    if (!m_trace || m_trace->heads() == 0)
        m_lastError = tr("Nothing to export yet: the project is still being computed.");
    else if (path().isEmpty())
        m_lastError = tr("Choose a file name ending in .csv, .npy, .npz or .json.");
    else if (!writeTraceData(m_labels, *m_trace, path(), tensor().section(QLatin1Char(':'), -1), head(),
                             &m_lastError) &&
             m_lastError.isEmpty())
        m_lastError = tr("%1: the data could not be written.").arg(path());
    m_error->setText(m_lastError);
    return m_lastError.isEmpty();
}

} // namespace attnscope
