#include "app/gui/document/TranslationController.h"

#include "app/render/ErrorText.h"

#include <QCoreApplication>
#include <QDir>

#include <new>

namespace attnscope {

TranslationController::TranslationController(QObject *parent) : QObject(parent)
{
    qRegisterMetaType<TranslationModelPtr>("attnscope::TranslationModelPtr");
    qRegisterMetaType<Translation>("attnscope::Translation");
}

TranslationController::~TranslationController()
{
    cancel();
}

bool TranslationController::waitForIdle(int timeoutMs)
{
    return m_loads.waitForIdle(timeoutMs) && m_runs.waitForIdle(timeoutMs);
}

void TranslationController::load(const QString &dir)
{
    m_loads.submit([this, dir](JobState &) -> JobLane::Deliver {
        TranslationModelPtr ptr;
        QString message;
        try {
            auto model = TranslationModel::load(QDir(dir).absolutePath().toStdString());
            if (model)
                ptr = std::make_shared<const TranslationModel>(std::move(*model));
            else
                message = errorText(model.error());
        } catch (const std::bad_alloc &) {
            message =
                QCoreApplication::translate("attnscope::TranslationController", "Memory ran out loading the model.");
        }
        return [this, dir, ptr, message] {
            if (ptr) {
                cancel();
                m_model = ptr;
                emit loaded(ptr, dir);
            } else {
                emit loadFailed(dir, message);
            }
        };
    });
}

void TranslationController::cancel()
{
    m_runs.cancel();
}

void TranslationController::close()
{
    cancel();
    m_loads.cancel();
    m_model.reset();
}

void TranslationController::translate(const QString &source, const QString &target)
{
    if (!m_model)
        return;
    m_runs.submit([this, poster = m_runs.poster(), host = m_host, model = m_model, source,
                   target](JobState &state) -> JobLane::Deliver {
        poster.post([this, source, target] { emit translationStarted(source, target); });
        QString message, backendName, deviceName;
        Translation translation;
        translation.greedy = target.trimmed().isEmpty();
        const auto failed = [](const Error &e, const QString &what) { return what + errorText(e); };
        try {
            auto encoded = model->encodeSource(source.toStdString());
            if (!encoded)
                return [this, m = failed(encoded.error(), tr("The source: "))] { emit translationFailed(m); };
            std::optional<Encoding> decoderInput;
            if (!translation.greedy) {
                auto typed = model->encodeTarget(target.toStdString());
                if (!typed)
                    return [this, m = failed(typed.error(), tr("The target: "))] { emit translationFailed(m); };
                decoderInput = std::move(*typed);
            }
            BackendHost::Lease lease = host->lease();
            if (!lease.backend)
                return [this, m = errorText(lease.error)] { emit translationFailed(m); };
            if (!decoderInput) {
                auto greedy = model->greedy(*encoded, *lease.backend, &state.cancel);
                if (!greedy && greedy.kind() == ErrorKind::Cancelled)
                    return {}; // superseded: the newer request delivers
                if (!greedy)
                    return [this, m = errorText(greedy.error())] { emit translationFailed(m); };
                decoderInput = std::move(*greedy);
            }
            auto run = model->forward(*encoded, *decoderInput, *lease.backend, &state.cancel);
            const ComputeRun ran = lastComputeRun(*lease.backend);
            lease.lock.unlock();
            backendName = QString::fromStdString(ran.backend);
            deviceName = QString::fromStdString(ran.device);
            if (!run && run.kind() == ErrorKind::Cancelled)
                return {};
            if (!run) {
                message = errorText(run.error());
            } else {
                translation.run = *run;
                for (int kind = 0; kind < 3 && message.isEmpty(); ++kind) {
                    auto set = translationAttentionSet(*run, TranslationAttention(kind));
                    if (set)
                        translation.sets[std::size_t(kind)] = std::move(*set);
                    else
                        message = errorText(set.error());
                }
            }
        } catch (const std::bad_alloc &) {
            message = QCoreApplication::translate("attnscope::TranslationController",
                                                  "Memory ran out translating this text.");
        }
        return [this, model, translation, message, backendName, deviceName] {
            if (model != m_model)
                return;
            if (!message.isEmpty()) {
                emit translationFailed(message);
                return;
            }
            emit translationReady(model, translation);
            emit ranOn(backendName, deviceName);
        };
    });
}

} // namespace attnscope
