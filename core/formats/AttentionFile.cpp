#include "core/formats/AttentionFile.h"

#include "core/formats/QkDump.h"

#include "core/ErrorCode.h"
#include "core/formats/Npy.h"
#include "core/formats/Safetensors.h"
#include "core/formats/ZipReader.h"
#include "core/io/FileIo.h"
#include "core/io/JsonDocument.h"
#include "core/io/MappedFile.h"
#include "core/io/MemoryLimits.h"
#include "core/io/UserText.h"

#include <Eigen/Core>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>

namespace attnscope {

namespace {

// An array found in a file, before it becomes an attention set.
struct RawArray {
    std::string dtype; // "float16", "bfloat16", "float32", "float64"
    int elementSize = 0;
    std::vector<std::int64_t> shape;
    const unsigned char *data = nullptr;
    std::shared_ptr<const void> keepAlive;
    bool mapped = false;
};

std::string shapeText(const std::vector<std::int64_t> &shape)
{
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i)
        s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

bool endsWith(const std::string &s, const std::string &suffix)
{
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Elements of a shape, or -1 when the product passes int64.
std::int64_t elementCount(const std::vector<std::int64_t> &shape)
{
    std::int64_t n = 1;
    for (auto d : shape) {
        if (d != 0 && n > std::numeric_limits<std::int64_t>::max() / d)
            return -1;
        n *= d;
    }
    return n;
}

Result<RawArray> fromNpy(std::string_view bytes, std::shared_ptr<const void> keepAlive, bool mapped)
{
    auto header = parseNpyHeader(bytes);
    if (!header)
        return header.error();
    RawArray a;
    if (header->descr == "<f2")
        a.dtype = "float16", a.elementSize = 2;
    else if (header->descr == "<f4")
        a.dtype = "float32", a.elementSize = 4;
    else if (header->descr == "<f8")
        a.dtype = "float64", a.elementSize = 8;
    else
        return codedError("attention.dtype", {quotedText(header->descr, 16)});
    a.shape = header->shape;
    const std::int64_t count = elementCount(a.shape);
    const std::uint64_t present = bytes.size() - header->dataOffset;
    // The byte count can overflow even where the element count does not: say "more" then.
    const bool countable =
        count >= 0 && std::uint64_t(count) <= std::uint64_t(INT64_MAX) / std::uint64_t(a.elementSize);
    const std::uint64_t needed = countable ? std::uint64_t(count) * std::uint64_t(a.elementSize) : 0;
    if (!countable || needed != present)
        return Error{"data: the shape " + shapeText(a.shape) + " of " + a.dtype + " needs " +
                     (countable ? std::to_string(needed) : std::string("more")) + " bytes from offset " +
                     std::to_string(header->dataOffset) + ", the file has " + std::to_string(present) +
                     (!countable || needed > present ? " (truncated)" : "")};
    a.data = reinterpret_cast<const unsigned char *>(bytes.data()) + header->dataOffset;
    a.keepAlive = std::move(keepAlive);
    a.mapped = mapped;
    return a;
}

Result<RawArray> readNpz(std::string_view zip, const std::shared_ptr<const void> &keepAlive)
{
    auto members = listZipMembers(zip);
    if (!members)
        return members.error();
    const ZipMember *chosen = nullptr;
    for (const auto &m : *members)
        if (m.name == "attentions.npy" || m.name == "attentions")
            chosen = &m;
    if (!chosen && members->size() == 1)
        chosen = &members->front();
    if (!chosen) {
        std::string names;
        for (const auto &m : *members)
            names += (names.empty() ? "" : ", ") + quotedText(m.name, 30);
        return codedError("attention.noArray", {std::to_string(members->size()), printableText(names, 120)});
    }
    if (chosen->method == 0) {
        auto bytes = zipMemberBytes(zip, *chosen);
        if (!bytes)
            return bytes.error();
        auto a = fromNpy(*bytes, keepAlive, true);
        if (!a)
            return prefixedError(quotedText(chosen->name) + ": ", a.error());
        return a;
    }
    auto content = zipMemberContent(zip, *chosen, std::uint64_t(memoryBudget()));
    if (!content)
        return content.error();
    auto owned = std::make_shared<const std::string>(std::move(*content));
    auto a = fromNpy(*owned, owned, false);
    if (!a)
        return prefixedError(quotedText(chosen->name) + ": ", a.error());
    return a;
}

Result<RawArray> readSafetensors(std::string_view bytes, std::shared_ptr<const void> keepAlive,
                                 std::vector<std::string> *tokens, std::vector<std::string> *keyTokens,
                                 std::string *tokensFrom)
{
    auto file = SafetensorsFile::parse(reinterpret_cast<const unsigned char *>(bytes.data()), bytes.size(),
                                       std::move(keepAlive));
    if (!file)
        return file.error();
    const SafetensorsTensor *t = file->find("attentions");
    if (!t && file->tensors().size() == 1)
        t = &file->tensors().front();
    if (!t)
        return codedError("safetensors.noAttentions", {std::to_string(file->tensors().size())});
    RawArray a;
    if (t->dtype == "F16")
        a.dtype = "float16";
    else if (t->dtype == "BF16")
        a.dtype = "bfloat16";
    else if (t->dtype == "F32")
        a.dtype = "float32";
    else if (t->dtype == "F64")
        a.dtype = "float64";
    else
        return codedError("safetensors.attentionDtype", {quotedText(t->name), quotedText(t->dtype, 16)});
    a.elementSize = t->elementSize;
    a.shape = t->shape;
    a.data = t->data;
    a.keepAlive = file->keepAlive();
    a.mapped = true;
    // Labels from the metadata: JSON lists written as strings.
    for (const auto &[key, out] : {std::pair{"tokens", tokens}, std::pair{"keyTokens", keyTokens}}) {
        const auto it = file->metadata().find(key);
        if (it == file->metadata().end())
            continue;
        auto list = parseJsonDocument(it->second);
        if (!list || !list->is_array())
            return codedError("safetensors.metadata.labels", {key});
        for (const auto &item : *list) {
            if (!item.is_string())
                return codedError("safetensors.metadata.labels", {key});
            out->push_back(item.get<std::string>());
        }
        *tokensFrom = "__metadata__";
    }
    return a;
}

// The sidecar NAME.tokens.json beside NAME.npy (or .npz, .safetensors), if there is one.
Status readSidecar(const std::string &path, std::vector<std::string> &tokens, std::vector<std::string> &keyTokens,
                   std::string &tokensFrom)
{
    std::string stem = path;
    for (const char *suffix : {".npy", ".npz", ".safetensors"})
        if (endsWith(stem, suffix)) {
            stem.resize(stem.size() - std::strlen(suffix));
            break;
        }
    const std::string sidecar = stem + ".tokens.json";
    // Messages name the sidecar by its file name; the caller puts the attention file first.
    const std::string shown = std::filesystem::path(sidecar).filename().string();
    std::error_code ec;
    if (!std::filesystem::exists(sidecar, ec))
        return Ok{}; // unlabelled
    auto text = readInputFile(sidecar, std::min<std::int64_t>(maxInputFileBytes(), 256 << 20));
    if (!text)
        return Error{shown + ": " + text.message().substr(std::min(text.message().size(), sidecar.size() + 2)),
                     text.kind()};
    auto doc = parseJsonDocument(*text);
    if (!doc)
        return Error{shown + ": " + doc.message(), doc.kind()};
    if (!doc->is_object())
        return Error{sidecar + ": expected {\"tokens\": [...], \"keyTokens\": [...]}"};
    for (const auto &[key, out] : {std::pair{"tokens", &tokens}, std::pair{"keyTokens", &keyTokens}}) {
        if (!doc->contains(key))
            continue;
        const auto &list = (*doc)[key];
        if (!list.is_array())
            return Error{shown + ": " + key + ": expected a list of strings"};
        out->clear();
        for (std::size_t i = 0; i < list.size(); ++i) {
            if (!list[i].is_string())
                return Error{shown + ": " + key + "[" + std::to_string(i) + "]: expected a string"};
            out->push_back(list[i].get<std::string>());
        }
    }
    tokensFrom = sidecar;
    return Ok{};
}

// Element n of an array of that shape as "[l, h, i, j]".
std::string indexText(std::int64_t n, const std::vector<std::int64_t> &shape)
{
    std::vector<std::int64_t> index(shape.size());
    for (std::size_t d = shape.size(); d-- > 0;) {
        index[d] = n % shape[d];
        n /= shape[d];
    }
    return shapeText(index);
}

// The first value that is not finite, as "[l, h, i, j] is NaN", or empty.
template <typename Read>
std::string firstNonFinite(std::int64_t count, const std::vector<std::int64_t> &shape, Read read)
{
    for (std::int64_t n = 0; n < count; ++n) {
        const float v = read(n);
        if (!std::isfinite(v))
            return indexText(n, shape) + " is " + (std::isnan(v) ? "NaN" : "infinite");
    }
    return {};
}

Result<AttentionSet> toSet(RawArray a)
{
    if (a.shape.size() < 2 || a.shape.size() > 4)
        return codedError("attention.rank", {shapeText(a.shape)});
    std::vector<std::int64_t> s = a.shape;
    while (s.size() < 4)
        s.insert(s.begin(), 1);
    for (auto d : s)
        if (d < 1)
            return codedError("attention.emptyAxis", {shapeText(a.shape)});
    if (s[0] > 1 << 16 || s[1] > 1 << 16)
        return Error{"shape " + shapeText(a.shape) + ": more layers or heads than supported (65536)"};
    const std::int64_t count = elementCount(s);

    const auto readFloat = [&](std::int64_t n) {
        float v;
        std::memcpy(&v, a.data + 4 * n, 4);
        return v;
    };
    std::string bad;
    if (a.dtype == "float16") {
        // Inf and NaN are the halves whose exponent bits are all set: an integer test finds
        // them without converting 36 million values.
        for (std::int64_t n = 0; n < count; ++n) {
            std::uint16_t bits;
            std::memcpy(&bits, a.data + 2 * n, 2);
            if ((bits & 0x7c00) == 0x7c00) {
                bad = indexText(n, a.shape) + ((bits & 0x03ff) ? " is NaN" : " is infinite");
                break;
            }
        }
    } else if (a.dtype == "float32") {
        bad = firstNonFinite(count, a.shape, readFloat);
    }
    if (!bad.empty())
        return codedError("attention.nonFinite", {bad});

    if (a.dtype == "float16" || a.dtype == "float32")
        return AttentionSet::fromContiguous(
            a.keepAlive, a.data, a.dtype == "float16" ? AttentionStorage::Float16 : AttentionStorage::Float32, 1,
            int(s[0]), int(s[1]), s[2], s[3]);

    // float64 and bfloat16 become float32: one copy at most, half or twice the file's size.
    if (Status fits = checkFitsInMemory(count * 4, "the attention values as float32"); !fits)
        return fits.error();
    std::vector<float> values(static_cast<std::size_t>(count));
    for (std::int64_t n = 0; n < count; ++n) {
        if (a.dtype == "float64") {
            double d;
            std::memcpy(&d, a.data + 8 * n, 8);
            values[std::size_t(n)] = float(d);
            if (!std::isfinite(d) || std::abs(d) > double(std::numeric_limits<float>::max()))
                return Error{"value " + indexText(n, a.shape) +
                             (std::isnan(d) ? " is NaN" : " is not a finite float32 number") +
                             " (attention weights must be finite numbers)"};
        } else {
            std::uint16_t bits;
            std::memcpy(&bits, a.data + 2 * n, 2);
            const std::uint32_t wide = std::uint32_t(bits) << 16;
            float f;
            std::memcpy(&f, &wide, 4);
            values[std::size_t(n)] = f;
        }
    }
    if (a.dtype == "bfloat16") {
        bad = firstNonFinite(count, a.shape, [&](std::int64_t n) { return values[std::size_t(n)]; });
        if (!bad.empty())
            return codedError("attention.nonFinite", {bad});
    }
    return AttentionSet::fromFloats(std::move(values), 1, int(s[0]), int(s[1]), s[2], s[3]);
}

} // namespace

bool isAttentionFilePath(const std::string &path)
{
    return endsWith(path, ".npy") || endsWith(path, ".npz") || endsWith(path, ".safetensors");
}

namespace {

struct Parsed {
    AttentionSet set;
    std::vector<std::string> tokens, keyTokens;
    std::string tokensFrom;
};

// The container is the file's suffix when it has one of ours, else it is told by the first
// bytes: NumPy's magic, a ZIP header, else safetensors.
Result<Parsed> parseBytes(std::string_view bytes, const std::shared_ptr<const void> &keepAlive, AttentionFileInfo *info,
                          const std::string &path = {})
{
    Parsed parsed;
    std::string container;
    Result<RawArray> raw = Error{""};
    const bool npy = endsWith(path, ".npy"), npz = endsWith(path, ".npz"), st = endsWith(path, ".safetensors");
    const bool byMagic = !npy && !npz && !st;
    if (npy || (byMagic && bytes.substr(0, 6) == std::string_view("\x93NUMPY", 6))) {
        container = "npy";
        raw = fromNpy(bytes, keepAlive, true);
    } else if (npz || (byMagic && (bytes.substr(0, 4) == std::string_view("PK\x03\x04", 4) ||
                                   bytes.substr(0, 4) == std::string_view("PK\x05\x06", 4)))) {
        container = "npz";
        raw = readNpz(bytes, keepAlive);
    } else {
        container = "safetensors";
        raw = readSafetensors(bytes, keepAlive, &parsed.tokens, &parsed.keyTokens, &parsed.tokensFrom);
    }
    if (!raw)
        return raw.error();
    if (info) {
        info->container = container;
        info->dtype = raw->dtype;
        info->shape = raw->shape;
        info->mapped = raw->mapped && (raw->dtype == "float16" || raw->dtype == "float32");
    }
    const std::string dtype = raw->dtype;
    auto set = toSet(std::move(*raw));
    if (!set)
        return set.error();
    parsed.set = std::move(*set);
    if (info)
        info->rows = checkRowSums(parsed.set, rowSumTolerance(dtype, parsed.set.keys()));
    return parsed;
}

// Labels given by the file or its sidecar, checked against the shape.
Status applyTokens(Parsed &p)
{
    if (!p.tokens.empty() && p.keyTokens.empty() && p.set.queries() == p.set.keys())
        p.keyTokens = p.tokens;
    if (Status s = p.set.setTokens(std::move(p.tokens), std::move(p.keyTokens)); !s)
        return Error{(p.tokensFrom.empty()
                          ? std::string()
                          : printableText(std::filesystem::path(p.tokensFrom).filename().string(), 80) + ": ") +
                     s.message()};
    return Ok{};
}

} // namespace

Result<AttentionSet> parseAttentionBytes(std::string_view bytes, std::shared_ptr<const void> keepAlive,
                                         AttentionFileInfo *info)
{
    auto parsed = parseBytes(bytes, keepAlive, info);
    if (!parsed)
        return parsed.error();
    if (Status s = applyTokens(*parsed); !s)
        return s.error();
    if (info)
        info->tokensFrom = parsed->tokensFrom;
    return std::move(parsed->set);
}

Result<AttentionSet> readAttentionFile(const std::string &path, AttentionFileInfo *info)
{
    auto file = MappedFile::open(path);
    if (!file)
        return file.error();
    AttentionFileInfo read;
    auto parsed = parseBytes((*file)->bytes(), *file, &read, path);
    // A parse that ran into a file being rewritten read zeros (or a mix of two files): say so
    // rather than what those bytes seemed to be.
    if (Status s = (*file)->checkUnchanged(); !s)
        return s.error();
    if (!parsed)
        return prefixedError(path + ": ", parsed.error());
    if (read.mapped)
        parsed->set.setSourceFile(*file);
    if (parsed->tokens.empty())
        if (Status s = readSidecar(path, parsed->tokens, parsed->keyTokens, parsed->tokensFrom); !s)
            return prefixedError(path + ": ", s.error());
    if (Status s = applyTokens(*parsed); !s)
        return prefixedError(path + ": ", s.error());
    read.tokensFrom = parsed->tokensFrom;
    if (info)
        *info = std::move(read);
    return std::move(parsed->set);
}

Result<AttentionSet> readQkDumpSet(const std::string &path, AttentionFileInfo *info)
{
    auto dump = QkDump::open(path);
    if (!dump)
        return dump.error();
    auto source = std::make_shared<const QkDump>(std::move(*dump));
    auto set = AttentionSet::fromQk(source);
    if (!set)
        return Error{printableText(path, 200) + ": " + set.message(), set.kind()};
    if (Status s = set->setTokens(source->tokens(), source->keyTokens()); !s)
        return s.error();
    if (info) {
        *info = AttentionFileInfo{};
        info->container = "attnscope-qk";
        info->dtype = source->dtype(0);
        info->shape = {set->layers(), set->heads(), set->queries(), set->keys()};
        info->mapped = true;
        info->tokensFrom = source->tokens().empty() ? "" : QkDump::kIndexName;
    }
    return set;
}

} // namespace attnscope
