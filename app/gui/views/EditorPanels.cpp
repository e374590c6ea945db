#include "app/gui/views/EditorPanels.h"

#include "app/gui/views/MatrixModel.h"
#include "app/gui/views/ModernAttentionPanel.h"
#include "core/attention/HeadLayout.h"

#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTableView>
#include <QVBoxLayout>

namespace attnscope {

namespace {

bool isOptional(MatrixId id)
{
    return id == MatrixId::Wo || id == MatrixId::BiasQ || id == MatrixId::BiasK || id == MatrixId::BiasV ||
           id == MatrixId::BiasO || id == MatrixId::Xv || id == MatrixId::Sinks;
}

QString shapeMeaning(MatrixId id, bool grouped)
{
    // With key/value heads G < H, W_K and W_V hold G blocks (design.md, "Modern attention").
    if (grouped) {
        switch (id) {
        case MatrixId::Wk:
            return MatrixEditor::tr("d_kv \u00d7 G·dK (G key/value heads)");
        case MatrixId::Wv:
            return MatrixEditor::tr("d_kv \u00d7 G·dV (G key/value heads)");
        case MatrixId::BiasK:
            return MatrixEditor::tr("G·dK");
        case MatrixId::BiasV:
            return MatrixEditor::tr("G·dV");
        default:
            break;
        }
    }
    switch (id) {
    case MatrixId::Xq:
        return MatrixEditor::tr("Tq \u00d7 d_q");
    case MatrixId::Xkv:
        return MatrixEditor::tr("Tk \u00d7 d_kv");
    case MatrixId::Xv:
        return MatrixEditor::tr("Tk \u00d7 d_v: the values' own input; W_V reads it");
    case MatrixId::Wq:
        return MatrixEditor::tr("d_q \u00d7 H·dK");
    case MatrixId::Wk:
        return MatrixEditor::tr("d_kv \u00d7 H·dK");
    case MatrixId::Wv:
        return MatrixEditor::tr("d_kv \u00d7 H·dV");
    case MatrixId::Wo:
        return MatrixEditor::tr("H·dV \u00d7 d_out");
    case MatrixId::BiasQ:
    case MatrixId::BiasK:
        return MatrixEditor::tr("H·dK");
    case MatrixId::BiasV:
        return MatrixEditor::tr("H·dV");
    case MatrixId::BiasO:
        return MatrixEditor::tr("d_out");
    case MatrixId::Sinks:
        return MatrixEditor::tr("H: one logit per query head, joining each row's softmax");
    }
    return {};
}

QSpinBox *sizeBox(int max)
{
    auto *box = new QSpinBox;
    box->setRange(1, max);
    box->setKeyboardTracking(false); // one command per finished entry, not per keystroke
    return box;
}

} // namespace

namespace {

// Tab and Shift+Tab (and Tab out of an edited cell) go through the numbers row by row: at a row's
// end to the next row's first number, never into the token column, and not past the last cell.
class NumberTable : public QTableView
{
public:
    QModelIndex moveCursor(CursorAction action, Qt::KeyboardModifiers modifiers) override
    {
        const auto *matrix = qobject_cast<const MatrixModel *>(model());
        const QModelIndex at = currentIndex();
        if (!matrix || !at.isValid() || (action != MoveNext && action != MovePrevious))
            return QTableView::moveCursor(action, modifiers);
        const int first = matrix->hasTokenColumn() ? 1 : 0, last = matrix->columnCount() - 1;
        int row = at.row(), column = std::max(at.column(), first) + (action == MoveNext ? 1 : -1);
        if (column > last) {
            if (row + 1 >= matrix->rowCount())
                return at;
            column = first;
            ++row;
        } else if (column < first) {
            if (row == 0)
                return at;
            column = last;
            --row;
        }
        return matrix->index(row, column);
    }
};

} // namespace

MatrixEditor::MatrixEditor(MatrixId id, QWidget *parent)
    : QWidget(parent), m_id(id), m_model(new MatrixModel(id, this)), m_table(new NumberTable), m_shape(new QLabel),
      m_reinit(new QPushButton(tr("Re-initialise")))
{
    m_shape->setTextFormat(Qt::RichText); // the matrix's name in bold, and numbers
    m_table->setModel(m_model);
    m_table->horizontalHeader()->setDefaultSectionSize(70);
    m_table->verticalHeader()->setDefaultSectionSize(22);
    m_table->setObjectName(QStringLiteral("table_") + matrixName(id));
    m_table->installEventFilter(this);
    auto *bar = new QHBoxLayout;
    bar->addWidget(m_shape, 1);
    if (isOptional(id)) {
        m_present = new QCheckBox(tr("Use"));
        m_present->setToolTip(tr("Include %1 in the computation").arg(matrixName(id)));
        bar->addWidget(m_present);
        connect(m_present, &QCheckBox::clicked, this, [this](bool on) {
            if (m_document)
                m_document->setMatrixPresent(m_id, on);
        });
    }
    if (m_model->hasTokenColumn()) {
        m_insert = new QPushButton(tr("Insert token"));
        m_remove = new QPushButton(tr("Remove token"));
        bar->addWidget(m_insert);
        bar->addWidget(m_remove);
        connect(m_insert, &QPushButton::clicked, this, &MatrixEditor::insertToken);
        connect(m_remove, &QPushButton::clicked, this, &MatrixEditor::removeToken);
    }
    m_reinit->setToolTip(tr("Fill %1 anew with the chosen initialisation and seed").arg(matrixName(id)));
    bar->addWidget(m_reinit);
    connect(m_reinit, &QPushButton::clicked, this, &MatrixEditor::reinitialise);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addLayout(bar);
    layout->addWidget(m_table);
    connect(m_model, &QAbstractItemModel::modelReset, this, &MatrixEditor::updateState);
    connect(m_model, &QAbstractItemModel::modelReset, this, [this] {
        if (m_model->hasTokenColumn())
            m_table->resizeColumnToContents(0);
    });
}

QRect MatrixEditor::selectedCells() const
{
    QRect box;
    QModelIndexList cells =
        m_table->selectionModel() ? m_table->selectionModel()->selectedIndexes() : QModelIndexList{};
    if (cells.isEmpty() && m_table->currentIndex().isValid())
        cells << m_table->currentIndex();
    for (const QModelIndex &i : cells) {
        const int col = m_model->matrixColumn(i.column());
        if (col >= 0)
            box |= QRect(col, i.row(), 1, 1);
    }
    return box;
}

bool MatrixEditor::paste()
{
    const QRect box = selectedCells();
    if (!m_document || box.isEmpty())
        return false;
    return m_document->pasteText(m_id, box.top(), box.left(), QGuiApplication::clipboard()->text(), box.height(),
                                 box.width());
}

void MatrixEditor::copy()
{
    const QRect box = selectedCells();
    if (!m_document || box.isEmpty())
        return;
    QStringList lines;
    for (int r = box.top(); r <= box.bottom(); ++r) {
        QStringList cells;
        for (int c = box.left(); c <= box.right(); ++c)
            cells << QString::number(double(matrixValue(m_document->project(), m_id, r, c)), 'g', 9);
        lines << cells.join(QLatin1Char('\t'));
    }
    QGuiApplication::clipboard()->setText(lines.join(QLatin1Char('\n')) + QLatin1Char('\n'));
}

bool MatrixEditor::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_table && event->type() == QEvent::KeyPress) {
        auto *key = static_cast<QKeyEvent *>(event);
        if (key->matches(QKeySequence::Paste))
            return paste(), true;
        if (key->matches(QKeySequence::Copy))
            return copy(), true;
    }
    return QWidget::eventFilter(watched, event);
}

