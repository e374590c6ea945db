#pragma once

#include "app/gui/document/JobRunner.h"
#include "app/gui/document/MemoryBudget.h"
#include "app/gui/document/ModelController.h"
#include "core/models/Generation.h"

#include <QObject>
#include <QString>

#include <map>
#include <memory>

namespace attnscope {

// What a generation shows after a step: the sequence so far with its steps, and every head's
// causal map over the tokens run (the prompt and each generated token, its row added by its
// step) as a one-sample set labelled with the tokens.
struct GenerationShot {
    Generation generation;
    AttentionSet set;
    bool atEnd = false; // nothing can follow: an eos was chosen, or the model has no more positions
    // As a reader sees them (Tokenizer::decode, displayText): the generated tokens as text, and
    // every chosen and candidate token of the steps by id.
    std::string generatedText;
    std::map<std::int32_t, std::string> display;
    QString tokenText(std::int32_t id) const;
};
using GenerationShotPtr = std::shared_ptr<const GenerationShot>;

// Generation in the window (issue 26): a core Generator stepped on a job lane, never on the GUI
// thread. Each step is delivered as it is taken (stepped()), so the views grow a row at a time;
// a newer request (another start, more steps, a forced token) supersedes the one in flight, and
// stop() cancels it at once, between layers, keeping every step delivered so far. The generation
// keeps its history: force() goes back to any step and continues from the token the user picked.
class GenerationController : public QObject
{
    Q_OBJECT

public:
    explicit GenerationController(QObject *parent = nullptr);
    ~GenerationController() override;

    // A new generation: `text` encoded as the model reads typed text, then `steps` steps (-1:
    // until it finishes). Refused (failed()) when its maps would take more than half of `budget`.
    void start(ModelPtr model, const QString &text, const GenerationSettings &settings, int steps,
               const MemoryBudget &budget = {});
    // More steps of the generation there is (with these settings from the next step on).
    void more(const GenerationSettings &settings, int steps);
    // Goes back to step `index` (0-based), takes `id` there instead, then `stepsAfter` more.
    void force(int index, std::int32_t id, const GenerationSettings &settings, int stepsAfter);
    // Cancels the steps in flight; the steps delivered stay, and stopped() says so.
    void stop();
    // Forgets the generation (the prompt changed): nothing in flight delivers any more.
    void reset();

    bool hasGeneration() const { return m_session != nullptr; }
    bool isRunning() const { return m_running; }
    ModelPtr model() const;
    QString prompt() const { return m_prompt; }
    GenerationShotPtr lastShot() const { return m_last; }
    bool waitForIdle(int timeoutMs = 60000) { return m_lane.waitForIdle(timeoutMs); }

signals:
    void runningChanged(bool running);
    void stepped(attnscope::GenerationShotPtr shot);
    // The steps asked for ran, or the generation finished: the last shot again.
    void ended(attnscope::GenerationShotPtr shot);
    void stopped(attnscope::GenerationShotPtr shot); // stop() cancelled steps in flight
    void failed(const QString &message);

private:
    struct Session;
    // What a job does before its steps: start the generator, or go back and force a token.
    using Steps = std::function<Status(Session &session, const std::atomic<bool> *cancel)>;
    // Runs `before` (a rewind and a forced step), then up to `steps` steps, on the lane.
    void submit(std::shared_ptr<Session> session, int steps, Steps before);
    void setRunning(bool running);

    JobLane m_lane{this};
    std::shared_ptr<Session> m_session;
    QString m_prompt;
    GenerationShotPtr m_last;
    quint64 m_live = 0; // the job whose steps are shown; 0: none
    bool m_running = false;
};

} // namespace attnscope

Q_DECLARE_METATYPE(attnscope::GenerationShotPtr)
