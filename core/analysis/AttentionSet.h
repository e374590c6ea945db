#pragma once

#include "core/Result.h"
#include "core/Tensor.h"
#include "core/attention/AttentionTrace.h"
#include "core/attention/QkAttention.h"
#include "core/io/MappedFile.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace attnscope {

// How the values of an attention set are stored. Imported files keep their precision where
// it is float16 or float32 (never a double copy): a 12 x 12 x 512 x 512 float16 file stays
// 72 MiB in memory, or is mapped from the file itself.
enum class AttentionStorage { Float16, Float32 };

// The one shape every view, statistic and export works on (design.md, "Layers"): attention
// maps indexed by (sample, layer, head), each Tq by Tk, with token labels. Filled by a
// project's compute (one layer), an imported attention file, or a model forward.
//
// The maps live in memory the set does not necessarily own (a trace, a mapped file): a
// shared keep-alive handle holds that memory for as long as any copy of the set exists, so
// copies are cheap and safe to hand to a worker thread. Immutable once made.
// What is known of how one layer's attention was made: its query heads, the key/value heads they
// share (as many as the query heads where nothing is shared), a sliding window in tokens (0: none)
// and the factor on q·k. Zero where the source does not say (an attention file holds maps only).
struct LayerFacts {
    int queryHeads = 0;
    int kvHeads = 0;
    std::int64_t window = 0;
    double scale = 0.0;

    bool isKnown() const { return queryHeads > 0; }
    bool operator==(const LayerFacts &) const = default;
};

class AttentionSet
{
public:
    AttentionSet() = default;

    // Maps stored contiguously as [samples, layers, heads, Tq, Tk] at `data` in `storage`
    // precision; `keepAlive` owns that memory (a vector, a mapped file). Checks that the
    // sizes are positive and that the labels, when given, match Tq and Tk.
    static Result<AttentionSet> fromContiguous(std::shared_ptr<const void> keepAlive, const void *data,
                                               AttentionStorage storage, int samples, int layers, int heads,
                                               std::int64_t tq, std::int64_t tk);

    // Float32 values owned by the set, [samples, layers, heads, Tq, Tk].
    static Result<AttentionSet> fromFloats(std::vector<float> values, int samples, int layers, int heads,
                                           std::int64_t tq, std::int64_t tk);

    // One layer: the weights of a computed trace (one map per head), not copied: `owner`
    // keeps the trace alive (the trace itself, or whatever holds it).
    static AttentionSet fromTrace(const AttentionTrace &trace, std::shared_ptr<const void> owner);

    // Maps computed from queries and keys (a Q/K dump, a model run that kept q and k; design.md,
    // "Contract: attention from queries and keys"): one sample, the source's layers, its query
    // heads. Nothing of the size of a map is held: every read computes the rows it returns
    // exactly (core/attention/QkAttention.h). Refused when the layers' head counts differ.
    static Result<AttentionSet> fromQk(std::shared_ptr<const QkSource> source);
    // The queries and keys the maps are computed from; null for stored maps.
    const std::shared_ptr<const QkSource> &qkSource() const { return m_qk; }
    bool isFromQk() const { return m_qk != nullptr; }

    bool isEmpty() const { return m_maps.empty() && !m_qk; }
    int samples() const { return m_samples; }
    int layers() const { return m_layers; }
    int heads() const { return m_heads; }
    std::int64_t queries() const { return m_tq; } // Tq
    std::int64_t keys() const { return m_tk; }    // Tk
    AttentionStorage storage() const { return m_storage; }
    // Bytes of attention values the set refers to (whoever owns them); for a set from queries and
    // keys, what its maps would take as float32.
    std::int64_t valueBytes() const;

    // w(sample, layer, head)[i][j], converted to float.
    float at(int sample, int layer, int head, std::int64_t i, std::int64_t j) const;
    // Row i of one map, converted to float into out (Tk values).
    void row(int sample, int layer, int head, std::int64_t i, float *out) const;
    // Keys [j0, j1) of row i, converted to float into out (j1 - j0 values): a zoomed block
    // of a long map reads only what it shows.
    void rowSegment(int sample, int layer, int head, std::int64_t i, std::int64_t j0, std::int64_t j1,
                    float *out) const;
    // Rows [i0, i1) by keys [j0, j1) of one map, row-major into out ((i1 - i0) x (j1 - j0)
    // values): what a reader of many rows asks for, so a set from queries and keys computes them
    // as one block (a product), not row by row.
    void rowBlock(int sample, int layer, int head, std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1,
                  float *out) const;
    // One whole map as a Tq by Tk float matrix (a copy).
    MatrixF map(int sample, int layer, int head) const;

