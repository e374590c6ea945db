#include "app/gui/views/ExportFigureDialog.h"

#include "app/gui/views/PlainText.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QPushButton>
#include <QSettings>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTimer>
#include <QVBoxLayout>

#include <cmath>

namespace attnscope {

ExportFigureDialog::ExportFigureDialog(ShownAttention shown, const FigureOptions &initial, QWidget *parent)
    : QDialog(parent), m_shown(std::move(shown)), m_initial(initial), m_previewTimer(new QTimer(this))
{
    setWindowTitle(tr("Export Figure"));
    setObjectName(QStringLiteral("ExportFigureDialog"));
    const int heads = std::max(1, m_shown.set.heads());

    m_view = new QComboBox;
    for (FigureView v : FigureOptions::allViews() + QList{FigureView::Model, FigureView::Rollout})
        if (m_shown.shownTensors() || FigureOptions::setViews().contains(v))
            m_view->addItem(FigureOptions::viewName(v), int(v));
    m_view->setCurrentIndex(m_view->findData(int(initial.view)));
    m_head = new QSpinBox;
    m_head->setRange(0, heads - 1);
    m_head->setValue(std::clamp(initial.head, 0, heads - 1));
    m_quantity = new QComboBox;
    m_quantity->addItem(tr("Weights (softmax)"), int(HeatmapQuantity::Weights));
    m_quantity->addItem(tr("Scores (scaled, before mask)"), int(HeatmapQuantity::Scores));
    m_quantity->setCurrentIndex(m_quantity->findData(int(initial.quantity)));
    // A file or a model run holds weights only: no scores.
    if (!m_shown.scores())
        m_quantity->removeItem(m_quantity->findData(int(HeatmapQuantity::Scores)));
    m_colorMap = new QComboBox;
    for (ColorMapKind k : ColorMap::all())
        m_colorMap->addItem(ColorMap::displayName(k), int(k));
    m_colorMap->setCurrentIndex(m_colorMap->findData(int(initial.colorMap)));
    m_colorScale = new QComboBox; // linear, log (long causal heads), percentile
    m_colorScale->setObjectName(QStringLiteral("colorScale"));
    for (ColorScaleKind k : ColorScale::all())
        m_colorScale->addItem(ColorScale::displayName(k), ColorScale::key(k));
    m_colorScale->setCurrentIndex(m_colorScale->findData(ColorScale::key(initial.colorScale)));
    m_scale = new QComboBox;
    m_scale->addItem(tr("Absolute (0..1)"), int(ScaleScope::Absolute));
    m_scale->addItem(tr("Shared by all heads"), int(ScaleScope::Shared));
    m_scale->addItem(tr("Per head"), int(ScaleScope::PerHead));
    m_scale->setCurrentIndex(m_scale->findData(int(initial.scale)));
    m_colorBar = new QCheckBox(tr("Colour bar / legend"));
    m_colorBar->setChecked(initial.colorBar);
    m_labels = new QCheckBox(tr("Token labels"));
    m_labels->setChecked(initial.labels);
    m_values = new QCheckBox(tr("Values in cells"));
    m_values->setChecked(initial.values);
    m_axisTitles = new QCheckBox(tr("Axis titles (query, key)"));
    m_axisTitles->setChecked(initial.axisTitles);
    m_overlay = new QCheckBox(tr("All heads in the head view"));
    m_overlay->setChecked(initial.overlayHeads);
    m_showTitle = new QCheckBox(tr("Title"));
    m_showTitle->setChecked(!initial.title || !initial.title->isEmpty());
    m_title = new QLineEdit(initial.title.value_or(QString()));
    m_title->setPlaceholderText(tr("Default title"));
    m_fontSize = new QSpinBox;
    m_fontSize->setRange(4, 96);
    m_fontSize->setSuffix(tr(" pt"));
    m_fontSize->setValue(initial.fontSize);
    m_dpi = new QSpinBox;
    m_dpi->setRange(FigureSize::kMinDpi, FigureSize::kMaxDpi);
    m_dpi->setValue(150);
    m_width = new QSpinBox;
    m_height = new QSpinBox;
    for (QSpinBox *s : {m_width, m_height}) {
        s->setRange(0, FigureSize::kMaxPixels);
        s->setSpecialValueText(tr("auto"));
        s->setSuffix(tr(" px"));
    }
    m_background = new QComboBox;
    m_background->addItem(tr("White"), false);
    m_background->addItem(tr("Transparent"), true);
    m_background->setCurrentIndex(initial.transparent ? 1 : 0);
    m_path = new QLineEdit;
    m_path->setPlaceholderText(tr("figure.png, .svg or .pdf"));
    auto *browse = new QPushButton(tr("Browse\u2026"));

    // Names for tests and accessibility tools.
    const std::pair<QWidget *, const char *> names[] = {{m_view, "view"},         {m_head, "head"},
                                                        {m_quantity, "quantity"}, {m_colorMap, "colorMap"},
                                                        {m_scale, "scale"},       {m_colorBar, "colorBar"},
                                                        {m_labels, "labels"},     {m_values, "values"},
                                                        {m_overlay, "overlay"},   {m_showTitle, "showTitle"},
                                                        {m_title, "title"},       {m_fontSize, "fontSize"},
                                                        {m_dpi, "dpi"},           {m_width, "width"},
                                                        {m_height, "height"},     {m_background, "background"},
                                                        {m_path, "path"},         {m_axisTitles, "axisTitles"}};
    for (const auto &[widget, name] : names)
        widget->setObjectName(QLatin1String(name));

    auto *form = new QFormLayout;
    form->addRow(tr("View:"), m_view);
    form->addRow(tr("Head:"), m_head);
    form->addRow(tr("Show:"), m_quantity);
    form->addRow(tr("Colour map:"), m_colorMap);
    form->addRow(tr("Colour scale:"), m_colorScale);
    form->addRow(tr("Scale:"), m_scale);
    form->addRow(m_colorBar);
    form->addRow(m_labels);
    form->addRow(m_values);
    form->addRow(m_axisTitles);
    form->addRow(m_overlay);
    auto *titleRow = new QHBoxLayout;
    titleRow->addWidget(m_showTitle);
    titleRow->addWidget(m_title, 1);
    form->addRow(titleRow);
    form->addRow(tr("Font size:"), m_fontSize);
    form->addRow(tr("DPI:"), m_dpi);
    auto *sizeRow = new QHBoxLayout;
    sizeRow->addWidget(m_width);
    sizeRow->addWidget(plainLabel(QStringLiteral("\u00d7")));
    sizeRow->addWidget(m_height);
    form->addRow(tr("Size:"), sizeRow);
    form->addRow(tr("Background:"), m_background);
    auto *pathRow = new QHBoxLayout;
    pathRow->addWidget(m_path, 1);
    pathRow->addWidget(browse);
    form->addRow(tr("File:"), pathRow);

    m_preview = plainLabel();
    m_preview->setObjectName(QStringLiteral("preview"));
    m_preview->setMinimumSize(kPreviewWidth, kPreviewHeight);
    m_preview->setAlignment(Qt::AlignCenter);
    m_preview->setStyleSheet(QStringLiteral("background: #e8e8e8"));
    m_sizeLabel = plainLabel();
    m_error = plainLabel();
    m_error->setStyleSheet(QStringLiteral("color: #b00020"));
    m_error->setWordWrap(true);
    auto *right = new QVBoxLayout;
    right->addWidget(m_preview, 1);
    right->addWidget(m_sizeLabel);
    right->addWidget(m_error);

    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    QPushButton *exportButton = buttons->addButton(tr("Export"), QDialogButtonBox::AcceptRole);
    exportButton->setObjectName(QStringLiteral("exportButton"));
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(exportButton, &QPushButton::clicked, this, [this] {
        if (exportFigure())
            accept();
    });
    connect(browse, &QPushButton::clicked, this, &ExportFigureDialog::browse);

    auto *columns = new QHBoxLayout;
    columns->addLayout(form);
    columns->addLayout(right, 1);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(columns);
    layout->addWidget(buttons);

    // Edits come in bursts (typing a title, spinning a size): one repaint per burst.
    m_previewTimer->setSingleShot(true);
    m_previewTimer->setInterval(0);
    connect(m_previewTimer, &QTimer::timeout, this, &ExportFigureDialog::updatePreview);
    for (QComboBox *c : {m_view, m_quantity, m_colorMap, m_scale, m_background})
        connect(c, &QComboBox::currentIndexChanged, this, &ExportFigureDialog::schedulePreview);
    connect(m_colorScale, &QComboBox::currentIndexChanged, this, &ExportFigureDialog::schedulePreview);
    restoreChoices();
    // The model or rollout tab in front wins over the view remembered from the last export.
    if (initial.view == FigureView::Model || initial.view == FigureView::Rollout)
        if (const int i = m_view->findData(int(initial.view)); i >= 0)
            m_view->setCurrentIndex(i);
    showSizeOf(m_view->currentData().toInt());
    connect(m_view, &QComboBox::currentIndexChanged, this, [this] { showSizeOf(m_view->currentData().toInt()); });
    for (QCheckBox *c : {m_colorBar, m_labels, m_values, m_axisTitles, m_overlay, m_showTitle})
        connect(c, &QCheckBox::toggled, this, &ExportFigureDialog::schedulePreview);
    for (QSpinBox *s : {m_head, m_fontSize, m_dpi, m_width, m_height})
        connect(s, &QSpinBox::valueChanged, this, &ExportFigureDialog::schedulePreview);
    connect(m_title, &QLineEdit::textChanged, this, &ExportFigureDialog::schedulePreview);
    updatePreview();
}

FigureOptions ExportFigureDialog::options() const
{
    FigureOptions o;
    o.view = FigureView(m_view->currentData().toInt());
    o.head = m_head->value();
    o.quantity = HeatmapQuantity(m_quantity->currentData().toInt());
    o.colorMap = ColorMapKind(m_colorMap->currentData().toInt());
    o.colorScale = ColorScale::fromKey(m_colorScale->currentData().toString()).value_or(ColorScaleKind::Linear);
    o.scale = ScaleScope(m_scale->currentData().toInt());
    o.colorBar = m_colorBar->isChecked();
    o.labels = m_labels->isChecked();
    o.values = m_values->isChecked();
    o.axisTitles = m_axisTitles->isChecked();
    o.overlayHeads = m_overlay->isChecked();
    if (!m_showTitle->isChecked())
        o.title = QString();
    else if (!m_title->text().isEmpty())
        o.title = m_title->text();
    o.fontSize = m_fontSize->value();
    o.transparent = m_background->currentData().toBool();
    o.layer = m_initial.layer;
    o.mergeWords = m_initial.mergeWords;
    return o;
}

ExportFigureDialog *ExportFigureDialog::pooledBlock(ShownAttention block, const FigureOptions &initial,
                                                    std::shared_ptr<const MaskMatrix> allowed, QWidget *parent)
{
    auto *dialog = new ExportFigureDialog(std::move(block), initial, parent);
    dialog->m_pooledBlock = true;
    dialog->m_blockAllowed = std::move(allowed);
    // Its one view: a block is of the head (or the mean) the pooled view shows.
    for (int i = dialog->m_view->count() - 1; i >= 0; --i)
        if (FigureView(dialog->m_view->itemData(i).toInt()) != initial.view)
            dialog->m_view->removeItem(i);
    dialog->updateEnabled();
    dialog->schedulePreview();
    return dialog;
}

FigureExporter ExportFigureDialog::exporter() const
{
    return FigureExporter(m_shown, m_blockAllowed);
}

bool ExportFigureDialog::hasFigure() const
{
    return !m_shown.isEmpty();
}

FigureSize ExportFigureDialog::figureSize() const
{
    FigureSize s;
    s.width = m_width->value();
    s.height = m_height->value();
    s.dpi = m_dpi->value();
    return s;
}

QString ExportFigureDialog::path() const
{
    return m_path->text();
}

void ExportFigureDialog::setPath(const QString &path)
{
    m_path->setText(path);
}

void ExportFigureDialog::updateEnabled()
{
    const FigureView v = FigureView(m_view->currentData().toInt());
    const bool heatmap = v == FigureView::Head || v == FigureView::Heads || v == FigureView::Mean ||
                         v == FigureView::Model || v == FigureView::Rollout;
    // A pooled block's figure is of the head the view shows, and its title names it.
    m_head->setEnabled(!m_pooledBlock &&
                       (v == FigureView::Head || v == FigureView::HeadView || v == FigureView::Teaching));
    m_quantity->setEnabled(v == FigureView::Head || v == FigureView::Heads);
    m_colorMap->setEnabled(heatmap);
    m_colorScale->setEnabled(heatmap);
    m_scale->setEnabled(heatmap);
    m_values->setEnabled(heatmap);
    m_axisTitles->setEnabled(heatmap);
    m_overlay->setEnabled(v == FigureView::HeadView);
    m_title->setEnabled(m_showTitle->isChecked());
}

void ExportFigureDialog::schedulePreview()
{
    m_previewTimer->start();
}

void ExportFigureDialog::updatePreview()
{
    updateEnabled();
    if (!hasFigure())
        return;
    const FigureOptions o = options();
    const FigureSize size = figureSize();
    const FigureExporter exporter = this->exporter();
    const QSizeF page = exporter.pageSize(o, size);
    const QSize pixels = exporter.pixelSize(o, size);
    // The layout of the exported page, scaled to fit the preview.
    const double scale = std::min(kPreviewWidth / page.width(), kPreviewHeight / page.height());
    QImage image(std::max(1, int(page.width() * scale)), std::max(1, int(page.height() * scale)),
                 QImage::Format_ARGB32_Premultiplied);
    image.fill(o.transparent ? QColor(0xcc, 0xcc, 0xcc) : QColor(Qt::white));
    {
        QPainter painter(&image);
        painter.setRenderHint(QPainter::Antialiasing);
        painter.scale(scale, scale);
        exporter.figure(o)->paint(painter, QRectF(QPointF(0, 0), page));
    }
    m_previewImage = image;
    m_preview->setPixmap(QPixmap::fromImage(image));
    m_sizeLabel->setText(tr("%1 \u00d7 %2 px at %3 DPI (%4 \u00d7 %5 cm)")
                             .arg(pixels.width())
                             .arg(pixels.height())
                             .arg(size.dpi)
                             .arg(page.width() * 2.54 / 72, 0, 'f', 1)
                             .arg(page.height() * 2.54 / 72, 0, 'f', 1));
    ++m_previewCount;
    emit previewUpdated();
}

void ExportFigureDialog::browse()
{
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Export Figure"), m_path->text(),
                                     tr("PNG image (*.png);;SVG vector image (*.svg);;PDF document (*.pdf)"));
    if (!path.isEmpty())
        m_path->setText(path);
}

