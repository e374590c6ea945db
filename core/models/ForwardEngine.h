#pragma once

// A model's whole forward pass behind one interface (docs/architecture.md, "Forward engines").
// The CPU engine is TransformerModel's loop: embeddings, norms and MLPs with Eigen, each
// layer's attention through an AttentionBackend. A device engine (Vulkan: gpu/VulkanForward.h)
// holds the weights on the device from load on, records every layer and reads back only what
// the forward keeps. An AttentionBackend offers its device's engine (forwardEngine()), so every
// caller of TransformerModel::forward gets it without asking.

#include "core/Result.h"

#include <atomic>
#include <memory>
#include <string>

namespace attnscope {

class AttentionBackend;
class TransformerModel;
class TranslationModel;
struct Encoding;
struct ForwardKeep;
struct ModelRun;
struct TranslationRun;

// Whether a forward an engine gave up on may run as the layer loop instead: what the device could
// not do (lost, out of memory, too large, unsupported) the loop may still do with the backend's
// attention (or, through a falling-back backend, on the CPU). Other failures are the answer.
inline bool layerLoopMayRetry(ErrorKind kind)
{
    return kind == ErrorKind::DeviceLost || kind == ErrorKind::OutOfMemory || kind == ErrorKind::TooLarge ||
           kind == ErrorKind::Unsupported;
}

class ForwardEngine
{
public:
    virtual ~ForwardEngine() = default;

    // "cpu", "vulkan".
    virtual std::string name() const = 0;
    // Whether forward() computes this model's pass with `keep` itself; where it does not,
    // TransformerModel::forward runs the layer loop with the backend's attention instead.
    virtual bool runs(const TransformerModel &model, const ForwardKeep &keep) const = 0;
    // Puts the model's weights where the engine computes. Once per model: a second call for
    // the same weights does nothing, and the first forward of a model that was not loaded
    // loads it.
    virtual Status load(const TransformerModel &model) = 0;
    // The pass, as TransformerModel::forward documents it (kinds TooLarge, Cancelled, NonFinite,
    // and a device engine's DeviceLost and OutOfMemory). `cancel` is read between submissions.
    virtual Result<std::shared_ptr<const ModelRun>> forward(const TransformerModel &model, const Encoding &input,
                                                            const ForwardKeep &keep,
                                                            const std::atomic<bool> *cancel = nullptr) = 0;

    // An encoder–decoder model's teacher-forced pass, as TranslationModel::forward documents it:
    // every map, hidden state and cross input kept. An engine that does not compute one says so
    // here (the default), and the model runs its layer loop with the backend's attention.
    virtual bool runsTranslation(const TranslationModel &) const { return false; }
    virtual Result<std::shared_ptr<const TranslationRun>> translate(const TranslationModel &model,
                                                                    const Encoding &source, const Encoding &target,
                                                                    const std::atomic<bool> *cancel = nullptr);
};

// The CPU engine: the layer loop with attention through `backend` (which outlives the engine).
class LayerLoopEngine final : public ForwardEngine
{
public:
    explicit LayerLoopEngine(AttentionBackend &backend) : m_backend(backend) {}

    std::string name() const override { return "cpu"; }
    bool runs(const TransformerModel &, const ForwardKeep &) const override { return true; }
    Status load(const TransformerModel &) override { return Ok{}; } // the weights stay where they are
    Result<std::shared_ptr<const ModelRun>> forward(const TransformerModel &model, const Encoding &input,
                                                    const ForwardKeep &keep,
                                                    const std::atomic<bool> *cancel = nullptr) override;
    bool runsTranslation(const TranslationModel &) const override { return true; }
    Result<std::shared_ptr<const TranslationRun>> translate(const TranslationModel &model, const Encoding &source,
                                                            const Encoding &target,
                                                            const std::atomic<bool> *cancel = nullptr) override;

private:
    AttentionBackend &m_backend;
};

} // namespace attnscope