void MatrixEditor::setDocument(Document *document)
{
    m_document = document;
    m_model->setDocument(document);
    updateState();
}

void MatrixEditor::insertToken()
{
    if (!m_document)
        return;
    const int row = m_table->currentIndex().isValid() ? m_table->currentIndex().row() + 1 : m_model->rowCount();
    m_document->insertToken(m_model->side(), row, tr("new"));
    m_table->setCurrentIndex(m_model->index(row, 0));
}

void MatrixEditor::removeToken()
{
    if (!m_document)
        return;
    const int row = m_table->currentIndex().isValid() ? m_table->currentIndex().row() : m_model->rowCount() - 1;
    m_document->removeToken(m_model->side(), row);
}

void MatrixEditor::reinitialise()
{
    if (m_document)
        m_document->reinitialise(m_id);
}

void MatrixEditor::updateState()
{
    const bool exists = m_document && matrixExists(m_document->project(), m_id);
    if (!m_document)
        m_shape->clear();
    else if (exists)
        m_shape->setText(QStringLiteral("<b>%1</b>: %2 \u00d7 %3 (%4)")
                             .arg(matrixName(m_id))
                             .arg(matrixRows(m_document->project(), m_id))
                             .arg(matrixCols(m_document->project(), m_id))
                             .arg(shapeMeaning(m_id, HeadLayout::of(m_document->problem().spec).grouped())));
    else if (m_id == MatrixId::Xkv)
        m_shape->setText(tr("Self-attention: keys and values come from the query input."));
    else if (m_id == MatrixId::Xv)
        m_shape->setText(m_document->problem().spec.mode == AttentionMode::Cross
                             ? tr("No separate value input: the values come from the key input. Check Use to "
                                  "give them their own.")
                             : tr("Self-attention: keys and values come from the query input."));
    else
        m_shape->setText(tr("<b>%1</b>: not used").arg(matrixName(m_id)));
    if (m_present) {
        m_present->setChecked(exists);
        m_present->setEnabled(m_document && (m_id != MatrixId::BiasO || m_document->problem().weights.o) &&
                              (m_id != MatrixId::Xv || m_document->problem().spec.mode == AttentionMode::Cross));
    }
    m_reinit->setEnabled(exists);
    if (m_insert) {
        m_insert->setEnabled(exists);
        m_remove->setEnabled(exists && m_model->rowCount() > 1);
    }
}

