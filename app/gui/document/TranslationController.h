#pragma once

#include "app/gui/document/BackendHost.h"
#include "app/gui/document/JobRunner.h"
#include "core/analysis/AttentionSet.h"
#include "core/models/TranslationModel.h"

#include <QObject>

#include <array>
#include <memory>

namespace attnscope {

using TranslationModelPtr = std::shared_ptr<const TranslationModel>;
using TranslationRunPtr = std::shared_ptr<const TranslationRun>;

// What one translation gives the window: the run and its three kinds of attention as sets
// (encoder self, decoder self, cross; TranslationAttention's order), each with the tokens of its
// axes as labels.
struct Translation {
    TranslationRunPtr run;
    std::array<AttentionSet, 3> sets;
    bool greedy = false; // the target is the model's own translation, not one typed
};

// Loads a translation model folder and translates typed text on job lanes (JobRunner.h), never on
// the GUI thread, on the backend the user chose: the source text through the encoder, then the
// typed target teacher-forced, or (no target typed) the greedy translation and one teacher-forced
// pass over it. As ModelController does for one text: a newer request supersedes every older one,
// whose result is never delivered, and one in flight is cancelled between layers and steps; a
// request delivers only while its model is still the latest loaded.
class TranslationController : public QObject
{
    Q_OBJECT

public:
    explicit TranslationController(QObject *parent = nullptr);
    ~TranslationController() override; // cancels, and waits for the worker
    void setBackendHost(std::shared_ptr<BackendHost> host) { m_host = std::move(host); }

    void load(const QString &dir);
    TranslationModelPtr model() const { return m_model; }
    // Translates source (target empty: greedily) on model(); nothing without one.
    void translate(const QString &source, const QString &target);
    void cancel();
    void close();
    bool waitForIdle(int timeoutMs = 60000);

signals:
    void loaded(attnscope::TranslationModelPtr model, const QString &dir);
    void loadFailed(const QString &dir, const QString &message);
    void translationStarted(const QString &source, const QString &target);
    void translationReady(attnscope::TranslationModelPtr model, const attnscope::Translation &translation);
    void translationFailed(const QString &message);
    void ranOn(const QString &backend, const QString &device);

private:
    std::shared_ptr<BackendHost> m_host = std::make_shared<BackendHost>();
    JobLane m_loads{this};
    JobLane m_runs{this};
    TranslationModelPtr m_model;
};

} // namespace attnscope
