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
struct Encoding;
struct ForwardKeep;
struct ModelRun;

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

private:
    AttentionBackend &m_backend;
};

} // namespace attnscope