    // Token labels (Tq and Tk entries; empty when the source had none) and optional word
    // boundaries: wordOf[i] is the index of the word token i belongs to (non-decreasing,
    // starting at 0), empty when unknown. queryWords / keyWords: the words' own text where the
    // labels alone cannot give it (byte-level pieces of one character); empty otherwise.
    std::vector<std::string> queryTokens, keyTokens;
    std::vector<int> queryWordOf, keyWordOf;
    std::vector<std::string> queryWords, keyWords;
    // The label of each word (mergedWordLabels, or the words' own text where the set has it).
    std::vector<std::string> queryWordLabels() const;
    std::vector<std::string> keyWordLabels() const;

    // The position of each query (key) row where the source gives them (a Q/K dump of the last
    // rows of a long context); empty: 0, 1, ..., T-1. Statistics measure distances in positions.
    std::vector<std::int64_t> queryPositions, keyPositions;

    // One entry per layer where the source knows how its attention was made (a project, a model
    // run); empty otherwise. facts() answers for any layer (all zero when unknown).
    std::vector<LayerFacts> layerFacts;
    LayerFacts facts(int layer) const;

    // Sets the labels, checking their counts ("tokens: expected 12 labels (one per query), found 11"),
    // and the words they form (wordsFromTokens). Byte-level BPE spellings ("Ġworld", "æĪ") and
    // SentencePiece ones ("▁world", "<0xE6>") are shown as the text they decode to, and their
    // words taken from that text (core/tokenizers/ByteLevelText.h): a label reads "␣world", "我…".
    Status setTokens(std::vector<std::string> queries, std::vector<std::string> keys);
    // Word boundaries as the tokenizer itself cut the text (Encoding::words, self-attention: the
    // same for queries and keys), added to those of the labels (a word ends where either ends
    // one, so Chinese characters stay words of their own): -1 (a special or added token) is a
    // word of its own. One entry per token, else an error.
    Status setTokenWords(const std::vector<std::int32_t> &words);

    // The mapped file the values are read from, when they are read straight from one (an
    // attention file kept mapped); null otherwise. A file can change on disk while it is shown:
    // whoever reads the values asks checkSource() after its work (a statistic, an export, a
    // repaint) and reports its error ("the file changed on disk; reopen it") instead of what it
    // computed. Reads themselves never crash (MappedFile guards them).
    void setSourceFile(std::shared_ptr<const MappedFile> file) { m_source = std::move(file); }
    const std::shared_ptr<const MappedFile> &sourceFile() const { return m_source; }
    // Ok unless the values come from a mapped file that changed since it was opened.
    Status checkSource() const;

    // Whether the values are signed differences (a comparison's B − A, core/analysis/Comparison.h)
    // rather than attention weights: views show them on a diverging scale around 0, and the
    // statistics of attention (headStatistics, rollout) mean nothing for them.
    void setSigned(bool isSigned) { m_signed = isSigned; }
    bool isSigned() const { return m_signed; }

private:
    const void *mapData(int sample, int layer, int head) const;

    std::shared_ptr<const void> m_keepAlive;
    std::shared_ptr<const MappedFile> m_source;
    std::shared_ptr<const QkSource> m_qk;
    std::vector<const void *> m_maps; // samples*layers*heads row-major maps of Tq*Tk values
    AttentionStorage m_storage = AttentionStorage::Float32;
    int m_samples = 0, m_layers = 0, m_heads = 0;
    std::int64_t m_tq = 0, m_tk = 0;
    bool m_signed = false;
};

// Word boundaries from sub-word token labels, by the two common conventions: a label that
// starts with "##" continues the previous word (BERT's WordPiece); otherwise, when any label
// starts with "Ġ" or "▁" (GPT-2's byte-level BPE, SentencePiece), a label starts a new word
// only when it starts with that marker or is the first. Special tokens ("[CLS]", "<|endoftext|>")
// are words of their own.
std::vector<int> wordsFromTokens(const std::vector<std::string> &tokens);

} // namespace attnscope