ModelPanel::ModelPanel(QWidget *parent)
    : QWidget(parent), m_heads(sizeBox(256)), m_kvHeads(new QComboBox), m_headDimQK(sizeBox(4096)),
      m_headDimV(sizeBox(4096)), m_dModel(sizeBox(65536)), m_dKv(sizeBox(65536)), m_dOut(sizeBox(65536)),
      m_mode(new QComboBox), m_scale(new QComboBox), m_scaleValue(new QDoubleSpinBox), m_maskFill(new QComboBox),
      m_init(new QComboBox), m_seed(new QSpinBox), m_stddev(new QDoubleSpinBox), m_modern(new ModernAttentionPanel),
      m_shapes(new QLabel)
{
    m_heads->setObjectName(QStringLiteral("heads"));
    m_kvHeads->setObjectName(QStringLiteral("kvHeads"));
    m_kvHeads->setToolTip(tr("Key/value heads G (grouped-query attention): query head h reads key/value head "
                             "h / (H/G). 1 is multi-query attention; H, one per head, is plain multi-head "
                             "attention. G divides H."));
    m_headDimQK->setObjectName(QStringLiteral("headDimQK"));
    m_headDimV->setObjectName(QStringLiteral("headDimV"));
    m_mode->addItem(tr("Self-attention"), int(AttentionMode::Self));
    m_mode->addItem(tr("Cross-attention"), int(AttentionMode::Cross));
    m_scale->addItem(tr("1/√dK"), int(ScaleMode::InvSqrtDk));
    m_scale->addItem(tr("none (1)"), int(ScaleMode::None));
    m_scale->addItem(tr("custom"), int(ScaleMode::Custom));
    m_scaleValue->setDecimals(4);
    m_scaleValue->setRange(-1000, 1000);
    m_scaleValue->setSingleStep(0.05);
    m_scaleValue->setKeyboardTracking(false);
    m_maskFill->addItem(tr("-inf (masked rows give 0)"), int(MaskFill::NegInf));
    m_maskFill->addItem(tr("-1e9 (masked rows uniform)"), int(MaskFill::NegLarge));
    m_init->addItem(tr("Xavier"), int(InitKind::Xavier));
    m_init->addItem(tr("Kaiming"), int(InitKind::Kaiming));
    m_init->addItem(tr("Gaussian"), int(InitKind::Gaussian));
    m_init->addItem(tr("Zeros"), int(InitKind::Zeros));
    m_seed->setRange(0, 1 << 30);
    m_seed->setValue(1);
    m_stddev->setRange(0.0001, 100);
    m_stddev->setValue(1.0);
    m_stddev->setDecimals(4);
    m_shapes->setWordWrap(true);
    m_shapes->setTextFormat(Qt::RichText);

    auto *form = new QFormLayout(this);
    form->addRow(tr("Mode"), m_mode);
    form->addRow(tr("Heads H"), m_heads);
    form->addRow(tr("Key/value heads G"), m_kvHeads);
    form->addRow(tr("Head size dK (Q, K)"), m_headDimQK);
    form->addRow(tr("Head size dV (V)"), m_headDimV);
    form->addRow(tr("Query input d_q"), m_dModel);
    form->addRow(tr("Key/value input d_kv"), m_dKv);
    form->addRow(tr("Output d_out (W_O)"), m_dOut);
    auto *scaleRow = new QHBoxLayout;
    scaleRow->addWidget(m_scale);
    scaleRow->addWidget(m_scaleValue);
    form->addRow(tr("Scale"), scaleRow);
    form->addRow(tr("Mask fill"), m_maskFill);
    form->addRow(m_modern);
    form->addRow(tr("New values"), m_init);
    form->addRow(tr("Seed"), m_seed);
    form->addRow(tr("Gaussian std. dev."), m_stddev);
    form->addRow(m_shapes);

    auto withDoc = [this](auto f) {
        return [this, f](auto... args) {
            if (m_document)
                f(m_document.data(), args...);
        };
    };
    connect(m_heads, &QSpinBox::valueChanged, this, withDoc([](Document *d, int v) { d->setHeads(v); }));
    connect(m_kvHeads, &QComboBox::activated, this,
            withDoc([this](Document *d, int) { d->setKeyValueHeads(m_kvHeads->currentData().toInt()); }));
    connect(m_headDimQK, &QSpinBox::valueChanged, this, withDoc([](Document *d, int v) { d->setHeadDimQK(v); }));
    connect(m_headDimV, &QSpinBox::valueChanged, this, withDoc([](Document *d, int v) { d->setHeadDimV(v); }));
    connect(m_dModel, &QSpinBox::valueChanged, this,
            withDoc([](Document *d, int v) { d->setInputDim(TokenSide::Query, v); }));
    connect(m_dKv, &QSpinBox::valueChanged, this,
            withDoc([](Document *d, int v) { d->setInputDim(TokenSide::Key, v); }));
    connect(m_dOut, &QSpinBox::valueChanged, this, withDoc([](Document *d, int v) { d->setOutputDim(v); }));
    connect(m_mode, &QComboBox::activated, this,
            withDoc([this](Document *d, int) { d->setMode(AttentionMode(m_mode->currentData().toInt())); }));
    connect(m_scale, &QComboBox::activated, this, [this](int) { applyScaleMode(); });
    connect(m_scaleValue, &QDoubleSpinBox::valueChanged, this, [this](double) { applyScaleValue(); });
    connect(m_maskFill, &QComboBox::activated, this,
            withDoc([this](Document *d, int) { d->setMaskFill(MaskFill(m_maskFill->currentData().toInt())); }));
    connect(m_init, &QComboBox::activated, this, [this](int) { applyInitOptions(); });
    connect(m_seed, &QSpinBox::valueChanged, this, [this](int) { applyInitOptions(); });
    connect(m_stddev, &QDoubleSpinBox::valueChanged, this, [this](double) { applyInitOptions(); });
}

