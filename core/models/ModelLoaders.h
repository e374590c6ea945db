#pragma once

// The loading half of TransformerModel::load(): which tensors a checkpoint holds, under which
// names and in which orientation, read from the architecture's entry (Architecture.h).

#include "core/models/ModelConfig.h"
#include "core/models/ModelTensors.h"
#include "core/models/TransformerModel.h"

#include <cstdint>

namespace attnscope {

// The weights the entry names. Attention weights and norms are converted to float32 now; the
// embedding, the LM head and the MLPs stay mapped in their stored dtype (WeightMatrix), every
// value checked finite once. The weights keep `tensors` alive.
Result<TransformerWeights> loadWeights(std::shared_ptr<const ModelTensors> tensors, const ModelConfig &config);

// Float32 values the loaded model keeps in memory (saturating): the attention weights, norms
// and position tables; the mapped weights count in the forward's working memory, a block at a
// time.
std::int64_t modelWeightCount(const ModelConfig &config);

} // namespace attnscope

// Assigns the value of a Result expression to target, or returns its error from the caller.
#define ATTNSCOPE_ASSIGN_OR_RETURN(target, expr)                                                                       \
    do {                                                                                                               \
        auto attnscopeResult_ = (expr);                                                                                \
        if (!attnscopeResult_)                                                                                         \
            return attnscopeResult_.error();                                                                           \
        target = std::move(*attnscopeResult_);                                                                         \
    } while (false)
