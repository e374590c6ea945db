#pragma once

#include "core/AttentionSet.h"
#include "core/TransformerModel.h"

#include <QObject>
#include <QThreadPool>

#include <atomic>
#include <memory>

namespace attnscope {

using ModelPtr = std::shared_ptr<const TransformerModel>;
using ModelRunPtr = std::shared_ptr<const ModelRun>;

// Loads a model folder and runs typed text through it on a worker thread, never on the GUI
// thread. Runs are coalesced: a newer text supersedes every older one, whose result is never
// delivered (the GUI must not show an older sentence after a newer). Results arrive as
// signals on the GUI thread.
class ModelController : public QObject
{
    Q_OBJECT

public:
    explicit ModelController(QObject *parent = nullptr);
    ~ModelController() override; // waits for the worker

    void load(const QString &dir);
    void run(ModelPtr model, const QString &text);
    // No run waiting or running is delivered any more (the model's document went).
    void cancel() { ++*m_generation; }
    bool waitForIdle(int timeoutMs = 60000);

    // The set the views show for a run: the run's attentions with its tokens as labels, GPT-2's
    // word marker "Ġ" shown as "␣" (word boundaries are taken before the marker is replaced).
    static Result<AttentionSet> viewSet(ModelRunPtr run);

signals:
    void loaded(attnscope::ModelPtr model, const QString &dir);
    void loadFailed(const QString &dir, const QString &message);
    void runReady(attnscope::ModelPtr model, attnscope::ModelRunPtr run, const attnscope::AttentionSet &set);
    void runFailed(const QString &message);

private:
    QThreadPool m_pool;
    std::shared_ptr<std::atomic<quint64>> m_generation = std::make_shared<std::atomic<quint64>>(0);
    quint64 m_loadGeneration = 0;
};

} // namespace attnscope
