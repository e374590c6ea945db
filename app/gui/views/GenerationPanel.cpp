#include "app/gui/views/GenerationPanel.h"

#include "app/gui/views/PlainText.h"
#include "app/render/DisplayText.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMouseEvent>
#include <QPainter>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace attnscope {

namespace {

constexpr double kRowHeight = 22.0;
constexpr double kLegendHeight = 22.0;

QColor probabilityColor()
{
    return QColor(0xb0, 0xb0, 0xb0);
}

QColor sampledColor()
{
    return QColor(0x1f, 0x77, 0xb4);
}

QString percent(double p)
{
    if (p > 0 && p < 0.001)
        return QStringLiteral("<0.1%");
    return QStringLiteral("%1%").arg(p * 100, 0, 'f', 1);
}

// A token as one line of a list or a bar label: spaces and controls visible.
QString shownToken(const QString &text)
{
    // As the views label tokens: a space "␣", a newline "↵", a tab "⇥", other controls pictured.
    QString shown = text;
    shown.replace(QLatin1Char(' '), QChar(0x2423));
    shown.replace(QLatin1Char('\n'), QChar(0x21b5));
    shown.replace(QLatin1Char('\t'), QChar(0x21e5));
    shown = displayText(shown);
    return shown.isEmpty() ? QStringLiteral("\u2205") : shown;
}

} // namespace

CandidatesChart::CandidatesChart(QWidget *parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("candidatesChart"));
    setMouseTracking(false);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Minimum);
}

QSize CandidatesChart::sizeHint() const
{
    return {320, int(kLegendHeight + 10 * kRowHeight + 8)};
}

QSize CandidatesChart::minimumSizeHint() const
{
    return {220, int(kLegendHeight + 10 * kRowHeight + 8)};
}

void CandidatesChart::setStep(const GenerationShotPtr &shot, int step)
{
    m_shot = shot;
    if (shot && step >= 0 && step < int(shot->generation.steps.size()))
        m_step = shot->generation.steps[std::size_t(step)];
    else
        m_step.reset();
    m_picked.reset();
    update();
}

void CandidatesChart::pick(std::optional<std::int32_t> id)
{
    m_picked = id;
    update();
}

QRectF CandidatesChart::rowRect(int row) const
{
    if (!m_step || row < 0 || row >= int(m_step->candidates.size()))
        return {};
    return QRectF(0, kLegendHeight + row * kRowHeight, width(), kRowHeight);
}

void CandidatesChart::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(rect(), palette().color(QPalette::Base));
    const QFontMetricsF fm(font());
    // The legend: what the two bars of a row are.
    double x = 4;
    const auto legend = [&](const QColor &color, const QString &text) {
        p.fillRect(QRectF(x, 6, 10, 10), color);
        x += 14;
        p.setPen(palette().color(QPalette::Text));
        p.drawText(QRectF(x, 0, fm.horizontalAdvance(text) + 2, kLegendHeight), Qt::AlignVCenter, text);
        x += fm.horizontalAdvance(text) + 12;
    };
    legend(probabilityColor(), tr("probability"));
    legend(sampledColor(), tr("after temperature, top-k, top-p"));
    if (!m_step) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect().adjusted(0, int(kLegendHeight), 0, 0), Qt::AlignCenter,
                   tr("Generate or step to see the candidates of each token."));
        return;
    }
    const double labelWidth = std::min(width() * 0.3, 110.0);
    const double valueWidth = fm.horizontalAdvance(QStringLiteral("100.0% / 100.0%")) + 8;
    const double barLeft = labelWidth + 6, barWidth = std::max(20.0, width() - barLeft - valueWidth - 4);
    for (int r = 0; r < int(m_step->candidates.size()); ++r) {
        const Candidate &c = m_step->candidates[std::size_t(r)];
        const QRectF row = rowRect(r);
        if (m_picked && *m_picked == c.id)
            p.fillRect(row, palette().color(QPalette::Highlight).lighter(170));
        const QString token = shownToken(m_shot ? m_shot->tokenText(c.id) : QString::fromStdString(c.token));
        p.setPen(palette().color(QPalette::Text));
        p.drawText(QRectF(4, row.top(), labelWidth - 4, kRowHeight), Qt::AlignVCenter | Qt::AlignRight,
                   fm.elidedText(token, Qt::ElideRight, labelWidth - 4));
        const double h = (kRowHeight - 6) / 2;
        p.fillRect(QRectF(barLeft, row.top() + 3, barWidth * std::clamp(double(c.p), 0.0, 1.0), h), probabilityColor());
        p.fillRect(QRectF(barLeft, row.top() + 3 + h, barWidth * std::clamp(double(c.sampled), 0.0, 1.0), h),
                   sampledColor());
        p.drawText(QRectF(barLeft + barWidth + 4, row.top(), valueWidth, kRowHeight), Qt::AlignVCenter,
                   QStringLiteral("%1 / %2").arg(percent(c.p), percent(c.sampled)));
        if (c.id == m_step->id) {
            p.setPen(QPen(QColor(0xff, 0x7f, 0x0e), 2));
            p.setBrush(Qt::NoBrush);
            p.drawRect(row.adjusted(1, 1, -1, -1));
        }
    }
}

