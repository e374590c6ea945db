#include "app/gui/views/ModernAttentionPanel.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QSignalBlocker>
#include <QToolButton>
#include <QVBoxLayout>

namespace attnscope {

namespace {

// Stepping or retyping one number is one undo step (the document merges edits of that field only).
constexpr int kRopeBaseKey = 1;
constexpr int kSoftcapKey = 1;
constexpr double kDefaultSoftcap = 50.0; // Gemma 2's attention soft-cap

QDoubleSpinBox *numberBox(double min, double max, double value)
{
    auto *box = new QDoubleSpinBox;
    box->setRange(min, max);
    box->setDecimals(2);
    box->setValue(value);
    box->setKeyboardTracking(false); // one command per finished entry, not per keystroke
    return box;
}

} // namespace

ModernAttentionPanel::ModernAttentionPanel(QWidget *parent)
    : QWidget(parent), m_expand(new QToolButton), m_fields(new QWidget), m_rope(new QCheckBox(tr("RoPE"))),
      m_ropeBase(numberBox(0.01, 1e12, kDefaultRopeBase)), m_queryPositions(new QLineEdit),
      m_keyPositions(new QLineEdit), m_softcap(new QCheckBox(tr("Soft-cap"))),
      m_softcapValue(numberBox(0.01, 1e6, kDefaultSoftcap))
{
    m_rope->setObjectName(QStringLiteral("rope"));
    m_ropeBase->setObjectName(QStringLiteral("ropeBase"));
    m_queryPositions->setObjectName(QStringLiteral("queryPositions"));
    m_keyPositions->setObjectName(QStringLiteral("keyPositions"));
    m_softcap->setObjectName(QStringLiteral("softcap"));
    m_softcapValue->setObjectName(QStringLiteral("softcapValue"));
    m_rope->setToolTip(tr("Rotary position embeddings: each head's q and k are turned by their position p; "
                          "dimension i pairs with i + dK/2 at angle p·base^(-2i/dK). dK must be even."));
    m_ropeBase->setToolTip(tr("RoPE base (theta): a number above 0; 10000 in most models"));
    const QString positionsTip = tr("Whole numbers of 0 or more, one per token, separated by spaces or commas; "
                                    "empty: 0, 1, 2, \u2026 Causal and the window compare these positions.");
    m_queryPositions->setToolTip(positionsTip);
    m_keyPositions->setToolTip(positionsTip);
    m_softcap->setToolTip(tr("Soft-capping c: scores become c·tanh(scores / c) before the mask"));
    m_softcapValue->setToolTip(tr("Soft-cap c: a number above 0"));

    m_expand->setObjectName(QStringLiteral("modernAttention"));
    m_expand->setText(tr("Modern attention"));
    m_expand->setCheckable(true);
    m_expand->setAutoRaise(true);
    m_expand->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_expand);
    layout->addWidget(m_fields);
    setExpanded(false);
    connect(m_expand, &QToolButton::toggled, this, &ModernAttentionPanel::setExpanded);

    auto *form = new QFormLayout(m_fields);
    form->setContentsMargins(0, 0, 0, 0);
    auto *ropeRow = new QHBoxLayout;
    ropeRow->addWidget(m_rope);
    ropeRow->addWidget(m_ropeBase, 1);
    form->addRow(tr("Position encoding"), ropeRow);
    form->addRow(tr("Query positions"), m_queryPositions);
    form->addRow(tr("Key positions"), m_keyPositions);
    auto *capRow = new QHBoxLayout;
    capRow->addWidget(m_softcap);
    capRow->addWidget(m_softcapValue, 1);
    form->addRow(tr("Scores"), capRow);

