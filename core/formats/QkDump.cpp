#include "core/formats/QkDump.h"

#include "core/ErrorCode.h"
#include "core/formats/Safetensors.h"
#include "core/io/FileIo.h"
#include "core/io/FolderConfinement.h"
#include "core/io/JsonDocument.h"
#include "core/io/MappedFile.h"
#include "core/io/MemoryLimits.h"
#include "core/io/UserText.h"
#include "core/models/WeightMatrix.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <mutex>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attnscope {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace {

constexpr int kVersion = 1;
// Layers kept converted: one for each job that may read the dump at once (the thumbnails, the
// statistics, the rollout, the pooled view), so they do not convert each other's layers again and
// again, within an eighth of the memory budget.
constexpr std::size_t kCachedLayers = 4;

std::string shapeText(const std::vector<std::int64_t> &shape)
{
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i)
        s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

// What a JSON value is, for "expected ..., found a string".
std::string kindOf(const json &v)
{
    if (v.is_null())
        return "null";
    if (v.is_boolean())
        return v.get<bool>() ? "true" : "false";
    if (v.is_number_integer())
        return v.dump();
    if (v.is_number())
        return v.dump();
    if (v.is_string())
        return quotedText(v.get_ref<const std::string &>(), 40);
    return v.is_array() ? "an array" : "an object";
}

// Reads the index's fields, each failure one line "attnscope-qk.json: FIELD: ...".
struct IndexReader {
    std::string shown = std::string(QkDump::kIndexName) + ": ";

    Error error(const std::string &field, const std::string &what) const { return Error{shown + field + ": " + what}; }

