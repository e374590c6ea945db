#include "core/analysis/AttentionSet.h"

#include "core/analysis/AttentionStats.h"
#include "core/io/MemoryLimits.h"
#include "core/tokenizers/ByteLevelText.h"

#include <Eigen/Core>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>
#include <tuple>

namespace attnscope {

namespace {

float halfToFloat(std::uint16_t bits)
{
    return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(bits));
}

bool startsWith(const std::string &s, const char *prefix)
{
    return s.rfind(prefix, 0) == 0;
}

// "[CLS]", "<|endoftext|>", "<s>": markers that never belong to a neighbouring word.
bool isSpecialToken(const std::string &t)
{
    return t.size() >= 3 && ((t.front() == '[' && t.back() == ']') || (t.front() == '<' && t.back() == '>'));
}

// "," or "." alone: a word of its own even where the labels carry no space marker.
bool isPunctuation(const std::string &t)
{
    return !t.empty() &&
           std::all_of(t.begin(), t.end(), [](char c) { return (unsigned char)c < 0x80 && std::ispunct(c); });
}

} // namespace

Result<AttentionSet> AttentionSet::fromContiguous(std::shared_ptr<const void> keepAlive, const void *data,
                                                  AttentionStorage storage, int samples, int layers, int heads,
                                                  std::int64_t tq, std::int64_t tk)
{
    if (samples < 1 || layers < 1 || heads < 1 || tq < 1 || tk < 1)
        return Error{"attention: expected at least one sample, layer, head, query and key, found [" +
                     std::to_string(samples) + ", " + std::to_string(layers) + ", " + std::to_string(heads) + ", " +
                     std::to_string(tq) + ", " + std::to_string(tk) + "]"};
    AttentionSet set;
    set.m_keepAlive = std::move(keepAlive);
    set.m_storage = storage;
    set.m_samples = samples;
    set.m_layers = layers;
    set.m_heads = heads;
    set.m_tq = tq;
    set.m_tk = tk;
    const std::size_t element = storage == AttentionStorage::Float16 ? 2 : 4;
    const std::size_t mapBytes = std::size_t(tq) * std::size_t(tk) * element;
    const auto *bytes = static_cast<const unsigned char *>(data);
    const std::size_t count = std::size_t(samples) * std::size_t(layers) * std::size_t(heads);
    set.m_maps.reserve(count);
    for (std::size_t m = 0; m < count; ++m)
        set.m_maps.push_back(bytes + m * mapBytes);
    return set;
}

Result<AttentionSet> AttentionSet::fromFloats(std::vector<float> values, int samples, int layers, int heads,
                                              std::int64_t tq, std::int64_t tk)
{
    const std::int64_t expected = std::int64_t(samples) * layers * heads * tq * tk;
    if (std::int64_t(values.size()) != expected)
        return Error{"attention: expected " + std::to_string(expected) + " values, found " +
                     std::to_string(values.size())};
    auto owned = std::make_shared<const std::vector<float>>(std::move(values));
    const void *data = owned->data();
    return fromContiguous(owned, data, AttentionStorage::Float32, samples, layers, heads, tq, tk);
}

AttentionSet AttentionSet::fromTrace(const AttentionTrace &trace, std::shared_ptr<const void> owner)
{
    AttentionSet set;
    set.m_storage = AttentionStorage::Float32;
    set.m_samples = 1;
    set.m_layers = 1;
    set.m_heads = trace.heads();
    set.m_tq = set.m_heads > 0 ? trace.weights[0].rows() : 0;
    set.m_tk = set.m_heads > 0 ? trace.weights[0].cols() : 0;
    for (const MatrixF &w : trace.weights)
        set.m_maps.push_back(w.data());
    set.m_keepAlive = std::move(owner);
    return set;
}

