#include "app/gui/document/ModelController.h"

#include "core/io/MemoryLimits.h"

#include "app/render/ErrorText.h"

#include <QCoreApplication>
#include <QDir>
#include <QMetaObject>

#include <new>

namespace attnscope {

ModelController::ModelController(QObject *parent) : QObject(parent)
{
    qRegisterMetaType<ModelPtr>("attnscope::ModelPtr");
    qRegisterMetaType<ModelRunPtr>("attnscope::ModelRunPtr");
    qRegisterMetaType<AttentionSet>("attnscope::AttentionSet");
}

ModelController::~ModelController()
{
    // A long run in flight stops at its next layer instead of holding up the close; the lanes
    // wait for it a bounded time (JobLane).
    cancel();
}

bool ModelController::waitForIdle(int timeoutMs)
{
    return m_loads.waitForIdle(timeoutMs) && m_runs.waitForIdle(timeoutMs);
}

void ModelController::load(const QString &dir)
{
    m_loads.submit([this, dir](JobState &) -> JobLane::Deliver {
        ModelPtr ptr;
        QString message;
        try {
            auto model = TransformerModel::load(QDir(dir).absolutePath().toStdString());
            if (model)
                ptr = std::make_shared<const TransformerModel>(std::move(*model));
            else
                message = errorText(model.error());
        } catch (const std::bad_alloc &) {
            message = QCoreApplication::translate("attnscope::ModelController", "Memory ran out loading the model.");
        }
        return [this, dir, ptr, message] {
            if (ptr) {
                // From now on text runs on this model, and no run of the one before is shown.
                setModel(ptr);
                emit loaded(ptr, dir);
            } else {
                emit loadFailed(dir, message);
            }
        };
    });
}

ForwardKeep ModelController::keepFor(const TransformerModel &model, std::int64_t tokens)
{
    // Whole maps while they take at most half the memory budget; beyond, each layer's queries and
    // keys, from which the views compute what they show (memory linear in the tokens).
    ForwardKeep keep;
    if (model.forwardBytes(tokens, keep) > memoryBudget() / 2) {
        keep.maps = false;
        keep.queriesKeys = true;
    }
    return keep;
}

Result<AttentionSet> ModelController::viewSet(ModelRunPtr run)
{
    // The labels are shown as text (AttentionSet::setTokens): "␣world", and "我…" for a cut character.
    return attentionSetFromRun(std::move(run));
}

void ModelController::cancel()
{
    m_runs.cancel();
}

void ModelController::setModel(ModelPtr model)
{
    cancel();
    m_model = std::move(model);
}

void ModelController::close()
{
    cancel();
    m_loads.cancel();
    m_model.reset();
}

void ModelController::run(const QString &text)
{
    const std::string utf8 = text.toStdString();
    runInput(text, [utf8](const TransformerModel &model) { return model.encode(utf8); });
}

void ModelController::runIds(const std::vector<std::int32_t> &ids)
{
    runInput({}, [ids](const TransformerModel &model) { return model.input(ids); });
}

void ModelController::runInput(const QString &text, std::function<Result<Encoding>(const TransformerModel &)> input)
{
    if (!m_model)
        return;
    m_runs.submit([this, poster = m_runs.poster(), host = m_host, model = m_model, text,
                   input](JobState &state) -> JobLane::Deliver {
        poster.post([this, text] { emit runStarted(text); });
        QString message, backendName, deviceName;
        ModelRunPtr run;
        AttentionSet set;
        try {
            auto encoding = input(*model);
            if (!encoding) {
                message = errorText(encoding.error());
            } else {
                BackendHost::Lease lease = host->lease();
                if (!lease.backend)
                    return [this, message = errorText(lease.error)] { emit runFailed(message); };
                auto result = model->forward(*encoding, *lease.backend, &state.cancel,
                                             keepFor(*model, std::int64_t(encoding->ids.size())));
                const ComputeRun ran = lastComputeRun(*lease.backend);
                lease.lock.unlock();
                backendName = QString::fromStdString(ran.backend);
                deviceName = QString::fromStdString(ran.device);
                if (!result && result.kind() == ErrorKind::Cancelled)
                    return {}; // superseded: the newer run delivers
                if (!result) {
                    message = errorText(result.error());
                } else {
                    run = *result;
                    auto s = viewSet(run);
                    if (s)
                        set = std::move(*s);
                    else
                        message = errorText(s.error());
                }
            }
        } catch (const std::bad_alloc &) {
            message = QCoreApplication::translate("attnscope::ModelController",
                                                  "Memory ran out running the model on this text.");
        }
        return [this, model, run, set, message, backendName, deviceName] {
            // A newer model (whose load cancels every older run) delivers its own.
            if (model != m_model)
                return;
            if (!message.isEmpty()) {
                emit runFailed(message);
                return;
            }
            emit runReady(model, run, set);
            emit ranOn(backendName, deviceName);
        };
    });
}

} // namespace attnscope