    Result<std::int64_t> wholeNumber(const json &v, const std::string &field, std::int64_t least) const
    {
        std::int64_t n = 0;
        if (v.is_number_unsigned()) {
            if (v.get<std::uint64_t>() > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
                return error(field,
                             "expected a whole number of at least " + std::to_string(least) + ", found " + kindOf(v));
            n = std::int64_t(v.get<std::uint64_t>());
        } else if (v.is_number_integer()) {
            n = v.get<std::int64_t>();
        } else {
            return error(field,
                         "expected a whole number of at least " + std::to_string(least) + ", found " + kindOf(v));
        }
        if (n < least)
            return error(field, "expected a whole number of at least " + std::to_string(least) + ", found " +
                                    std::to_string(n));
        return n;
    }

    Result<int> count(const json &o, const char *key, const std::string &at) const
    {
        const std::string field = at + "." + key;
        if (!o.contains(key))
            return error(field, "missing");
        auto n = wholeNumber(o[key], field, 1);
        if (!n)
            return n.error();
        if (*n > (1 << 20))
            return error(field, std::to_string(*n) + " is more than this reader accepts (1048576)");
        return int(*n);
    }

    Result<std::vector<std::string>> labels(const json &doc, const char *key) const
    {
        std::vector<std::string> out;
        if (!doc.contains(key) || doc[key].is_null())
            return out;
        const json &v = doc[key];
        if (!v.is_array())
            return error(key, "expected an array of strings, found " + kindOf(v));
        out.reserve(v.size());
        for (std::size_t i = 0; i < v.size(); ++i) {
            if (!v[i].is_string())
                return error(std::string(key) + "[" + std::to_string(i) + "]",
                             "expected a string, found " + kindOf(v[i]));
            out.push_back(v[i].get<std::string>());
        }
        return out;
    }

    Result<std::vector<std::int64_t>> positions(const json &doc, const char *key) const
    {
        std::vector<std::int64_t> out;
        if (!doc.contains(key) || doc[key].is_null())
            return out;
        const json &v = doc[key];
        if (!v.is_array())
            return error(key, "expected an array of whole numbers, found " + kindOf(v));
        out.reserve(v.size());
        for (std::size_t i = 0; i < v.size(); ++i) {
            const std::string field = std::string(key) + "[" + std::to_string(i) + "]";
            if ((v[i].is_number_integer() && !v[i].is_number_unsigned() && v[i].get<std::int64_t>() < 0))
                return error(field, "position " + std::to_string(v[i].get<std::int64_t>()) + " is negative");
            auto n = wholeNumber(v[i], field, 0);
            if (!n)
                return n.error();
            out.push_back(*n);
        }
        return out;
    }

    // One entry of "layers": its facts and the file as written.
    Result<QkLayer> layerFacts(const json &o, const std::string &at, std::string &file) const
    {
        if (!o.is_object())
            return error(at, "expected an object, found " + kindOf(o));
        if (!o.contains("file") || !o["file"].is_string())
            return error(at + ".file",
                         o.contains("file") ? "expected a file name, found " + kindOf(o["file"]) : "missing");
        file = o["file"].get<std::string>();
        QkLayer l;
        for (auto [key, out] :
             {std::pair{"heads", &l.heads}, std::pair{"kvHeads", &l.kvHeads}, std::pair{"headDim", &l.headDim}}) {
            auto n = count(o, key, at);
            if (!n)
                return n.error();
            *out = *n;
        }
        if (l.heads % l.kvHeads != 0)
            return Error{shown + at + ": heads " + std::to_string(l.heads) + " is not a multiple of kvHeads " +
                         std::to_string(l.kvHeads)};
        if (!o.contains("scale"))
            return error(at + ".scale", "missing");
        if (!o["scale"].is_number() || !(o["scale"].get<double>() > 0))
            return error(at + ".scale", "expected a positive number, found " + kindOf(o["scale"]));
        l.scale = o["scale"].get<double>();
        if (!o.contains("causal"))
            return error(at + ".causal", "missing");
        if (!o["causal"].is_boolean())
            return error(at + ".causal", "expected true or false, found " + kindOf(o["causal"]));
        l.causal = o["causal"].get<bool>();
        if (o.contains("window") && !o["window"].is_null()) {
            auto w = wholeNumber(o["window"], at + ".window", 1);
            if (!w)
                return Error{w.message() + " (or null for none)"};
            l.window = *w;
        }
        if (o.contains("softcap") && !o["softcap"].is_null()) {
            if (!o["softcap"].is_number() || !(o["softcap"].get<double>() > 0))
                return error(at + ".softcap",
                             "expected a positive number (or null for none), found " + kindOf(o["softcap"]));
            l.softcap = o["softcap"].get<double>();
        }
        return l;
    }
};

// The first value of a mapped tensor that is not finite, named with its place in the tensor's
// shape ("k: NaN at [5, 1, 3]"). Reads the values where they lie; allocates nothing.
Status checkFiniteValues(const SafetensorsTensor &t)
{
    const std::int64_t n = t.elementCount();
    std::int64_t bad = -1;
    bool nan = false;
    if (t.dtype == "F32") {
        for (std::int64_t i = 0; i < n && bad < 0; ++i) {
            std::uint32_t bits;
            std::memcpy(&bits, t.data + 4 * i, 4);
            if ((bits & 0x7f800000u) == 0x7f800000u)
                bad = i, nan = (bits & 0x007fffffu) != 0;
        }
    } else {
        // F16: exponent 0x7c00, BF16: 0x7f80 (the upper half of a float32).
        const std::uint16_t exponent = t.dtype == "BF16" ? 0x7f80 : 0x7c00;
        const std::uint16_t mantissa = std::uint16_t(~exponent & 0x7fff);
        for (std::int64_t i = 0; i < n && bad < 0; ++i) {
            const std::uint16_t bits = std::uint16_t(t.data[2 * i] | (t.data[2 * i + 1] << 8));
            if ((bits & exponent) == exponent)
                bad = i, nan = (bits & mantissa) != 0;
        }
    }
    if (bad < 0)
        return Ok{};
    std::vector<std::int64_t> place(t.shape.size());
    for (std::size_t d = t.shape.size(); d-- > 0;) {
        place[d] = bad % t.shape[d];
        bad /= t.shape[d];
    }
    return Error{t.name + ": " + (nan ? "NaN" : "an infinity") + " at " + shapeText(place)};
}

} // namespace

// ---------------------------------------------------------------- reading

