#pragma once

// The per-architecture halves of TransformerModel::load(): which tensors a GPT-2 or BERT
// checkpoint holds, under which names and in which orientation.

#include "core/models/ModelConfig.h"
#include "core/models/ModelTensors.h"
#include "core/models/TransformerModel.h"

#include <cstdint>

namespace attnscope {

Result<TransformerWeights> loadGpt2Weights(const ModelTensors &tensors, const ModelConfig &config);
Result<TransformerWeights> loadBertWeights(const ModelTensors &tensors, const ModelConfig &config);

// Float32 values the forward keeps for a model of this configuration (saturating).
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