namespace {

const QString kGroup = QStringLiteral("exportFigure");

} // namespace

QString ExportFigureDialog::rememberedSuffix()
{
    const QString suffix = QSettings().value(kGroup + QStringLiteral("/suffix")).toString();
    return figureFormatFromSuffix(suffix) ? suffix : QStringLiteral("png");
}

void ExportFigureDialog::restoreChoices()
{
    QSettings settings;
    settings.beginGroup(kGroup);
    if (!settings.contains(QStringLiteral("view")))
        return; // never exported: the view in front, as the window passed it
    auto combo = [&](QComboBox *box, const char *key) {
        const int i = box->findData(settings.value(QLatin1String(key)));
        if (i >= 0)
            box->setCurrentIndex(i);
    };
    combo(m_view, "view");
    combo(m_quantity, "quantity");
    combo(m_colorMap, "colorMap");
    combo(m_colorScale, "colorScale");
    combo(m_scale, "scale");
    combo(m_background, "background");
    for (auto [box, key] :
         {std::pair{m_colorBar, "colorBar"}, std::pair{m_labels, "labels"}, std::pair{m_values, "values"},
          std::pair{m_axisTitles, "axisTitles"}, std::pair{m_overlay, "overlay"}, std::pair{m_showTitle, "showTitle"}})
        box->setChecked(settings.value(QLatin1String(key), box->isChecked()).toBool());
    for (auto [spin, key] : {std::pair{m_fontSize, "fontSize"}, std::pair{m_dpi, "dpi"}})
        spin->setValue(settings.value(QLatin1String(key), spin->value()).toInt());
    for (FigureView v : FigureOptions::allViews()) {
        const QString key = QStringLiteral("size/") + FigureOptions::viewKey(v);
        if (settings.contains(key))
            m_sizes.insert(int(v), settings.value(key).toSize());
    }
}