namespace {

struct LayerFile {
    QkLayer facts;     // q and k empty
    std::string shown; // the file as the index names it
    std::shared_ptr<const MappedFile> mapped;
    SafetensorsTensor q, k;
    std::optional<SafetensorsTensor> lse;
};

} // namespace

struct QkDump::State {
    std::string folder;
    std::vector<std::string> tokens, keyTokens;
    std::int64_t tq = 0, tk = 0;
    std::vector<LayerFile> layers;
    std::int64_t bytes = 0;

    // The layers read last, newest first.
    mutable std::mutex cacheMutex;
    mutable std::vector<std::pair<int, std::shared_ptr<const QkLayer>>> cache;
};

namespace {

// A tensor of `file` checked for dtype and shape; nullopt when optional and absent.
Result<std::optional<SafetensorsTensor>> tensorOf(const SafetensorsFile &file, const std::string &shown,
                                                  const char *name, bool required, bool floatOnly,
                                                  const std::vector<std::int64_t> &expected, const std::string &why)
{
    const SafetensorsTensor *t = file.find(name);
    if (!t) {
        if (required)
            return Error{shown + ": no tensor \"" + std::string(name) +
                         "\" (a layer file holds q [Tq, H, hd] and k "
                         "[Tk, KV, hd])"};
        return std::optional<SafetensorsTensor>();
    }
    const bool dtypeOk = floatOnly ? t->dtype == "F32" : (t->dtype == "F32" || t->dtype == "F16" || t->dtype == "BF16");
    if (!dtypeOk)
        return Error{shown + ": " + name + ": dtype " + printableText(t->dtype, 16) + " is not supported (" +
                     (floatOnly ? "F32" : "F32, F16 or BF16") + ")"};
    bool shapeOk = t->shape.size() == expected.size();
    for (std::size_t d = 0; shapeOk && d < expected.size(); ++d)
        shapeOk = expected[d] < 0 ? t->shape[d] >= 1 : t->shape[d] == expected[d];
    if (!shapeOk) {
        std::string want = "[";
        for (std::size_t d = 0; d < expected.size(); ++d)
            want += (d ? ", " : "") + (expected[d] < 0 ? std::string(d == 0 && name[0] == 'k' ? "Tk" : "Tq")
                                                       : std::to_string(expected[d]));
        return Error{shown + ": " + name + ": expected " + want + "] (" + why + "), found " + shapeText(t->shape)};
    }
    return std::optional<SafetensorsTensor>(*t);
}

// Opens and checks the file of layer `index`, whose facts the index gave.
Result<LayerFile> openLayerFile(const std::string &folder, const std::string &file, int index, QkLayer facts)
{
    const std::string at = "layers[" + std::to_string(index) + "].file";
    const std::string indexShown = std::string(QkDump::kIndexName) + ": " + at;
    if (file.empty() || file.find('\0') != std::string::npos)
        return Error{indexShown + ": expected a file name, found " + quotedText(file, 40)};
    if (fs::path(file).is_absolute())
        return Error{indexShown + ": expected a path relative to the dump's folder, found the absolute path " +
                     quotedText(file, 80)};
    // Where the path really leads is checked before anything is stat-ed or opened.
    if (!staysInFolder(folder, file))
        return Error{indexShown + ": " + quotedText(file, 80) +
                     " leads out of the dump's folder (a layer file "
                     "must lie in that folder or a folder below it)"};
    LayerFile layer;
    layer.shown = printableText(file, 120);
    const std::string path = (fs::path(folder) / file).string();
    struct stat st;
    if (::stat(path.c_str(), &st) != 0)
        return Error{layer.shown + ": missing (named by " + at + ")", ErrorKind::Io};
    if (!S_ISREG(st.st_mode))
        return Error{layer.shown + ": not a regular file (named by " + at + ")"};
    auto mapped = MappedFile::open(path);
    if (!mapped) {
        std::string reason = mapped.message();
        if (reason.starts_with(path + ": "))
            reason.erase(0, path.size() + 2);
        return Error{layer.shown + ": " + reason, mapped.kind()};
    }
    layer.mapped = *mapped;
    auto st2 = SafetensorsFile::parse(layer.mapped->data(), layer.mapped->size(), layer.mapped);
    if (!st2)
        return prefixedError(layer.shown + ": ", st2.error());
    const std::string heads = "heads " + std::to_string(facts.heads) + ", headDim " + std::to_string(facts.headDim) +
                              " of layers[" + std::to_string(index) + "]";
    const std::string kvHeads = "kvHeads " + std::to_string(facts.kvHeads) + ", headDim " +
                                std::to_string(facts.headDim) + " of layers[" + std::to_string(index) + "]";
    auto q = tensorOf(*st2, layer.shown, "q", true, false, {-1, facts.heads, facts.headDim}, heads);
    if (!q)
        return q.error();
    auto k = tensorOf(*st2, layer.shown, "k", true, false, {-1, facts.kvHeads, facts.headDim}, kvHeads);
    if (!k)
        return k.error();
    layer.q = **q;
    layer.k = **k;
    const std::int64_t tq = layer.q.shape[0];
    auto sinks = tensorOf(*st2, layer.shown, "sinks", false, true, {facts.heads}, "one per head");
    if (!sinks)
        return sinks.error();
    auto lse = tensorOf(*st2, layer.shown, "lse", false, true, {facts.heads, tq}, "heads by queries");
    if (!lse)
        return lse.error();
    layer.lse = *lse;
    for (const SafetensorsTensor *t : {&layer.q, &layer.k, *sinks ? &**sinks : nullptr, *lse ? &**lse : nullptr})
        if (t)
            if (Status s = checkFiniteValues(*t); !s)
                return prefixedError(layer.shown + ": ", s.error());
    if (*sinks) {
        VectorF values(facts.heads);
        std::memcpy(values.data(), (*sinks)->data, std::size_t(facts.heads) * 4);
        facts.sinks = std::move(values);
    }
    if (Status s = layer.mapped->checkUnchanged(); !s)
        return s.error();
    layer.facts = std::move(facts);
    return layer;
}

} // namespace

