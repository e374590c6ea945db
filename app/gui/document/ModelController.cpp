#include "app/gui/document/ModelController.h"

#include "app/render/ErrorText.h"
#include "core/attention/CpuBackend.h"

#include <QCoreApplication>
#include <QDir>
#include <QMetaObject>
#include <QPointer>

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
    cancel(); // a long run in flight stops at its next layer instead of holding up the close
    // m_pool drops what has not started and waits for the rest a bounded time (WorkerPool).
}

bool ModelController::waitForIdle(int timeoutMs)
{
    return m_pool.waitForDone(timeoutMs);
}

void ModelController::load(const QString &dir)
{
    const quint64 generation = ++m_loadGeneration;
    QPointer<ModelController> self(this);
    m_pool.start([self, poster = m_pool.poster(), dir, generation] {
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
        poster.post([self, dir, generation, ptr, message] {
            if (!self || generation != self->m_loadGeneration)
                return;
            if (ptr) {
                // From now on text runs on this model, and no run of the one before is shown.
                self->setModel(ptr);
                emit self->loaded(ptr, dir);
            } else
                emit self->loadFailed(dir, message);
        });
    });
}

Result<AttentionSet> ModelController::viewSet(ModelRunPtr run)
{
    auto set = attentionSetFromRun(std::move(run));
    if (!set)
        return set;
    static const std::string marker = "\xC4\xA0";    // "Ġ"
    static const std::string shown = "\xE2\x90\xA3"; // "␣"
    for (auto *labels : {&set->queryTokens, &set->keyTokens})
        for (std::string &t : *labels)
            if (t.rfind(marker, 0) == 0)
                t = shown + t.substr(marker.size());
    return set;
}

void ModelController::cancel()
{
    ++*m_generation;
    if (m_cancelFlag)
        m_cancelFlag->store(true);
    m_cancelFlag.reset();
}

void ModelController::setModel(ModelPtr model)
{
    cancel();
    m_model = std::move(model);
}

void ModelController::close()
{
    cancel();
    m_model.reset();
}

void ModelController::run(const QString &text)
{
    if (!m_model)
        return;
    cancel();
    const quint64 generation = *m_generation;
    auto cancelFlag = m_cancelFlag = std::make_shared<std::atomic<bool>>(false);
    QPointer<ModelController> self(this);
    auto latest = m_generation;
    m_pool.start([self, poster = m_pool.poster(), latest, model = m_model, text, cancelFlag, generation,
                  factory = m_backendFactory] {
        if (latest->load() != generation)
            return; // a newer text came while this one waited
        poster.post([self, text] {
            if (self)
                emit self->runStarted(text);
        });
        QString message;
        ModelRunPtr run;
        AttentionSet set;
        try {
            auto encoding = model->encode(text.toStdString());
            if (!encoding) {
                message = errorText(encoding.error());
            } else {
                const std::unique_ptr<AttentionBackend> backend = factory ? factory() : std::make_unique<CpuBackend>();
                auto result = model->forward(*encoding, *backend, cancelFlag.get());
                if (!result && result.kind() == ErrorKind::Cancelled)
                    return; // superseded: the newer run delivers
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
        poster.post([self, latest, generation, model, run, set, message] {
            // A newer run, or a newer model (whose load cancels every older run).
            if (!self || latest->load() != generation || model != self->m_model)
                return;
            if (!message.isEmpty())
                emit self->runFailed(message);
            else
                emit self->runReady(model, run, set);
        });
    });
}

} // namespace attnscope