void CandidatesChart::mousePressEvent(QMouseEvent *event)
{
    if (!m_step)
        return;
    for (int r = 0; r < int(m_step->candidates.size()); ++r)
        if (rowRect(r).contains(event->position())) {
            m_picked = m_step->candidates[std::size_t(r)].id;
            update();
            emit candidatePicked(*m_picked);
            return;
        }
}

GenerationPanel::GenerationPanel(QWidget *parent)
    : QWidget(parent), m_unavailable(plainLabel()), m_generate(new QPushButton(tr("&Generate"))),
      m_step(new QPushButton(tr("S&tep"))), m_stop(new QPushButton(tr("Sto&p"))),
      m_clear(new QPushButton(tr("Back to the Text"))), m_maxNew(new QSpinBox), m_temperature(new QDoubleSpinBox),
      m_topK(new QSpinBox), m_topP(new QDoubleSpinBox), m_seed(new QSpinBox),
      m_defaultsButton(new QPushButton(tr("Model's Defaults"))), m_text(plainLabel()), m_steps(new QListWidget),
      m_stepTitle(plainLabel()), m_chart(new CandidatesChart), m_force(new QPushButton(tr("&Force This Token"))),
      m_save(new QPushButton(tr("Save Generation\u2026")))
{
    setObjectName(QStringLiteral("generationPanel"));
    m_generate->setObjectName(QStringLiteral("generateButton"));
    m_step->setObjectName(QStringLiteral("stepButton"));
    m_stop->setObjectName(QStringLiteral("stopButton"));
    m_force->setObjectName(QStringLiteral("forceButton"));
    m_generate->setToolTip(tr("Continue the text the model reads, token by token, up to the most new tokens."));
    m_step->setToolTip(tr("Generate one more token: its row appears in every head."));
    m_stop->setToolTip(tr("Stop generating; the tokens so far stay."));
    m_clear->setToolTip(tr("Show the typed text again, without the generated tokens."));

    m_maxNew->setRange(1, 4096);
    m_maxNew->setToolTip(tr("The most tokens one Generate adds."));
    m_temperature->setRange(0, 10);
    m_temperature->setDecimals(2);
    m_temperature->setSingleStep(0.1);
    m_temperature->setSpecialValueText(tr("0 (greedy)"));
    m_temperature->setToolTip(tr("0 takes the most probable token; above 0 the logits are divided by it and a token "
                                 "is drawn."));
    m_topK->setRange(0, 1000000);
    m_topK->setSpecialValueText(tr("off"));
    m_topK->setToolTip(tr("Draw only from the k most probable tokens (0: all)."));
    m_topP->setRange(0.01, 1);
    m_topP->setDecimals(2);
    m_topP->setSingleStep(0.05);
    m_topP->setToolTip(tr("Draw only from the most probable tokens whose probabilities add up to p (1: all)."));
    m_seed->setRange(0, 2147483647);
    m_seed->setToolTip(tr("The same seed draws the same tokens again."));
    m_defaultsButton->setToolTip(tr("The decoding the model's generation_config.json asks for."));

    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_generate);
    buttons->addWidget(m_step);
    buttons->addWidget(m_stop);
    buttons->addStretch(1);
    buttons->addWidget(m_clear);

    auto *form = new QFormLayout;
    form->addRow(tr("Most new tokens:"), m_maxNew);
    form->addRow(tr("Temperature:"), m_temperature);
    auto *filters = new QHBoxLayout;
    filters->addWidget(plainLabel(tr("Top-k:")));
    filters->addWidget(m_topK);
    filters->addWidget(plainLabel(tr("Top-p:")));
    filters->addWidget(m_topP);
    form->addRow(filters);
    auto *seedRow = new QHBoxLayout;
    seedRow->addWidget(m_seed, 1);
    seedRow->addWidget(m_defaultsButton);
    form->addRow(tr("Seed:"), seedRow);

    m_text->setObjectName(QStringLiteral("generatedText"));
    m_text->setWordWrap(true);
    m_text->setTextFormat(Qt::RichText);
    m_text->setFrameShape(QFrame::StyledPanel);
    m_text->setMinimumHeight(48);
    m_text->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    m_steps->setObjectName(QStringLiteral("generationSteps"));
    m_steps->setToolTip(tr("Each generated token with its probability; pick one to see what it was chosen from."));
    m_steps->setMaximumHeight(140);
    m_stepTitle->setWordWrap(true);
    m_force->setToolTip(tr("Take the candidate picked in the chart at this step instead, and continue from it."));
    m_save->setToolTip(tr("Write tokens.json (every step with its candidates) and the attentions of the sequence "
                          "into a folder."));
    m_unavailable->setWordWrap(true);
    m_unavailable->setStyleSheet(QStringLiteral("color: #a33"));
    m_unavailable->hide();

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_unavailable);
    layout->addLayout(buttons);
    layout->addLayout(form);
    layout->addWidget(plainLabel(tr("Generated:")));
    layout->addWidget(m_text);
    layout->addWidget(m_steps);
    layout->addWidget(m_stepTitle);
    layout->addWidget(m_chart);
    auto *bottom = new QHBoxLayout;
    bottom->addWidget(m_force);
    bottom->addStretch(1);
    bottom->addWidget(m_save);
    layout->addLayout(bottom);
    layout->addStretch(1);

    connect(m_generate, &QPushButton::clicked, this, &GenerationPanel::generateRequested);
    connect(m_step, &QPushButton::clicked, this, &GenerationPanel::stepRequested);
    connect(m_stop, &QPushButton::clicked, this, &GenerationPanel::stopRequested);
    connect(m_clear, &QPushButton::clicked, this, &GenerationPanel::clearRequested);
    connect(m_save, &QPushButton::clicked, this, &GenerationPanel::saveRequested);
    connect(m_defaultsButton, &QPushButton::clicked, this, [this] { setDefaults(m_defaults); });
    connect(m_steps, &QListWidget::currentRowChanged, this, [this] { showSelectedStep(); });
    connect(m_chart, &CandidatesChart::candidatePicked, this, [this] { updateButtons(); });
    connect(m_force, &QPushButton::clicked, this, [this] {
        if (m_chart->picked() && selectedStep() >= 0)
            emit forceRequested(selectedStep(), *m_chart->picked());
    });
    setDefaults({});
}