bool QkDump::isDump(const std::string &path)
{
    std::error_code ec;
    const fs::path p(path);
    if (p.filename() == kIndexName)
        return !fs::is_directory(p, ec);
    return fs::is_directory(p, ec) && fs::exists(p / kIndexName, ec);
}

Result<QkDump> QkDump::open(const std::string &path)
{
    std::error_code ec;
    fs::path folder(path);
    if (!fs::is_directory(folder, ec) && folder.filename() == kIndexName)
        folder = folder.has_parent_path() ? folder.parent_path() : fs::path(".");
    const fs::path indexPath = folder / kIndexName;
    if (!fs::exists(indexPath, ec))
        return Error{printableText(path, 200) + ": not an attnscope-qk dump (no " + kIndexName + " found)",
                     ErrorKind::Io};
    auto text = readInputFile(indexPath.string(), std::min<std::int64_t>(maxInputFileBytes(), std::int64_t(1) << 30));
    if (!text) {
        std::string reason = text.message();
        const std::string prefix = printableText(indexPath.string(), 200) + ": ";
        if (reason.starts_with(prefix))
            reason.erase(0, prefix.size());
        return Error{std::string(kIndexName) + ": " + reason, text.kind()};
    }
    const IndexReader r;
    auto parsed = parseJsonDocument(*text);
    if (!parsed)
        return prefixedError(r.shown, parsed.error());
    text->clear();
    text->shrink_to_fit();
    const json &doc = *parsed;
    if (!doc.is_object())
        return Error{r.shown + "expected a JSON object {\"format\": \"attnscope-qk\", ...}, found " + kindOf(doc)};
    if (!doc.contains("format"))
        return r.error("format", "missing (an attnscope-qk dump says \"format\": \"attnscope-qk\")");
    if (!doc["format"].is_string() || doc["format"].get<std::string>() != "attnscope-qk")
        return r.error("format", "expected \"attnscope-qk\", found " + kindOf(doc["format"]));
    if (!doc.contains("version"))
        return r.error("version", "missing");
    if (!doc["version"].is_number_integer() || doc["version"] != kVersion) {
        if (!doc["version"].is_number())
            return r.error("version", "expected a whole number, found " + kindOf(doc["version"]));
        return Error{r.shown + "version " + doc["version"].dump() + " is not supported (this AttnScope reads version " +
                         std::to_string(kVersion) + ")",
                     ErrorKind::Unsupported};
    }
    if (!doc.contains("layers") || !doc["layers"].is_array() || doc["layers"].empty())
        return r.error("layers", doc.contains("layers") ? "expected a non-empty array of layers, found " +
                                                              (doc["layers"].is_array() ? std::string("an empty array")
                                                                                        : kindOf(doc["layers"]))
                                                        : "missing");

    auto state = std::make_shared<State>();
    state->folder = folder.string();
    auto tokens = r.labels(doc, "tokens");
    if (!tokens)
        return tokens.error();
    auto keyTokens = r.labels(doc, "keyTokens");
    if (!keyTokens)
        return keyTokens.error();
    auto queryPositions = r.positions(doc, "queryPositions");
    if (!queryPositions)
        return queryPositions.error();
    auto keyPositions = r.positions(doc, "keyPositions");
    if (!keyPositions)
        return keyPositions.error();

    // Every layer's facts first (cheap), then the files.
    const json &layers = doc["layers"];
    std::vector<QkLayer> facts;
    std::vector<std::string> files;
    for (std::size_t l = 0; l < layers.size(); ++l) {
        std::string file;
        auto f = r.layerFacts(layers[l], "layers[" + std::to_string(l) + "]", file);
        if (!f)
            return f.error();
        facts.push_back(std::move(*f));
        files.push_back(std::move(file));
    }
    for (std::size_t l = 0; l < layers.size(); ++l) {
        auto layer = openLayerFile(state->folder, files[l], int(l), std::move(facts[l]));
        if (!layer)
            return layer.error();
        const std::int64_t tq = layer->q.shape[0], tk = layer->k.shape[0];
        if (l == 0) {
            state->tq = tq;
            state->tk = tk;
        } else if (tq != state->tq || tk != state->tk) {
            const bool queries = tq != state->tq;
            return Error{layer->shown + ": " + (queries ? "q" : "k") + ": " + std::to_string(queries ? tq : tk) +
                         (queries ? " queries" : " keys") + ", but " + state->layers.front().shown + " has " +
                         std::to_string(queries ? state->tq : state->tk) +
                         " (every layer has the same queries and keys)"};
        }
        state->bytes += std::int64_t(layer->mapped->size());
        state->layers.push_back(std::move(*layer));
    }

    // Labels and positions against the counts of the files.
    if (keyTokens->empty() && state->tq == state->tk)
        *keyTokens = *tokens;
    if (keyPositions->empty() && state->tq == state->tk)
        *keyPositions = *queryPositions;
    for (auto [key, size, expected, what] : {std::tuple{"tokens", tokens->size(), state->tq, "query"},
                                             std::tuple{"keyTokens", keyTokens->size(), state->tk, "key"},
                                             std::tuple{"queryPositions", queryPositions->size(), state->tq, "query"},
                                             std::tuple{"keyPositions", keyPositions->size(), state->tk, "key"}})
        if (size != 0 && std::int64_t(size) != expected)
            return r.error(key, "expected " + std::to_string(expected) + " (one per " + what +
                                    " row of the layer "
                                    "files), found " +
                                    std::to_string(size));
    for (LayerFile &layer : state->layers) {
        layer.facts.queryPositions = *queryPositions;
        layer.facts.keyPositions = *keyPositions;
    }
    state->tokens = std::move(*tokens);
    state->keyTokens = std::move(*keyTokens);

    QkDump dump;
    dump.m_state = std::move(state);
    return dump;
}

