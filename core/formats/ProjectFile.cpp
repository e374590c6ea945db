#include "core/formats/ProjectFile.h"

#include "core/ErrorCode.h"
#include "core/attention/Validation.h"
#include "core/formats/BatchedProject.h"
#include "core/formats/ProjectReader.h"
#include "core/formats/ProjectReferences.h"
#include "core/io/FileIo.h"
#include "core/io/JsonDocument.h"
#include "core/io/MemoryLimits.h"
#include "core/io/UserText.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>

namespace attnscope {

using namespace projectjson;

namespace {

// A syntax error where the text spells NaN or Infinity gets a hint: Python's json.dump
// writes them, and the user should learn why the file is refused.
Error withNonNumberHint(Error error)
{
    std::string_view token;
    if (error.code == "json.syntax" && error.args.size() == 4) {
        token = error.args[3]; // the text read last
    } else {
        const std::string &message = error.message;
        // nlohmann ends its own message with "last read: '<the text up to the error>'".
        const auto at = message.rfind("last read: '");
        if (!message.starts_with("not valid JSON") || at == std::string::npos || !message.ends_with("'"))
            return error;
        token = std::string_view(message).substr(at + 12);
        token.remove_suffix(1);
    }
    size_t word = token.size();
    while (word > 0 && std::isalpha(static_cast<unsigned char>(token[word - 1])))
        --word;
    const std::string_view tail = token.substr(word);
    const bool nonNumber =
        !tail.empty() && (std::string_view("NaN").starts_with(tail) || std::string_view("Infinity").starts_with(tail));
    if (!nonNumber)
        return error;
    // The hinted message keeps an identity of its own, so it is translated whole.
    if (error.code == "json.syntax" || error.code == "json.invalid")
        return codedError(error.code == "json.syntax" ? "json.syntax.nonNumber" : "json.invalid.nonNumber",
                          std::move(error.args), error.kind);
    error.message += " (NaN and Infinity are not numbers in JSON; every value must be finite)";
    error.code.clear();
    return error;
}

// The parsed document keeps only what serializeProject() does not rewrite: the matrices and
// labels are replaced by null in place (their key order stays), so a large project is not
// held twice.
void dropRewrittenFields(json &root)
{
    for (const char *side : {"query", "key", "value"})
        if (root.contains(side) && root[side].is_object())
            for (const char *field : {"x", "tokens"})
                if (root[side].contains(field))
                    root[side][field] = nullptr;
    if (root.contains("weights") && root["weights"].is_object())
        for (const char *field : {"q", "k", "v", "o", "qBias", "kBias", "vBias", "oBias"})
            if (root["weights"].contains(field))
                root["weights"][field] = nullptr;
    if (root.contains("mask") && root["mask"].is_object())
        for (const char *field : {"allowed", "keyPadding"})
            if (root["mask"].contains(field))
                root["mask"][field] = nullptr;
}

json floatValue(float f)
{
    // Shortest decimal that reads back as the same float, then stored as the double of that
    // decimal so the JSON writer prints it the same short way.
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof buf, f);
    double d = 0.0;
    std::from_chars(buf, r.ptr, d);
    return d;
}

} // namespace

json projectjson::matrixValue(const MatrixF &m)
{
    json rows = json::array();
    for (Eigen::Index r = 0; r < m.rows(); ++r) {
        json row = json::array();
        for (Eigen::Index c = 0; c < m.cols(); ++c)
            row.push_back(floatValue(m(r, c)));
        rows.push_back(std::move(row));
    }
    return rows;
}