void GenerationPanel::setDefaults(const GenerationSettings &settings)
{
    m_defaults = settings;
    m_maxNew->setValue(int(std::clamp<std::int64_t>(settings.maxNewTokens, 1, m_maxNew->maximum())));
    m_temperature->setValue(settings.temperature);
    m_topK->setValue(int(std::clamp<std::int64_t>(settings.topK, 0, m_topK->maximum())));
    m_topP->setValue(settings.topP);
    m_seed->setValue(int(std::min<std::uint64_t>(settings.seed, std::uint64_t(m_seed->maximum()))));
}

GenerationSettings GenerationPanel::settings() const
{
    GenerationSettings s = m_defaults;
    s.maxNewTokens = m_maxNew->value();
    s.temperature = m_temperature->value();
    s.topK = m_topK->value();
    s.topP = m_topP->value();
    s.seed = std::uint64_t(m_seed->value());
    return s;
}

void GenerationPanel::setAvailable(bool available, const QString &why)
{
    m_available = available;
    m_unavailable->setText(why);
    m_unavailable->setVisible(!available && !why.isEmpty());
    updateButtons();
}

void GenerationPanel::setRunning(bool running)
{
    m_running = running;
    updateButtons();
}

void GenerationPanel::setShot(const GenerationShotPtr &shot)
{
    const int before = m_steps->count();
    const bool followLast = selectedStep() < 0 || selectedStep() == before - 1;
    m_shot = shot;
    const QSignalBlocker block(m_steps);
    m_steps->clear();
    if (!shot) {
        m_text->clear();
        m_chart->setStep(nullptr, -1);
        m_stepTitle->clear();
        updateButtons();
        return;
    }
    const Generation &g = shot->generation;
    for (std::size_t i = 0; i < g.steps.size(); ++i) {
        const GenerationStep &s = g.steps[i];
        QString line = tr("%1. %2  %3").arg(i + 1).arg(shownToken(shot->tokenText(s.id)), percent(s.p));
        if (s.forced)
            line += QStringLiteral("  ") + tr("(forced)");
        m_steps->addItem(line);
    }
    QString text =
        shot->generatedText.empty() ? QString() : QString::fromStdString(shot->generatedText).toHtmlEscaped();
    text.replace(QLatin1Char('\n'), QStringLiteral("<br>"));
    QString status;
    if (g.stoppedAtEos)
        status = tr("stopped at the end-of-sequence token");
    else if (shot->atEnd)
        status = tr("the model has no more positions");
    m_text->setText(
        QStringLiteral("<b>%1</b>%2")
            .arg(text, status.isEmpty()
                           ? QString()
                           : QStringLiteral(" <span style=\"color:#777\">(%1)</span>").arg(status.toHtmlEscaped())));
    if (m_steps->count() > 0)
        m_steps->setCurrentRow(followLast ? m_steps->count() - 1 : std::min(selectedStep(), m_steps->count() - 1));
    showSelectedStep();
}

