#pragma once

#include "core/Result.h"
#include "core/Tensor.h"
#include "core/formats/Safetensors.h"
#include "core/models/WeightMatrix.h"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope {

// model.safetensors.index.json's weight_map: tensor name -> shard file name. Checked: an object
// with a "weight_map" object of strings, each a plain file name (no folders, no "..").
Result<std::map<std::string, std::string>> parseShardIndex(std::string_view json, const std::string &shownName);

// The tensors of a model folder's weights, by their transformers names: model.safetensors, or
// the shards that model.safetensors.index.json names (every shard present, every tensor the
// index names found in its shard). Values are converted from F32, F16, BF16 (and F64) to
// float32 when read. A name is found as written or with one of the architecture's prefixes;
// errors are one line naming the file and the tensor as the file spells it:
// "m/model.safetensors: h.3.attn.c_attn.weight: expected 64 x 192, found 64 x 190".
class ModelTensors
{
public:
    static Result<ModelTensors> open(const std::string &modelDir, std::vector<std::string> prefixes);
    // One file already open (tests).
    ModelTensors(SafetensorsFile file, std::vector<std::string> prefixes, std::string shownFile);

    // The stored tensor under the first of `names` present (with or without a prefix), or an
    // error naming the first name when none is.
    Result<const SafetensorsTensor *> find(const std::vector<std::string> &names) const;
    bool contains(const std::string &name) const;
    // The file a tensor is in, as messages show it.
    const std::string &shownFileOf(const SafetensorsTensor &t) const;
    // What the weights take on disk (bytes, all shards).
    std::uint64_t storedBytes() const;

    // A 2-D tensor stored rows by cols; transposed (cols by rows) when `transpose` (Linear).
    Result<MatrixF> matrix(const std::vector<std::string> &names, std::int64_t rows, std::int64_t cols,
                           bool transpose = false) const;
    Result<VectorF> vector(const std::vector<std::string> &names, std::int64_t size) const;
    // A 2-D tensor stored rows by cols kept mapped (F32, F16, BF16; F64 converted now), every
    // value checked finite; used transposed (cols by rows) when `transpose` (Linear).
    Result<WeightMatrix> weight(const std::vector<std::string> &names, std::int64_t rows, std::int64_t cols,
                                bool transpose) const;

    // Ok unless a file changed on disk since it was mapped (ask after reading).
    Status checkUnchanged() const;

private:
    ModelTensors() = default;
    // The index of the file holding t (m_files.size() when none does).
    std::size_t fileOf(const SafetensorsTensor &t) const;
    Result<std::vector<float>> values(const SafetensorsTensor &t, const std::vector<std::int64_t> &shape,
                                      const std::string &expected) const;

    std::vector<SafetensorsFile> m_files;
    std::vector<std::string> m_shown;                    // per file
    std::map<std::string, std::pair<int, int>> m_byName; // name -> (file, tensor)
    std::vector<std::string> m_prefixes;
    std::string m_shownWeights; // what "no tensor" errors name: the file or the index
};

} // namespace attnscope
