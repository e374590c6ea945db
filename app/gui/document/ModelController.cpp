#include "app/gui/document/ModelController.h"

#include "app/render/ErrorText.h"
#include "core/CpuBackend.h"

#include <QCoreApplication>
#include <QDir>
#include <QMetaObject>
#include <QPointer>

#include <new>

namespace attnscope {

ModelController::ModelController(QObject *parent) : QObject(parent)
{
    // One worker: runs are taken in order, and a superseded one is skipped before it starts.
    m_pool.setMaxThreadCount(1);
    qRegisterMetaType<ModelPtr>("attnscope::ModelPtr");
    qRegisterMetaType<ModelRunPtr>("attnscope::ModelRunPtr");
    qRegisterMetaType<AttentionSet>("attnscope::AttentionSet");
}

ModelController::~ModelController()
{
    m_pool.clear();
    m_pool.waitForDone();
}

bool ModelController::waitForIdle(int timeoutMs)
{
    return m_pool.waitForDone(timeoutMs);
}

void ModelController::load(const QString &dir)
{
    const quint64 generation = ++m_loadGeneration;
    QPointer<ModelController> self(this);
    m_pool.start([self, dir, generation] {
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
        QMetaObject::invokeMethod(
            self.data(),
            [self, dir, generation, ptr, message] {
                if (!self || generation != self->m_loadGeneration)
                    return;
                if (ptr)
                    emit self->loaded(ptr, dir);
                else
                    emit self->loadFailed(dir, message);
            },
            Qt::QueuedConnection);
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

void ModelController::run(ModelPtr model, const QString &text)
{
    const quint64 generation = ++*m_generation;
    QPointer<ModelController> self(this);
    auto latest = m_generation;
    m_pool.start([self, latest, model, text = text.toStdString(), generation] {
        if (latest->load() != generation)
            return; // a newer text came while this one waited
        QString message;
        ModelRunPtr run;
        AttentionSet set;
        try {
            auto encoding = model->encode(text);
            if (!encoding) {
                message = errorText(encoding.error());
            } else {
                CpuBackend cpu;
                auto result = model->forward(*encoding, cpu);
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
        QMetaObject::invokeMethod(
            self.data(),
            [self, latest, generation, model, run, set, message] {
                if (!self || latest->load() != generation)
                    return;
                if (!message.isEmpty())
                    emit self->runFailed(message);
                else
                    emit self->runReady(model, run, set);
            },
            Qt::QueuedConnection);
    });
}

} // namespace attnscope