namespace {

json vectorValue(const std::optional<VectorF> &v)
{
    json values = json::array();
    for (Eigen::Index i = 0; i < v->size(); ++i)
        values.push_back(floatValue((*v)[i]));
    return values;
}

// json::dump(2) puts every number on its own line; a matrix reads far better with one row
// per line, so arrays that hold only numbers, booleans or null are folded onto one line.
std::string compactNumberArrays(const std::string &text)
{
    std::string out;
    out.reserve(text.size());
    size_t i = 0;
    while (i < text.size()) {
        const char c = text[i];
        if (c == '"') { // copy strings verbatim
            size_t j = i + 1;
            while (j < text.size() && text[j] != '"')
                j += text[j] == '\\' ? 2 : 1;
            out.append(text, i, j + 1 - i);
            i = j + 1;
            continue;
        }
        if (c == '[') {
            const size_t close = text.find_first_of("[]{\"", i + 1);
            if (close != std::string::npos && text[close] == ']') {
                out += '[';
                bool pendingSpace = false;
                for (size_t j = i + 1; j < close; ++j) {
                    const char d = text[j];
                    if (d == ' ' || d == '\n') {
                        pendingSpace = true;
                        continue;
                    }
                    if (pendingSpace && out.back() == ',')
                        out += ' ';
                    pendingSpace = false;
                    out += d;
                }
                out += ']';
                i = close + 1;
                continue;
            }
        }
        out += c;
        ++i;
    }
    return out;
}

// kvHeads, rope, softcap, sinks and the q/k norms (design.md, "Modern attention"); each absent
// when unused.
void writeModernAttention(const AttentionProblem &p, json &root)
{
    const AttentionSpec &spec = p.spec;
    if (spec.kvHeads > 0 && spec.kvHeads != spec.heads)
        root["kvHeads"] = spec.kvHeads;
    else
        root.erase("kvHeads");
    if (spec.rope) {
        json rope = root.contains("rope") && root["rope"].is_object() ? root["rope"] : json::object();
        rope["base"] = spec.rope->base;
        for (const auto &[key, positions] : {std::pair{"queryPositions", &spec.rope->queryPositions},
                                             std::pair{"keyPositions", &spec.rope->keyPositions}}) {
            if (positions->empty())
                rope.erase(key);
            else
                rope[key] = *positions;
        }
        if (spec.rope->frequencies.empty())
            rope.erase("frequencies");
        else
            rope["frequencies"] = spec.rope->frequencies;
        if (spec.rope->scaling == 1.0)
            rope.erase("scaling");
        else
            rope["scaling"] = spec.rope->scaling;
        root["rope"] = std::move(rope);
    } else {
        root.erase("rope");
    }
    if (spec.softcap)
        root["softcap"] = *spec.softcap;
    else
        root.erase("softcap");
    if (p.weights.sinks)
        root["sinks"] = vectorValue(p.weights.sinks);
    else
        root.erase("sinks");
    for (const auto &[key, norm] : {std::pair{"qNorm", &p.weights.qNorm}, std::pair{"kNorm", &p.weights.kNorm}}) {
        if (*norm)
            root[key] = vectorValue(*norm);
        else
            root.erase(key);
    }
    if (p.weights.qNorm || p.weights.kNorm)
        root["qkNormEps"] = spec.qkNormEps;
    else
        root.erase("qkNormEps");
}

} // namespace