int QkDump::layers() const
{
    return int(m_state->layers.size());
}

std::int64_t QkDump::queries() const
{
    return m_state->tq;
}

std::int64_t QkDump::keys() const
{
    return m_state->tk;
}

QkLayer QkDump::facts(int layer) const
{
    return m_state->layers.at(std::size_t(layer)).facts;
}

Result<std::shared_ptr<const QkLayer>> QkDump::layer(int index) const
{
    if (index < 0 || index >= layers())
        return Error{"layer " + std::to_string(index) + " is outside the dump's " + std::to_string(layers()) +
                     " layers"};
    {
        std::lock_guard lock(m_state->cacheMutex);
        auto &cache = m_state->cache;
        for (auto it = cache.begin(); it != cache.end(); ++it)
            if (it->first == index) {
                std::rotate(cache.begin(), it, it + 1); // the most recently used first
                return cache.front().second;
            }
    }
    const LayerFile &file = m_state->layers[std::size_t(index)];
    const std::int64_t bytes = (file.q.elementCount() + file.k.elementCount()) * 4;
    if (Status s = checkFitsInMemory(bytes, file.shown + ": q and k in float32"); !s)
        return s.error();
    auto layer = std::make_shared<QkLayer>(file.facts);
    // The float32 conversions of model weights (F16, BF16), a layer's [T, heads, hd] being T rows.
    const auto toFloat = [&](const SafetensorsTensor &t) {
        return WeightMatrix::mapped(t.data, t.dtype, t.shape[0], t.shape[1] * t.shape[2], false, file.mapped).toFloat();
    };
    layer->q = toFloat(file.q);
    layer->k = toFloat(file.k);
    if (file.lse) {
        MatrixF lse(file.lse->shape[0], file.lse->shape[1]);
        std::memcpy(lse.data(), file.lse->data, std::size_t(lse.size()) * 4);
        layer->lse = std::move(lse);
    }
    if (Status s = file.mapped->checkUnchanged(); !s)
        return s.error();
    if (Status s = validateQkLayer(*layer); !s)
        return prefixedError(file.shown + ": ", s.error());
    std::shared_ptr<const QkLayer> result = std::move(layer);
    std::lock_guard lock(m_state->cacheMutex);
    auto &cache = m_state->cache;
    cache.insert(cache.begin(), {index, result});
    const std::size_t fit =
        std::size_t(std::max<std::int64_t>(1, memoryBudget() / 8 / std::max<std::int64_t>(bytes, 1)));
    while (cache.size() > std::min(kCachedLayers, fit))
        cache.pop_back();
    return result;
}