void ExportFigureDialog::showSizeOf(int view)
{
    if (m_sizeView >= 0)
        m_sizes.insert(m_sizeView, QSize(m_width->value(), m_height->value()));
    m_sizeView = view;
    const QSize size = m_sizes.value(view, QSize(0, 0));
    const QSignalBlocker blockWidth(m_width), blockHeight(m_height);
    m_width->setValue(size.width());
    m_height->setValue(size.height());
    schedulePreview();
}

void ExportFigureDialog::saveChoices() const
{
    QSettings settings;
    settings.beginGroup(kGroup);
    settings.setValue(QStringLiteral("view"), m_view->currentData());
    settings.setValue(QStringLiteral("quantity"), m_quantity->currentData());
    settings.setValue(QStringLiteral("colorMap"), m_colorMap->currentData());
    settings.setValue(QStringLiteral("colorScale"), m_colorScale->currentData()); // "linear", "log", "percentile"
    settings.setValue(QStringLiteral("scale"), m_scale->currentData());
    settings.setValue(QStringLiteral("background"), m_background->currentData());
    for (auto [box, key] :
         {std::pair{m_colorBar, "colorBar"}, std::pair{m_labels, "labels"}, std::pair{m_values, "values"},
          std::pair{m_axisTitles, "axisTitles"}, std::pair{m_overlay, "overlay"}, std::pair{m_showTitle, "showTitle"}})
        settings.setValue(QLatin1String(key), box->isChecked());
    for (auto [spin, key] : {std::pair{m_fontSize, "fontSize"}, std::pair{m_dpi, "dpi"}})
        settings.setValue(QLatin1String(key), spin->value());
    QHash<int, QSize> sizes = m_sizes;
    sizes.insert(m_sizeView, QSize(m_width->value(), m_height->value()));
    for (auto it = sizes.cbegin(); it != sizes.cend(); ++it)
        if (it.key() >= 0)
            settings.setValue(QStringLiteral("size/") + FigureOptions::viewKey(FigureView(it.key())), it.value());
    if (const auto format = figureFormatFromSuffix(path()))
        settings.setValue(QStringLiteral("suffix"), figureFormatSuffix(*format));
}

void ExportFigureDialog::done(int result)
{
    // Closed either way: what was chosen is what the user wants next time.
    saveChoices();
    QDialog::done(result);
}

bool ExportFigureDialog::exportFigure()
{
    m_lastError.clear();
    if (!hasFigure())
        m_lastError = tr("Nothing to export yet: the project is still being computed.");
    else if (path().isEmpty())
        m_lastError = tr("Choose a file name ending in .png, .svg or .pdf.");
    else if (!figureFormatFromSuffix(path()))
        m_lastError = tr("%1: the file name must end in .png, .svg or .pdf.").arg(path());
    else if (!exporter().write(path(), options(), figureSize(), &m_lastError) && m_lastError.isEmpty())
        m_lastError = tr("%1: the figure could not be written.").arg(path());
    m_error->setText(m_lastError);
    return m_lastError.isEmpty();
}

} // namespace attnscope