namespace {

Result<Project> parseDocument(json &root, const ProjectReadOptions &options)
{
    if (!root.is_object())
        return expected("file", "a JSON object with \"format\": \"attnscope\"", root);
    if (!root.contains("format") || root["format"] != "attnscope")
        return codedError("project.format",
                          {root.contains("format") ? typeName(root["format"]) : std::string("nothing")});
    if (!root.contains("version"))
        return codedError("project.missing", {"version", "1"});
    if (!root["version"].is_number() || root["version"].get<double>() != 1)
        return codedError(root["version"].is_number() && root["version"].get<double>() > 1 ? "project.version.newer"
                                                                                           : "project.version",
                          {root["version"].dump()});

    Project project;
    Reader in;
    in.folder = options.folder;
    in.references = &project.npyReferences;
    project.folder = options.folder;
    const ProblemLimits limits;
    AttentionSpec &spec = project.problem.spec;

    if (root.contains("title") && !root["title"].is_null()) {
        if (!root["title"].is_string())
            return expected("title", "a string", root["title"]);
        project.title = root["title"].get<std::string>();
    }

    if (!root.contains("mode"))
        return codedError("project.missing", {"mode", "\"self\" or \"cross\""});
    if (root["mode"] == "self")
        spec.mode = AttentionMode::Self;
    else if (root["mode"] == "cross")
        spec.mode = AttentionMode::Cross;
    else
        return expected("mode", "\"self\" or \"cross\"", root["mode"]);

    if (!in.readInt(root, "heads", limits.maxHeads, spec.heads) ||
        !in.readInt(root, "headDimQK", limits.maxHeadDim, spec.headDimQK) ||
        !in.readInt(root, "headDimV", limits.maxHeadDim, spec.headDimV))
        return *in.error;

    if (root.contains("scale") && !root["scale"].is_null()) {
        const json &s = root["scale"];
        if (s == "inv_sqrt_dk") {
            spec.scaleMode = ScaleMode::InvSqrtDk;
        } else if (s == "none") {
            spec.scaleMode = ScaleMode::None;
        } else if (s.is_object() && s.contains("value")) {
            if (!s["value"].is_number() || !std::isfinite(s["value"].get<double>()))
                return expected("scale.value", "a finite number", s["value"]);
            if (std::abs(s["value"].get<double>()) > double(std::numeric_limits<float>::max()))
                return codedError("project.float32", {"scale.value", s["value"].dump()});
            spec.scaleMode = ScaleMode::Custom;
            spec.scaleValue = s["value"].get<double>();
        } else {
            return expected("scale", "\"inv_sqrt_dk\", \"none\" or {\"value\": number}", s);
        }
    }
    if (root.contains("maskFill") && !root["maskFill"].is_null()) {
        if (root["maskFill"] == "-inf")
            spec.maskFill = MaskFill::NegInf;
        else if (root["maskFill"] == "-1e9")
            spec.maskFill = MaskFill::NegLarge;
        else
            return expected("maskFill", "\"-inf\" or \"-1e9\"", root["maskFill"]);
    }

    AttentionProblem &p = project.problem;
    // The inputs are read with the mask (below), which may hold a batch's key padding rows.

    if (!root.contains("weights"))
        return codedError("project.missing", {"weights", "an object with q, k, v and o"});
    const json &w = root["weights"];
    if (!w.is_object())
        return expected("weights", "an object with q, k, v and o", w);
    for (const char *key : {"q", "k", "v"})
        if (!w.contains(key))
            return codedError("project.missing", {"weights." + std::string(key), "a matrix"});
    if (!in.readMatrix(w["q"], "weights.q", p.weights.q) || !in.readMatrix(w["k"], "weights.k", p.weights.k) ||
        !in.readMatrix(w["v"], "weights.v", p.weights.v))
        return *in.error;
    if (w.contains("o") && !w["o"].is_null()) {
        MatrixF o;
        if (!in.readMatrix(w["o"], "weights.o", o))
            return *in.error;
        p.weights.o = std::move(o);
    }
    if (!in.readVector(w, "qBias", "weights.qBias", p.weights.qBias) ||
        !in.readVector(w, "kBias", "weights.kBias", p.weights.kBias) ||
        !in.readVector(w, "vBias", "weights.vBias", p.weights.vBias) ||
        !in.readVector(w, "oBias", "weights.oBias", p.weights.oBias))
        return *in.error;

    if (!in.readMask(root, p.mask) || !in.readModernAttention(root, p) || !readProjectInputs(in, root, project))
        return *in.error;

    const ProblemLimits checks = options.checkTraceSize ? ProblemLimits::forThisMachine() : ProblemLimits{};
    if (Status s = validateProblem(p, checks); !s)
        return s.error();
    if (Status s = validateBatch(project, checks); !s)
        return s.error();
    dropRewrittenFields(root);
    project.extra = std::move(root);
    return project;
}

} // namespace

Result<Project> parseProject(std::string_view text, const ProjectReadOptions &options)
{
    // Each parsed value takes about 16 bytes, plus what the arrays reserve ahead.
    const JsonLimits limits{64, std::max<std::int64_t>(1 << 20, memoryBudget() / 64)};
    try {
        auto root = parseJsonDocument(text, limits);
        if (!root)
            return withNonNumberHint(root.error());
        return parseDocument(*root, options);
    } catch (const std::bad_alloc &) {
        return Error{"file: out of memory while reading the project", ErrorKind::OutOfMemory};
    } catch (const nlohmann::json::exception &e) {
        // The readers check types before every access; this is the net under them.
        return Error{"file: " + printableText(e.what(), 200), ErrorKind::Internal};
    }
}

Result<Project> readProjectFile(const std::string &path, const ProjectReadOptions &options)
{
    auto text = readInputFile(path, maxInputFileBytes());
    if (!text)
        return text.error(); // the message starts with the path
    ProjectReadOptions withFolder = options;
    withFolder.folder = std::filesystem::absolute(std::filesystem::path(path)).parent_path().string();
    auto project = parseProject(*text, withFolder);
    if (!project)
        return prefixedError(printableText(path, 200) + ": ", project.error());
    return project;
}

