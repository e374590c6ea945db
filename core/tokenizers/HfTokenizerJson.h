#pragma once

// The first pass over tokenizer.json: the document as nlohmann's JSON values, except the two
// large members, model.vocab and model.merges, which are read straight from the parser's events
// (building them as JSON values first and copying them out took most of a 151k-token file's
// load time). HfTokenizerReader.cpp reads the rest into HfTokenizer::Data.

#include "core/Result.h"
#include "core/tokenizers/HfTokenizerParts.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnscope::hfjson {

struct Extracted {
    bool haveVocab = false, haveMerges = false;
    std::vector<std::pair<std::string, std::int64_t>> vocab;
    std::vector<std::pair<std::string, std::string>> merges;
};

struct ParsedTokenizerJson {
    Json root; // model.vocab and model.merges left out
    Extracted extracted;
};

// Errors name the file (`shownName`) and the field: nesting deeper than 64 levels, text that is
// not JSON, a vocabulary id or a merge of the wrong form.
Result<ParsedTokenizerJson> parseTokenizerJson(std::string_view json, const std::string &shownName);

} // namespace attnscope::hfjson