const std::string &QkDump::folder() const
{
    return m_state->folder;
}

const std::vector<std::string> &QkDump::tokens() const
{
    return m_state->tokens;
}

const std::vector<std::string> &QkDump::keyTokens() const
{
    return m_state->keyTokens;
}

std::string QkDump::dtype(int layer) const
{
    return m_state->layers.at(std::size_t(layer)).q.dtype;
}

std::int64_t QkDump::fileBytes() const
{
    return m_state->bytes;
}

Status QkDump::checkUnchanged() const
{
    for (const LayerFile &layer : m_state->layers)
        if (Status s = layer.mapped->checkUnchanged(); !s)
            return s;
    return Ok{};
}

// ---------------------------------------------------------------- writing

struct QkDumpWriter::State {
    std::string dir; // as given: messages name it
    fs::path target, staging;
    int stagingLock = -1; // held (flock) while the staging folder is this writer's
    std::vector<std::string> tokens, keyTokens;
    json layers = json::array();
    std::int64_t tq = 0, tk = 0;
    std::vector<std::int64_t> queryPositions, keyPositions;
    bool finished = false;
};

namespace {

// A folder that finish() may replace: none, an empty one or a dump. Anything else (a home folder
// named by mistake) is refused rather than swapped away.
Status checkReplaceable(const std::string &dir, const fs::path &target)
{
    std::error_code ec;
    const auto status = fs::symlink_status(target, ec);
    if (!fs::exists(status))
        return Ok{};
    if (!fs::is_directory(status))
        return Error{dir + ": exists and is not a folder (a dump is a folder)", ErrorKind::Io};
    if (fs::is_empty(target, ec) || fs::exists(target / QkDump::kIndexName, ec))
        return Ok{};
    return Error{dir + ": exists and is not an attnscope-qk dump (no " + std::string(QkDump::kIndexName) +
                     "); not replacing it",
                 ErrorKind::Io};
}

// The staging folders of a dump: `.NAME.partial-XXXXXX` beside it.
std::string stagingPrefix(const fs::path &target)
{
    std::string prefix(1, '.'); // appended, not `"." + name + ...`, which GCC 12 misreads (-Wrestrict)
    prefix += target.filename().string();
    prefix += ".partial-";
    return prefix;
}

// The layer file's bytes: a safetensors header, then q, k, sinks and lse as F32.
void writeLayerFile(const QkLayer &l, AtomicFileWriter &out)
{
    struct Part {
        const char *name;
        std::vector<std::int64_t> shape;
        const float *data;
        std::int64_t count;
    };
    std::vector<Part> parts = {{"q", {l.tq(), l.heads, l.headDim}, l.q.data(), std::int64_t(l.q.size())},
                               {"k", {l.tk(), l.kvHeads, l.headDim}, l.k.data(), std::int64_t(l.k.size())}};
    if (l.sinks)
        parts.push_back({"sinks", {l.heads}, l.sinks->data(), std::int64_t(l.sinks->size())});
    if (l.lse)
        parts.push_back({"lse", {l.heads, l.tq()}, l.lse->data(), std::int64_t(l.lse->size())});
    json header = json::object();
    std::int64_t offset = 0;
    for (const Part &p : parts) {
        header[p.name] = {{"dtype", "F32"}, {"shape", p.shape}, {"data_offsets", {offset, offset + p.count * 4}}};
        offset += p.count * 4;
    }
    header["__metadata__"] = {{"format", "attnscope-qk"}};
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' ');
    char length[8];
    for (int i = 0; i < 8; ++i)
        length[i] = char((std::uint64_t(text.size()) >> (8 * i)) & 0xff);
    out.write(length, 8);
    out.write(text);
    for (const Part &p : parts)
        out.write(reinterpret_cast<const char *>(p.data), std::size_t(p.count) * 4);
}

} // namespace

