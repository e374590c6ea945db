#pragma once

#include "app/gui/document/BackendHost.h"
#include "app/gui/document/JobRunner.h"
#include "core/analysis/AttentionSet.h"
#include "core/models/TransformerModel.h"

#include <QObject>

#include <atomic>
#include <functional>
#include <memory>

namespace attnscope {

using ModelPtr = std::shared_ptr<const TransformerModel>;
using ModelRunPtr = std::shared_ptr<const ModelRun>;

// Loads a model folder and runs typed text through it on job lanes (JobRunner.h), never on the
// GUI thread, computing its attention on the backend the user chose (the BackendHost shared with
// the project's computations). Runs are coalesced: a newer text supersedes every older one, whose
// result is never delivered (the GUI must not show an older sentence after a newer), and a run in
// flight is cancelled between layers so the worker takes the newest text at once. Text always runs on
// the latest model loaded, and a run delivers only while its model is still that one: a run
// of a model another load replaced is never shown. Results arrive as signals on the GUI thread.
class ModelController : public QObject
{
    Q_OBJECT

public:
    explicit ModelController(QObject *parent = nullptr);
    // The backend runs compute on (by default a host of its own, on Auto).
    void setBackendHost(std::shared_ptr<BackendHost> host) { m_host = std::move(host); }
    ~ModelController() override; // waits for the worker

    void load(const QString &dir);
    // The latest model loaded: the one run() uses. Null before the first load and after close().
    ModelPtr model() const { return m_model; }
    // A model made in memory instead of loaded (benchmarks, tests); as a load's, it supersedes
    // every run of the model before.
    void setModel(ModelPtr model);
    // Runs text on model() (nothing without one), superseding and cancelling every older run.
    void run(const QString &text);
    // The same for ids given as they are (a generation's sequence); runStarted() gives no text.
    void runIds(const std::vector<std::int32_t> &ids);
    // No run waiting or running is delivered any more; one in flight is cancelled.
    void cancel();
    // cancel(), and the model goes too (the model's document went).
    void close();
    bool waitForIdle(int timeoutMs = 60000);

    // The set the views show for a run: the run's attentions with its tokens as labels, shown as
    // the text they decode to (GPT-2's "Ġworld" as "␣world"; AttentionSet::setTokens).
    static Result<AttentionSet> viewSet(ModelRunPtr run);
    // What a run over `tokens` tokens keeps: whole maps while they take at most half the memory
    // budget, else each layer's queries and keys (the set is then computed from them: a 16k-token
    // run holds megabytes, not gigabytes).
    static ForwardKeep keepFor(const TransformerModel &model, std::int64_t tokens);

signals:
    void loaded(attnscope::ModelPtr model, const QString &dir);
    void loadFailed(const QString &dir, const QString &message);
    void runReady(attnscope::ModelPtr model, attnscope::ModelRunPtr run, const attnscope::AttentionSet &set);
    void runFailed(const QString &message);
    // The worker began the forward pass of the text given to run() (for progress, and for tests
    // that supersede a run in flight).
    void runStarted(const QString &text);
    // Which backend and device computed the attention of the run runReady just delivered.
    void ranOn(const QString &backend, const QString &device);

private:
    void runInput(const QString &text, std::function<Result<Encoding>(const TransformerModel &)> input);

    std::shared_ptr<BackendHost> m_host = std::make_shared<BackendHost>();
    JobLane m_loads{this}; // the newest load wins
    JobLane m_runs{this};  // the newest text wins; a run of a replaced model delivers nothing
    ModelPtr m_model;
};

} // namespace attnscope
