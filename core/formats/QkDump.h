#pragma once

#include "core/Result.h"
#include "core/attention/QkAttention.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attnscope {

// A Q/K dump (design.md, "Contract: attention from queries and keys": format `attnscope-qk`,
// version 1): a folder holding `attnscope-qk.json` and one safetensors file per layer with "q"
// [Tq, H, hd] and "k" [Tk, KV, hd] (F32, F16 or BF16), optional "sinks" [H] and "lse" [H, Tq]
// (F32). The layer files stay memory-mapped; a layer is converted to float32 only when asked for.
class QkDump : public QkSource
{
public:
    inline static constexpr const char *kIndexName = "attnscope-qk.json";

    // `path`: the dump's folder or its attnscope-qk.json. Everything is checked before the dump is
    // returned, each failure one line naming the file and the field or tensor: the index (format,
    // version 1, layers, token and position counts), every layer file (present, inside the
    // folder, a valid safetensors file with q and k of the shapes and dtypes above, heads and
    // kvHeads matching the index, H divisible by KV, the same Tq and Tk in every layer) and every
    // value (no NaN or infinity). Reading the values streams the mapped files, allocating nothing
    // of their size.
    static Result<QkDump> open(const std::string &path);

    // Whether `path` names a dump (a folder holding attnscope-qk.json, or that file itself), by its
    // name alone: what every INPUT of the CLI and File > Open ask before choosing a reader.
    static bool isDump(const std::string &path);

    int layers() const override;
    std::int64_t queries() const override;
    std::int64_t keys() const override;
    QkLayer facts(int layer) const override;
    Result<std::shared_ptr<const QkLayer>> layer(int layer) const override;

    const std::string &folder() const;
    // Labels from the index (empty when it has none; keyTokens defaults to tokens for Tq = Tk).
    const std::vector<std::string> &tokens() const;
    const std::vector<std::string> &keyTokens() const;
    // The stored dtype of layer l's q ("F32", "F16", "BF16").
    std::string dtype(int layer) const;
    // Bytes of the mapped layer files.
    std::int64_t fileBytes() const;
    // Ok unless a layer file changed on disk since the dump was opened.
    Status checkUnchanged() const override;

private:
    struct State;
    std::shared_ptr<const State> m_state;
};

// Writes a version-1 dump layer by layer, so a forward can hand over each layer's q and k as it
// computes them and free them: attnscope-qk.json and layer-NNN.safetensors with q and k as F32
// (sinks and lse when a layer has them). Atomic: the files go into a fresh sibling folder that
// replaces `dir` only in finish(); a failure (or a writer dropped before finish) leaves `dir` as
// it was. Positions are written when the layers give them (every layer must give the same).
class QkDumpWriter
{
public:
    QkDumpWriter(std::string dir, std::vector<std::string> tokens, std::vector<std::string> keyTokens);
    ~QkDumpWriter(); // removes the unfinished sibling folder
    QkDumpWriter(const QkDumpWriter &) = delete;
    QkDumpWriter &operator=(const QkDumpWriter &) = delete;

    // Validates the layer (validateQkLayer, and the same Tq, Tk and positions as the first) and
    // writes its file.
    Status addLayer(const QkLayer &layer);
    // Writes the index and puts the folder in place of `dir`.
    Status finish();

private:
    struct State;
    std::unique_ptr<State> m_state;
};

} // namespace attnscope
