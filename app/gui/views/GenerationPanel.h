#pragma once

#include "app/gui/document/GenerationController.h"

#include <QWidget>

#include <optional>

class QCheckBox;
class QDoubleSpinBox;
class QLabel;
class QListWidget;
class QPushButton;
class QSpinBox;

namespace attnscope {

// One step's candidates as a bar chart: per candidate its token, its probability (the softmax of
// the logits) and, beside it, its probability in the draw (after temperature, top-k and top-p),
// the chosen token framed. A click picks a candidate (the one "force this token" takes).
class CandidatesChart : public QWidget
{
    Q_OBJECT

public:
    explicit CandidatesChart(QWidget *parent = nullptr);
    // Step `step` of `shot` (its tokens as the shot reads them); null: nothing to show.
    void setStep(const GenerationShotPtr &shot, int step);
    std::optional<std::int32_t> picked() const { return m_picked; }
    void pick(std::optional<std::int32_t> id);
    // The row of a candidate (0: the most probable), in widget coordinates; empty when absent.
    QRectF rowRect(int row) const;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

signals:
    void candidatePicked(std::int32_t id);

protected:
    void paintEvent(QPaintEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;

private:
    std::optional<GenerationStep> m_step;
    GenerationShotPtr m_shot;
    std::optional<std::int32_t> m_picked;
};

// The generation controls beside the typed text (issue 26): Generate, Step and Stop; the
// decoding settings (defaults from the model's generation_config.json); the generated tokens,
// one per step with its probability; the chosen step's candidates as a bar chart; "Force This
// Token" to continue from another candidate; Save Generation to write tokens.json with its steps
// and the attentions of the sequence.
class GenerationPanel : public QWidget
{
    Q_OBJECT

public:
    explicit GenerationPanel(QWidget *parent = nullptr);

    // The model's defaults (their eos ids kept for every request).
    void setDefaults(const GenerationSettings &settings);
    GenerationSettings settings() const;
    // Whether the model can generate at all (BERT cannot: `why` says so).
    void setAvailable(bool available, const QString &why = {});
    void setRunning(bool running);
    // The generation shown (null: none; the views show the typed text).
    void setShot(const GenerationShotPtr &shot);
    // The step whose candidates the chart shows (0-based), the last by default.
    void selectStep(int step);
    int selectedStep() const;

    CandidatesChart *chart() const { return m_chart; }
    QListWidget *stepsList() const { return m_steps; }
    QPushButton *generateButton() const { return m_generate; }
    QPushButton *stepButton() const { return m_step; }
    QPushButton *stopButton() const { return m_stop; }
    QPushButton *forceButton() const { return m_force; }
    QPushButton *saveButton() const { return m_save; }
    QPushButton *clearButton() const { return m_clear; }
    QSpinBox *maxNewTokens() const { return m_maxNew; }
    QDoubleSpinBox *temperature() const { return m_temperature; }
    QSpinBox *topK() const { return m_topK; }
    QDoubleSpinBox *topP() const { return m_topP; }
    QSpinBox *seed() const { return m_seed; }
    QLabel *textLabel() const { return m_text; }

signals:
    void generateRequested();
    void stepRequested();
    void stopRequested();
    void clearRequested();
    void forceRequested(int step, std::int32_t id);
    void saveRequested();

private:
    void showSelectedStep();
    void updateButtons();

    GenerationSettings m_defaults;
    GenerationShotPtr m_shot;
    bool m_available = true;
    bool m_running = false;
    QLabel *m_unavailable;
    QPushButton *m_generate;
    QPushButton *m_step;
    QPushButton *m_stop;
    QPushButton *m_clear;
    QSpinBox *m_maxNew;
    QDoubleSpinBox *m_temperature;
    QSpinBox *m_topK;
    QDoubleSpinBox *m_topP;
    QSpinBox *m_seed;
    QPushButton *m_defaultsButton;
    QLabel *m_text;
    QListWidget *m_steps;
    QLabel *m_stepTitle;
    CandidatesChart *m_chart;
    QPushButton *m_force;
    QPushButton *m_save;
};

} // namespace attnscope