QkDumpWriter::QkDumpWriter(std::string dir, std::vector<std::string> tokens, std::vector<std::string> keyTokens)
    : m_state(std::make_unique<State>())
{
    m_state->dir = std::move(dir);
    std::error_code ec;
    m_state->target = fs::absolute(fs::path(m_state->dir), ec).lexically_normal();
    if (!m_state->target.has_filename())
        m_state->target = m_state->target.parent_path();
    m_state->tokens = std::move(tokens);
    m_state->keyTokens = std::move(keyTokens);
}

QkDumpWriter::~QkDumpWriter()
{
    if (!m_state->staging.empty() && !m_state->finished) {
        std::error_code ignored;
        fs::remove_all(m_state->staging, ignored);
    }
    if (m_state->stagingLock >= 0)
        ::close(m_state->stagingLock); // after the folder is removed or renamed
}

Status QkDumpWriter::addLayer(const QkLayer &layer)
{
    State &s = *m_state;
    if (s.finished)
        return Error{s.dir + ": the dump is already finished", ErrorKind::Internal};
    const std::string at = "layer " + std::to_string(s.layers.size());
    if (Status v = validateQkLayer(layer); !v)
        return prefixedError(at + ": ", v.error());
    if (s.layers.empty()) {
        if (!s.tokens.empty() && std::int64_t(s.tokens.size()) != layer.tq())
            return Error{"tokens: expected " + std::to_string(layer.tq()) + " (one per query), found " +
                         std::to_string(s.tokens.size())};
        if (!s.keyTokens.empty() && std::int64_t(s.keyTokens.size()) != layer.tk())
            return Error{"keyTokens: expected " + std::to_string(layer.tk()) + " (one per key), found " +
                         std::to_string(s.keyTokens.size())};
        s.tq = layer.tq();
        s.tk = layer.tk();
        s.queryPositions = layer.queryPositions;
        s.keyPositions = layer.keyPositions;
    } else if (layer.tq() != s.tq || layer.tk() != s.tk) {
        return Error{at + ": " + std::to_string(layer.tq()) + " queries and " + std::to_string(layer.tk()) +
                     " keys, but layer 0 has " + std::to_string(s.tq) + " and " + std::to_string(s.tk)};
    } else if (layer.queryPositions != s.queryPositions || layer.keyPositions != s.keyPositions) {
        return Error{at + ": positions differ from layer 0's (a dump has one set of positions)"};
    }
    if (s.staging.empty()) {
        if (Status r = checkReplaceable(s.dir, s.target); !r)
            return r;
        removeAbandonedStagingFolders(s.target.parent_path().string(), stagingPrefix(s.target));
        auto staging =
            createStagingFolder(s.target.parent_path().string(), stagingPrefix(s.target), s.dir, s.stagingLock);
        if (!staging)
            return staging.error();
        s.staging = *staging;
    }
    char name[32];
    std::snprintf(name, sizeof name, "layer-%03zu.safetensors", s.layers.size());
    AtomicFileWriter out((s.staging / name).string(), (fs::path(s.dir) / name).string());
    if (Status o = out.open(); !o)
        return o;
    writeLayerFile(layer, out);
    if (Status c = out.commit(); !c)
        return c;
    s.layers.push_back({{"file", name},
                        {"heads", layer.heads},
                        {"kvHeads", layer.kvHeads},
                        {"headDim", layer.headDim},
                        {"scale", layer.scale},
                        {"causal", layer.causal},
                        {"window", layer.window > 0 ? json(layer.window) : json(nullptr)},
                        {"softcap", layer.softcap ? json(*layer.softcap) : json(nullptr)}});
    return Ok{};
}

