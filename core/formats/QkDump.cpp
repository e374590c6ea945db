#include "core/formats/QkDump.h"

namespace attnscope {
} // namespace attnscope
