#include "app/gui/document/GenerationController.h"

#include "app/render/ErrorText.h"
#include "core/io/MemoryLimits.h"

#include <QCoreApplication>

#include <cstring>
#include <new>
#include <optional>

namespace attnscope {

struct GenerationController::Session {
    ModelPtr model; // the Generator points into it
    std::optional<Generator> generator;
};

namespace {

// The generator's maps as a one-sample set, labelled with the tokens run.
GenerationShotPtr shotOf(const Generator &g)
{
    auto shot = std::make_shared<GenerationShot>();
    shot->generation = g.generation();
    shot->atEnd = g.stoppedAtEos() || std::int64_t(g.generation().ids.size()) >= g.model().config().maxTokens();
    if (const std::optional<Tokenizer> &tokenizer = g.model().tokenizer()) {
        const Generation &gen = shot->generation;
        shot->generatedText =
            tokenizer->decode(std::vector<std::int32_t>(gen.ids.begin() + gen.promptLength, gen.ids.end()));
        for (const GenerationStep &step : gen.steps) {
            shot->display.emplace(step.id, tokenizer->displayText(step.id));
            for (const Candidate &c : step.candidates)
                shot->display.emplace(c.id, tokenizer->displayText(c.id));
        }
    }
    const ModelConfig &c = g.model().config();
    const std::int64_t t = g.tokensRun(), cells = t * t;
    std::vector<float> values(std::size_t(c.layers) * std::size_t(c.heads) * std::size_t(cells));
    for (std::size_t m = 0; m < g.maps().size(); ++m)
        std::memcpy(values.data() + m * std::size_t(cells), g.maps()[m].data(), std::size_t(cells) * sizeof(float));
    auto set = AttentionSet::fromFloats(std::move(values), 1, c.layers, c.heads, t, t);
    if (!set)
        return shot;
    const std::vector<std::string> tokens(shot->generation.tokens.begin(), shot->generation.tokens.begin() + t);
    if (!set->setTokens(tokens, tokens))
        return shot;
    set->layerFacts.assign(std::size_t(c.layers), LayerFacts{c.heads, c.keyValueHeads(), 0, 0.0});
    shot->set = std::move(*set);
    return shot;
}

} // namespace

QString GenerationShot::tokenText(std::int32_t id) const
{
    const auto found = display.find(id);
    return found != display.end() ? QString::fromStdString(found->second) : QStringLiteral("<%1>").arg(id);
}

GenerationController::GenerationController(QObject *parent) : QObject(parent)
{
    qRegisterMetaType<GenerationShotPtr>("attnscope::GenerationShotPtr");
}

GenerationController::~GenerationController()
{
    m_lane.cancel();
}

ModelPtr GenerationController::model() const
{
    return m_session ? m_session->model : nullptr;
}

void GenerationController::setRunning(bool running)
{
    if (m_running == running)
        return;
    m_running = running;
    emit runningChanged(running);
}

void GenerationController::start(ModelPtr model, const QString &text, const GenerationSettings &settings, int steps,
                                 const MemoryBudget &budget)
{
    if (!model)
        return;
    auto session = std::make_shared<Session>();
    session->model = std::move(model);
    m_session = session;
    m_prompt = text;
    m_last.reset();
    const std::int64_t budgetBytes = budget.bytes();
    const std::string utf8 = text.toStdString();
    submit(session, steps, [utf8, settings, steps, budgetBytes](Session &session, const std::atomic<bool> *cancel) {
        const TransformerModel &m = *session.model;
        auto encoding = m.encode(utf8);
        if (!encoding)
            return Status(encoding.error());
        // The generator keeps every head's map, and each step hands the window a copy.
        const ModelConfig &c = m.config();
        const std::int64_t newTokens =
            steps < 0 ? settings.maxNewTokens : std::min<std::int64_t>(steps, settings.maxNewTokens);
        const std::int64_t t = std::min<std::int64_t>(std::int64_t(encoding->ids.size()) + newTokens, c.maxTokens());
        const double need = 2.0 * double(c.layers) * double(c.heads) * double(t) * double(t) * sizeof(float);
        if (need > double(budgetBytes) / 2)
            return Status(
                Error{QCoreApplication::translate("attnscope::GenerationController",
                                                  "Generating up to %1 tokens keeps every head's map: %2 MiB, "
                                                  "more than half of the %3 MiB this window allows. Ask for "
                                                  "fewer new tokens or a shorter prompt.")
                          .arg(t)
                          .arg(need / double(1 << 20), 0, 'f', 0)
                          .arg(double(budgetBytes) / double(1 << 20), 0, 'f', 0)
                          .toStdString(),
                      ErrorKind::TooLarge});
        auto generator = Generator::start(m, *encoding, settings, {true, true}, cancel);
        if (!generator)
            return Status(generator.error());
        session.generator.emplace(std::move(*generator));
        return Status(Ok{});
    });
}

void GenerationController::more(const GenerationSettings &settings, int steps)
{
    if (!m_session)
        return;
    submit(m_session, steps, [settings](Session &session, const std::atomic<bool> *) {
        return session.generator ? session.generator->setSettings(settings) : Status(Ok{});
    });
}

void GenerationController::force(int index, std::int32_t id, const GenerationSettings &settings, int stepsAfter)
{
    if (!m_session || index < 0)
        return;
    submit(m_session, stepsAfter, [index, id, settings](Session &session, const std::atomic<bool> *cancel) {
        if (!session.generator)
            return Status(Ok{});
        Generator &g = *session.generator;
        if (Status s = g.setSettings(settings); !s)
            return s;
        if (Status s = g.rewind(std::size_t(index)); !s)
            return s;
        auto step = g.step(id, cancel);
        if (!step)
            return Status(step.error());
        return g.settle(cancel);
    });
}

void GenerationController::stop()
{
    if (!m_running)
        return;
    m_lane.cancel();
    m_live = 0;
    setRunning(false);
    if (m_last)
        emit stopped(m_last);
}

void GenerationController::reset()
{
    m_lane.cancel();
    m_live = 0;
    m_session.reset();
    m_last.reset();
    setRunning(false);
}

void GenerationController::submit(std::shared_ptr<Session> session, int steps, Steps before)
{
    // The lane's id for this job, known once submit() returns: deliveries of any other job (one
    // superseded or stopped) are dropped on the GUI thread.
    auto tag = std::make_shared<quint64>(0);
    const auto shown = [this, tag] { return *tag != 0 && *tag == m_live; };
    const quint64 id = m_lane.submit([this, poster = m_lane.poster(), session, steps, before = std::move(before),
                                      shown](JobState &state) -> JobLane::Deliver {
        const std::atomic<bool> *cancel = &state.cancel;
        QString message;
        GenerationShotPtr last;
        try {
            Status s = before(*session, cancel);
            for (int i = 0; s && session->generator && (steps < 0 || i < steps) && !session->generator->finished();
                 ++i) {
                if (i == 0 && session->generator->generation().steps.empty()) {
                    // The prompt alone first: the views show what the first step chooses from.
                    last = shotOf(*session->generator);
                    poster.post([this, shown, last] {
                        if (shown()) {
                            m_last = last;
                            emit stepped(last);
                        }
                    });
                }
                if (state.cancel.load(std::memory_order_relaxed))
                    return {};
                auto step = session->generator->step(std::nullopt, cancel);
                s = step ? session->generator->settle(cancel) : Status(step.error());
                if (!s)
                    break;
                last = shotOf(*session->generator);
                poster.post([this, shown, last] {
                    if (shown()) {
                        m_last = last;
                        emit stepped(last);
                    }
                });
            }
            if (!s && s.kind() == ErrorKind::Cancelled)
                return {}; // stopped or superseded: what was delivered stays
            if (!s)
                message = errorText(s.error());
            else if (!last && session->generator)
                last = shotOf(*session->generator); // a forced token and no steps after it
        } catch (const std::bad_alloc &) {
            message = QCoreApplication::translate("attnscope::GenerationController", "Memory ran out generating.");
        }
        return [this, shown, message, last] {
            if (!shown())
                return;
            m_live = 0;
            setRunning(false);
            if (!message.isEmpty()) {
                emit failed(message);
                return;
            }
            if (last) {
                m_last = last;
                emit ended(last);
            }
        };
    });
    *tag = id;
    m_live = id;
    setRunning(true);
}

} // namespace attnscope
