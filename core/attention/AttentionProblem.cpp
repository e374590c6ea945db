#include "core/attention/AttentionProblem.h"

#include <cmath>

namespace attnscope {

double AttentionSpec::scale() const
{
    switch (scaleMode) {
    case ScaleMode::InvSqrtDk:
        return 1.0 / std::sqrt(double(headDimQK));
    case ScaleMode::None:
        return 1.0;
    case ScaleMode::Custom:
        return scaleValue;
    }
    return 1.0;
}

} // namespace attnscope