void ModelPanel::setDocument(Document *document)
{
    if (m_document)
        disconnect(m_document, nullptr, this, nullptr);
    m_document = document;
    m_modern->setDocument(document);
    if (m_document) {
        connect(m_document, &Document::changed, this, &ModelPanel::updateFromDocument);
        // A refused size leaves the document as it was: show its values again.
        connect(m_document, &Document::editRefused, this, &ModelPanel::updateFromDocument);
        applyInitOptions();
    }
    updateFromDocument();
}

void ModelPanel::applyInitOptions()
{
    if (m_document)
        m_document->setInitOptions(
            {InitKind(m_init->currentData().toInt()), std::uint64_t(m_seed->value()), m_stddev->value()});
}

void ModelPanel::applyScaleMode()
{
    if (!m_document)
        return;
    const auto mode = ScaleMode(m_scale->currentData().toInt());
    // A mode switch is its own undo step: no merge key.
    m_document->setScale(mode,
                         mode == ScaleMode::Custom ? m_scaleValue->value() : m_document->problem().spec.scaleValue);
}

void ModelPanel::applyScaleValue()
{
    if (!m_document || ScaleMode(m_scale->currentData().toInt()) != ScaleMode::Custom)
        return;
    // Dragging or stepping the custom number is one undo step (the document merges edits of
    // this field only).
    constexpr int kScaleDragKey = 1;
    m_document->setScale(ScaleMode::Custom, m_scaleValue->value(), kScaleDragKey);
}

