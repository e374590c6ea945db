#pragma once

// The loading half of TransformerModel::load(): which tensors a checkpoint holds, under which
// names and in which orientation, read from the architecture's entry (Architecture.h).

#include "core/models/ModelConfig.h"
#include "core/models/ModelTensors.h"
#include "core/models/TransformerModel.h"

#include <cstdint>

namespace attnscope {

Result<TransformerWeights> loadWeights(const ModelTensors &tensors, const ModelConfig &config);

// Float32 values the forward keeps for a model of this configuration (saturating); `lmHead`:
// with an untied LM head stored.
std::int64_t modelWeightCount(const ModelConfig &config, bool lmHead = false);

} // namespace attnscope

// Assigns the value of a Result expression to target, or returns its error from the caller.
#define ATTNSCOPE_ASSIGN_OR_RETURN(target, expr)                                                                       \
    do {                                                                                                               \
        auto attnscopeResult_ = (expr);                                                                                \
        if (!attnscopeResult_)                                                                                         \
            return attnscopeResult_.error();                                                                           \
        target = std::move(*attnscopeResult_);                                                                         \
    } while (false)