Status QkDumpWriter::finish()
{
    State &s = *m_state;
    if (s.finished)
        return Ok{};
    if (s.layers.empty())
        return Error{s.dir + ": no layers to write"};
    json index = {{"format", "attnscope-qk"}, {"version", kVersion}};
    if (!s.tokens.empty())
        index["tokens"] = s.tokens;
    if (!s.keyTokens.empty())
        index["keyTokens"] = s.keyTokens;
    if (!s.queryPositions.empty())
        index["queryPositions"] = s.queryPositions;
    if (!s.keyPositions.empty())
        index["keyPositions"] = s.keyPositions;
    index["layers"] = s.layers;
    {
        AtomicFileWriter out((s.staging / QkDump::kIndexName).string(),
                             (fs::path(s.dir) / QkDump::kIndexName).string());
        if (Status o = out.open(); !o)
            return o;
        // Labels that are not UTF-8 are written with U+FFFD rather than refused.
        out.write(index.dump(1, ' ', false, json::error_handler_t::replace));
        out.write("\n", 1);
        if (Status c = out.commit(); !c)
            return c;
    }
    if (Status r = checkReplaceable(s.dir, s.target); !r)
        return r;
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(s.target, ec))) {
        if (::rename(s.staging.c_str(), s.target.c_str()) != 0)
            return ioError(s.dir, "cannot create", errno);
    } else {
        // One step where the kernel can (renameat2 exchanges the two folders), so a reader sees
        // the old dump or the new one, never neither.
        if (::renameat2(AT_FDCWD, s.staging.c_str(), AT_FDCWD, s.target.c_str(), RENAME_EXCHANGE) != 0) {
            // A file system without the exchange: move the old dump aside, the new one in.
            const fs::path aside = s.staging.string() + ".old";
            if (::rename(s.target.c_str(), aside.c_str()) != 0)
                return ioError(s.dir, "cannot replace", errno);
            if (::rename(s.staging.c_str(), s.target.c_str()) != 0) {
                const int err = errno;
                ::rename(aside.c_str(), s.target.c_str());
                return ioError(s.dir, "cannot replace", err);
            }
            fs::remove_all(aside, ec);
        } else {
            fs::remove_all(s.staging, ec); // now the old dump
        }
    }
    s.finished = true;
    return Ok{};
}

} // namespace attnscope