void ModelPanel::updateFromDocument()
{
    setEnabled(m_document);
    if (!m_document)
        return;
    const AttentionProblem &p = m_document->problem();
    const QSignalBlocker b1(m_heads), b2(m_headDimQK), b3(m_headDimV), b4(m_dModel), b5(m_dKv), b6(m_dOut), b7(m_mode),
        b8(m_scale), b9(m_scaleValue), b10(m_maskFill), b11(m_kvHeads);
    m_heads->setValue(p.spec.heads);
    m_kvHeads->clear();
    for (int g = 1; g <= p.spec.heads; ++g) {
        if (p.spec.heads % g != 0)
            continue;
        const QString text = g == 1 && p.spec.heads > 1 ? tr("%1 (multi-query)").arg(g)
                             : g == p.spec.heads        ? tr("%1 (one per head)").arg(g)
                                                        : QString::number(g);
        m_kvHeads->addItem(text, g);
    }
    m_kvHeads->setCurrentIndex(m_kvHeads->findData(p.spec.keyValueHeads()));
    m_headDimQK->setValue(p.spec.headDimQK);
    m_headDimV->setValue(p.spec.headDimV);
    m_dModel->setValue(int(p.dq()));
    m_dKv->setValue(int(p.dkv()));
    m_dKv->setEnabled(p.spec.mode == AttentionMode::Cross);
    m_dOut->setValue(int(p.dOut()));
    m_dOut->setEnabled(p.weights.o.has_value());
    m_mode->setCurrentIndex(m_mode->findData(int(p.spec.mode)));
    m_scale->setCurrentIndex(m_scale->findData(int(p.spec.scaleMode)));
    m_scaleValue->setValue(p.spec.scale());
    m_scaleValue->setEnabled(p.spec.scaleMode == ScaleMode::Custom);
    m_maskFill->setCurrentIndex(m_maskFill->findData(int(p.spec.maskFill)));
    if (HeadLayout::of(p.spec).grouped())
        m_shapes->setText(
            tr("Tq = %1, Tk = %2; Q: %1 \u00d7 %3, K: %2 \u00d7 %4, V: %2 \u00d7 %5 (H = %6, G = %7); scale = %8")
                .arg(p.tq())
                .arg(p.tk())
                .arg(p.qkWidth())
                .arg(p.kWidth())
                .arg(p.kvVWidth())
                .arg(p.spec.heads)
                .arg(p.spec.keyValueHeads())
                .arg(p.spec.scale(), 0, 'g', 4));
    else
        m_shapes->setText(tr("Tq = %1, Tk = %2; Q: %1 \u00d7 %3, K: %2 \u00d7 %3, V: %2 \u00d7 %4 (H = %5); scale = %6")
                              .arg(p.tq())
                              .arg(p.tk())
                              .arg(p.qkWidth())
                              .arg(p.vWidth())
                              .arg(p.spec.heads)
                              .arg(p.spec.scale(), 0, 'g', 4));
}

} // namespace attnscope