Result<AttentionSet> AttentionSet::fromQk(std::shared_ptr<const QkSource> source)
{
    if (!source || source->layers() < 1 || source->queries() < 1 || source->keys() < 1)
        return Error{"queries and keys: expected at least one layer, query and key", ErrorKind::InvalidInput};
    AttentionSet set;
    set.m_samples = 1;
    set.m_layers = source->layers();
    set.m_tq = source->queries();
    set.m_tk = source->keys();
    for (int l = 0; l < set.m_layers; ++l) {
        const QkLayer facts = source->facts(l);
        if (l == 0)
            set.m_heads = facts.heads;
        else if (facts.heads != set.m_heads)
            return Error{"layer " + std::to_string(l) + ": " + std::to_string(facts.heads) +
                             " heads, where layer 0 has " + std::to_string(set.m_heads) +
                             " (a set shows the same heads in every layer)",
                         ErrorKind::Unsupported};
        set.layerFacts.push_back({facts.heads, facts.kvHeads, facts.window, facts.scale});
        if (l == 0) {
            set.queryPositions = facts.queryPositions;
            set.keyPositions = facts.keyPositions;
        }
    }
    set.m_qk = std::move(source);
    return set;
}

Status AttentionSet::checkSource() const
{
    if (m_source)
        return m_source->checkUnchanged();
    if (m_qk)
        return m_qk->checkUnchanged();
    return Ok{};
}

LayerFacts AttentionSet::facts(int layer) const
{
    return layer >= 0 && std::size_t(layer) < layerFacts.size() ? layerFacts[std::size_t(layer)] : LayerFacts{};
}

std::int64_t AttentionSet::valueBytes() const
{
    const std::int64_t element = m_storage == AttentionStorage::Float16 ? 2 : 4;
    const std::int64_t maps = m_qk ? std::int64_t(m_layers) * m_heads : std::int64_t(m_maps.size());
    return saturatingMul(saturatingMul(saturatingMul(maps, m_tq), m_tk), element);
}

const void *AttentionSet::mapData(int sample, int layer, int head) const
{
    return m_maps[(std::size_t(sample) * std::size_t(m_layers) + std::size_t(layer)) * std::size_t(m_heads) +
                  std::size_t(head)];
}

float AttentionSet::at(int sample, int layer, int head, std::int64_t i, std::int64_t j) const
{
    if (m_qk) {
        float value = 0.0f;
        rowBlock(sample, layer, head, i, i + 1, j, j + 1, &value);
        return value;
    }
    const std::int64_t index = i * m_tk + j;
    const void *data = mapData(sample, layer, head);
    // Mapped files need not align their values, so both kinds are read byte-wise.
    if (m_storage == AttentionStorage::Float32) {
        float value;
        std::memcpy(&value, static_cast<const unsigned char *>(data) + 4 * index, 4);
        return value;
    }
    std::uint16_t bits;
    std::memcpy(&bits, static_cast<const unsigned char *>(data) + 2 * index, 2);
    return halfToFloat(bits);
}

void AttentionSet::row(int sample, int layer, int head, std::int64_t i, float *out) const
{
    rowSegment(sample, layer, head, i, 0, m_tk, out);
}

void AttentionSet::rowBlock(int sample, int layer, int head, std::int64_t i0, std::int64_t i1, std::int64_t j0,
                            std::int64_t j1, float *out) const
{
    const std::int64_t keys = j1 - j0;
    if (!m_qk) {
        for (std::int64_t i = i0; i < i1; ++i)
            rowSegment(sample, layer, head, i, j0, j1, out + (i - i0) * keys);
        return;
    }
    // The layer was checked when its source was opened; should it fail now (its file changed on
    // disk), the rows read as NaN and checkSource() says why.
    auto qk = m_qk->layer(layer);
    auto block = qk ? qkWeightsBlock(**qk, head, i0, i1, j0, j1) : Result<MatrixF>(qk.error());
    if (!block) {
        std::fill(out, out + (i1 - i0) * keys, std::numeric_limits<float>::quiet_NaN());
        return;
    }
    std::memcpy(out, block->data(), sizeof(float) * std::size_t(block->size()));
}

void AttentionSet::rowSegment(int sample, int layer, int head, std::int64_t i, std::int64_t j0, std::int64_t j1,
                              float *out) const
{
    if (m_qk)
        return rowBlock(sample, layer, head, i, i + 1, j0, j1, out);
    const void *data = mapData(sample, layer, head);
    const std::int64_t first = i * m_tk + j0, count = j1 - j0;
    if (m_storage == AttentionStorage::Float32) {
        std::memcpy(out, static_cast<const unsigned char *>(data) + 4 * first, std::size_t(count) * sizeof(float));
        return;
    }
    const auto *bytes = static_cast<const unsigned char *>(data) + 2 * first;
    for (std::int64_t j = 0; j < count; ++j) {
        std::uint16_t bits;
        std::memcpy(&bits, bytes + 2 * j, 2);
        out[j] = halfToFloat(bits);
    }
}