void GenerationPanel::selectStep(int step)
{
    m_steps->setCurrentRow(step);
}

int GenerationPanel::selectedStep() const
{
    return m_steps->currentRow();
}

void GenerationPanel::showSelectedStep()
{
    const int step = selectedStep();
    if (!m_shot || step < 0 || step >= int(m_shot->generation.steps.size())) {
        m_chart->setStep(nullptr, -1);
        m_stepTitle->clear();
        updateButtons();
        return;
    }
    const GenerationStep &s = m_shot->generation.steps[std::size_t(step)];
    m_chart->setStep(m_shot, step);
    m_stepTitle->setText(tr("Step %1 chose %2 (%3) from these candidates; pick another to force it.")
                             .arg(step + 1)
                             .arg(shownToken(m_shot->tokenText(s.id)), percent(s.p)));
    updateButtons();
}

void GenerationPanel::updateButtons()
{
    const bool finished = m_shot && m_shot->atEnd;
    m_generate->setEnabled(m_available && !m_running && !finished);
    m_step->setEnabled(m_available && !m_running && !finished);
    m_stop->setEnabled(m_running);
    m_clear->setEnabled(m_shot != nullptr && !m_running);
    m_save->setEnabled(m_shot != nullptr && !m_running && !m_shot->generation.steps.empty());
    const int step = selectedStep();
    const bool picked = m_chart->picked().has_value() && m_shot && step >= 0 &&
                        step < int(m_shot->generation.steps.size()) &&
                        *m_chart->picked() != m_shot->generation.steps[std::size_t(step)].id;
    m_force->setEnabled(m_available && !m_running && picked);
}

} // namespace attnscope