    connect(m_rope, &QCheckBox::clicked, this, [this](bool on) {
        if (m_document)
            m_document->setRopeEnabled(on);
    });
    connect(m_ropeBase, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        if (m_document)
            m_document->setRopeBase(v, kRopeBaseKey);
    });
    connect(m_queryPositions, &QLineEdit::editingFinished, this, [this] { applyPositions(TokenSide::Query); });
    connect(m_keyPositions, &QLineEdit::editingFinished, this, [this] { applyPositions(TokenSide::Key); });
    connect(m_softcap, &QCheckBox::clicked, this, [this](bool on) {
        if (m_document)
            m_document->setSoftcap(on ? std::optional<double>(m_softcapValue->value()) : std::nullopt);
    });
    connect(m_softcapValue, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        if (m_document && m_document->problem().spec.softcap)
            m_document->setSoftcap(v, kSoftcapKey);
    });
}

bool ModernAttentionPanel::isExpanded() const
{
    return m_expand->isChecked();
}

void ModernAttentionPanel::setExpanded(bool expanded)
{
    const QSignalBlocker blocker(m_expand);
    m_expand->setChecked(expanded);
    m_expand->setArrowType(expanded ? Qt::DownArrow : Qt::RightArrow);
    m_fields->setVisible(expanded);
}

void ModernAttentionPanel::setDocument(Document *document)
{
    if (m_document)
        disconnect(m_document, nullptr, this, nullptr);
    m_document = document;
    // Open for a document that uses these fields; otherwise as the user left it.
    if (m_document && (m_document->problem().spec.rope || m_document->problem().spec.softcap))
        setExpanded(true);
    if (m_document) {
        connect(m_document, &Document::changed, this, [this] { updateFromDocument(false); });
        // A refused value leaves the document as it was: show it again, except in the positions
        // field whose typed text was refused: the user is about to correct it.
        connect(m_document, &Document::editRefused, this, [this] { updateFromDocument(true); });
    }
    updateFromDocument(false);
}

void ModernAttentionPanel::applyPositions(TokenSide side)
{
    QLineEdit *edit = side == TokenSide::Key ? m_keyPositions : m_queryPositions;
    if (m_document && edit->isEnabled() && edit->isModified()) {
        m_document->setRopePositionsText(side, edit->text());
        edit->setModified(false);
    }
}

void ModernAttentionPanel::updateFromDocument(bool keepTyped)
{
    setEnabled(m_document);
    if (!m_document)
        return;
    const AttentionProblem &p = m_document->problem();
    const QSignalBlocker b1(m_rope), b2(m_ropeBase), b3(m_softcap), b4(m_softcapValue);
    const auto &rope = p.spec.rope;
    m_rope->setChecked(rope.has_value());
    m_ropeBase->setEnabled(rope.has_value());
    m_ropeBase->setValue(rope ? rope->base : kDefaultRopeBase);
    const bool cross = p.spec.mode == AttentionMode::Cross;
    const auto showPositions = [keepTyped](QLineEdit *edit, bool enabled, const std::vector<std::int64_t> &positions,
                                           const QString &placeholder) {
        edit->setEnabled(enabled);
        edit->setPlaceholderText(placeholder);
        if (!(keepTyped && edit->isModified()))
            edit->setText(edit::positionsText(positions));
    };
    const std::vector<std::int64_t> none;
    showPositions(m_queryPositions, rope.has_value(), rope ? rope->queryPositions : none,
                  tr("0, 1, \u2026, %1 (one per query token)").arg(p.tq() - 1));
    // In self-attention the keys are the query tokens and share their positions, unless a file
    // gave the keys their own.
    showPositions(m_keyPositions, rope && (cross || !rope->keyPositions.empty()), rope ? rope->keyPositions : none,
                  cross ? tr("0, 1, \u2026, %1 (one per key token)").arg(p.tk() - 1) : tr("the query positions"));
    m_softcap->setChecked(p.spec.softcap.has_value());
    m_softcapValue->setEnabled(p.spec.softcap.has_value());
    if (p.spec.softcap)
        m_softcapValue->setValue(*p.spec.softcap);
}

} // namespace attnscope