MatrixF AttentionSet::map(int sample, int layer, int head) const
{
    MatrixF m(m_tq, m_tk);
    if (m_qk) {
        rowBlock(sample, layer, head, 0, m_tq, 0, m_tk, m.data());
        return m;
    }
    for (std::int64_t i = 0; i < m_tq; ++i)
        row(sample, layer, head, i, m.data() + i * m_tk);
    return m;
}

Status AttentionSet::setTokens(std::vector<std::string> queries, std::vector<std::string> keys)
{
    if (!queries.empty() && std::int64_t(queries.size()) != m_tq)
        return Error{"tokens: expected " + std::to_string(m_tq) + " labels (one per query), found " +
                     std::to_string(queries.size())};
    if (!keys.empty() && std::int64_t(keys.size()) != m_tk)
        return Error{"keyTokens: expected " + std::to_string(m_tk) + " labels (one per key), found " +
                     std::to_string(keys.size())};
    for (auto [labels, wordOf, words, given] : {std::tuple{&queryTokens, &queryWordOf, &queryWords, &queries},
                                                std::tuple{&keyTokens, &keyWordOf, &keyWords, &keys}}) {
        if (auto pieces = readablePieces(*given)) {
            *labels = std::move(pieces->labels);
            *wordOf = std::move(pieces->wordOf);
            *words = std::move(pieces->words);
        } else {
            *labels = std::move(*given);
            *wordOf = wordsFromTokens(*labels);
            words->clear();
        }
    }
    return Ok{};
}

Status AttentionSet::setTokenWords(const std::vector<std::int32_t> &words)
{
    if (std::int64_t(words.size()) != m_tq || m_tq != m_tk)
        return Error{"words: expected " + std::to_string(m_tq) + " entries (one per token), found " +
                     std::to_string(words.size())};
    // A word ends where the tokenizer ends one, and where the labels do (a Chinese character
    // is a word of its own, as BERT splits them, though GPT-2's pattern keeps a run together).
    std::vector<int> wordOf(words.size());
    int word = -1;
    for (std::size_t i = 0; i < words.size(); ++i) {
        const bool tokenizerJoins = i > 0 && words[i] >= 0 && words[i] == words[i - 1];
        const bool labelsJoin = i > 0 && i < queryWordOf.size() && queryWordOf[i] == queryWordOf[i - 1];
        wordOf[i] = tokenizerJoins && labelsJoin ? word : ++word;
    }
    if (wordOf == queryWordOf && wordOf == keyWordOf)
        return Ok{}; // as the labels said: their decoded word labels stay
    queryWordOf = keyWordOf = std::move(wordOf);
    queryWords.clear(); // the labels merge by the new words
    keyWords.clear();
    return Ok{};
}

std::vector<std::string> AttentionSet::queryWordLabels() const
{
    return queryWords.empty() ? mergedWordLabels(queryTokens, queryWordOf) : queryWords;
}

std::vector<std::string> AttentionSet::keyWordLabels() const
{
    return keyWords.empty() ? mergedWordLabels(keyTokens, keyWordOf) : keyWords;
}

std::vector<int> wordsFromTokens(const std::vector<std::string> &tokens)
{
    const bool spaceMarkers = std::any_of(tokens.begin(), tokens.end(), [](const std::string &t) {
        return startsWith(t, "\xC4\xA0") || startsWith(t, "\xE2\x96\x81"); // Ġ, ▁
    });
    std::vector<int> wordOf(tokens.size());
    int word = -1;
    bool previousStandsAlone = true;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        const std::string &t = tokens[i];
        const bool alone = isSpecialToken(t) || isPunctuation(t);
        bool continues;
        if (i == 0 || alone || previousStandsAlone)
            continues = false;
        else if (startsWith(t, "##"))
            continues = true;
        else if (spaceMarkers)
            continues = !startsWith(t, "\xC4\xA0") && !startsWith(t, "\xE2\x96\x81");
        else
            continues = false;
        if (!continues)
            ++word;
        wordOf[i] = word;
        previousStandsAlone = alone;
    }
    return wordOf;
}

} // namespace attnscope