std::string serializeProject(const Project &project, const std::string &saveFolder)
{
    return serializeProject(project, [&](const std::string &, const NpyReference &reference) {
        return std::optional<std::string>(rebasedReferencePath(reference.path, project.folder, saveFolder));
    });
}

std::string serializeProject(const Project &project, const ReferenceWriter &writeReference)
{
    // A matrix still equal to what its reference held is written as a reference, when
    // writeReference gives a path for it.
    const ReferenceLookup reference = [&](const std::string &field, const MatrixF &m,
                                          Eigen::Index sequences) -> std::optional<json> {
        const auto it = project.npyReferences.find(field);
        if (it == project.npyReferences.end() || it->second.rows != m.rows() || it->second.cols != m.cols() ||
            it->second.sequences != sequences || it->second.fingerprint != matrixFingerprint(m))
            return std::nullopt;
        auto path = writeReference(field, it->second);
        if (!path)
            return std::nullopt;
        return json{{"npy", std::move(*path)}};
    };
    auto matrixOrReference = [&](const char *field, const MatrixF &m) {
        return reference(field, m, 0).value_or(matrixValue(m));
    };
    json root = project.extra.is_object() ? project.extra : json::object();
    const AttentionProblem &p = project.problem;
    const AttentionSpec &spec = p.spec;
    const bool cross = spec.mode == AttentionMode::Cross;

    root["format"] = "attnscope";
    root["version"] = 1;
    if (!project.title.empty())
        root["title"] = project.title;
    else
        root.erase("title");
    root["mode"] = cross ? "cross" : "self";
    root["heads"] = spec.heads;
    root["headDimQK"] = spec.headDimQK;
    root["headDimV"] = spec.headDimV;
    switch (spec.scaleMode) {
    case ScaleMode::InvSqrtDk:
        root["scale"] = "inv_sqrt_dk";
        break;
    case ScaleMode::None:
        root["scale"] = "none";
        break;
    case ScaleMode::Custom:
        root["scale"] = json{{"value", spec.scaleValue}};
        break;
    }
    root["maskFill"] = spec.maskFill == MaskFill::NegLarge ? "-1e9" : "-inf";
    writeModernAttention(p, root);

    writeProjectInputs(project, root, reference);

    json w = root.value("weights", json::object());
    if (!w.is_object())
        w = json::object();
    w["q"] = matrixOrReference("weights.q", p.weights.q);
    w["k"] = matrixOrReference("weights.k", p.weights.k);
    w["v"] = matrixOrReference("weights.v", p.weights.v);
    w["o"] = p.weights.o ? matrixOrReference("weights.o", *p.weights.o) : json(nullptr);
    const std::pair<const char *, const std::optional<VectorF> *> biases[] = {{"qBias", &p.weights.qBias},
                                                                              {"kBias", &p.weights.kBias},
                                                                              {"vBias", &p.weights.vBias},
                                                                              {"oBias", &p.weights.oBias}};
    for (const auto &[key, bias] : biases) {
        if (*bias)
            w[key] = vectorValue(*bias);
        else
            w.erase(key);
    }
    root["weights"] = std::move(w);

    json mask = root.value("mask", json::object());
    if (!mask.is_object())
        mask = json::object();
    mask["causal"] = p.mask.causal;
    if (p.mask.window > 0)
        mask["window"] = p.mask.window;
    else
        mask.erase("window");
    if (!p.mask.keyPadding.empty())
        mask["keyPadding"] = p.mask.keyPadding;
    else
        mask.erase("keyPadding");
    std::optional<json> allowedReference;
    if (p.mask.allowed)
        allowedReference = reference("mask.allowed", p.mask.allowed->cast<float>(), 0);
    if (allowedReference) {
        mask["allowed"] = std::move(*allowedReference);
    } else if (p.mask.allowed) {
        json rows = json::array();
        for (Eigen::Index r = 0; r < p.mask.allowed->rows(); ++r) {
            json row = json::array();
            for (Eigen::Index c = 0; c < p.mask.allowed->cols(); ++c)
                row.push_back(int((*p.mask.allowed)(r, c)));
            rows.push_back(std::move(row));
        }
        mask["allowed"] = std::move(rows);
    } else {
        mask.erase("allowed");
    }
    if (auto rows = batchKeyPadding(project))
        mask["keyPadding"] = std::move(*rows);
    root["mask"] = std::move(mask);
    return compactNumberArrays(root.dump(2)) + "\n";
}

} // namespace attnscope
