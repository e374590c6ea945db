#pragma once

#include "core/Result.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace attnscope {

// Bounds on a JSON document read from outside, checked while it is parsed so that nothing
// recursive (a copy, a dump, a destructor) ever sees a hostile document.
struct JsonLimits {
    int maxDepth = 64;                  // nesting of arrays and objects; a project needs 4
    std::int64_t maxValues = INT64_MAX; // values of any kind, each about 16 bytes once parsed
};

// Parses text into an ordered_json (the file's key order is kept) without throwing. Every
// failure is one line that names where it happened in the document's own terms
// ("query.x[0][1]: ...") or the line and column:
//   - a syntax error: "not valid JSON: parse error at line 3, column 12: ...";
//   - a number beyond double range (1e400): "weights.q[3][5]: the number 1e400 is out of range";
//   - nesting past maxDepth: "query.x[0][0]: nested 65 levels deep, more than the 64 allowed";
//   - a key given twice in one object: "weights.q: given twice (a key may appear only once)";
//   - more than maxValues values: kind TooLarge.
// Quoted user text goes through quotedText()/printableText() (core/io/UserText.h).
Result<nlohmann::ordered_json> parseJsonDocument(std::string_view text, const JsonLimits &limits = {});

} // namespace attnscope
