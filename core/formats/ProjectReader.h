#pragma once

#include "core/ErrorCode.h"
#include "core/Result.h"
#include "core/attention/AttentionProblem.h"
#include "core/formats/ProjectFile.h"
#include "core/formats/ProjectReferences.h"
#include "core/io/UserText.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace attnscope::projectjson {

// The field readers of core/formats/ProjectFile.cpp, shared with core/formats/BatchedProject.cpp (which reads
// the batched forms of the same fields). Internal to core: not an interface for other layers.

// ordered_json keeps the file's field order on a round trip.
using json = nlohmann::ordered_json;

inline std::string typeName(const json &v)
{
    switch (v.type()) {
    case json::value_t::null:
        return "null";
    case json::value_t::boolean:
        return v.get<bool>() ? "true" : "false";
    case json::value_t::string:
        return "the string " + quotedText(v.get_ref<const std::string &>(), 24);
    case json::value_t::array:
        return "an array";
    case json::value_t::object:
        return "an object";
    default:
        return "the number " + v.dump();
    }
}

inline Error expected(const std::string &field, const std::string &what, const json &found)
{
    return codedError("project.expected", {field, what, typeName(found)});
}

// Parsing proceeds field by field; the first error stops it. Each reader returns false and
// sets m_error on failure so the caller can stay linear.
class Reader
{
public:
    std::optional<Error> error;
    std::string folder;                                        // where {"npy": ...} references resolve
    std::map<std::string, NpyReference> *references = nullptr; // filled with each one read
    bool keyPaddingRows = false; // mask.keyPadding was given as rows (a batch's), left for the batch reader

    bool fail(Error e)
    {
        error = std::move(e);
        return false;
    }

    // A whole number from 1 to max; a larger one is refused naming max, the real limit.
    bool readInt(const json &obj, const char *key, std::int64_t max, int &out)
    {
        if (!obj.contains(key))
            return fail(codedError("project.missing", {key, "a whole number of at least 1"}));
        const json &v = obj[key];
        double d = 0.0;
        if (v.is_number_integer() || v.is_number_unsigned()) {
            d = v.get<double>();
        } else if (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>()) {
            d = v.get<double>();
        } else {
            return fail(expected(key, "a whole number of at least 1", v));
        }
        if (d < 1)
            return fail(codedError("value.atLeastOne", {key, v.dump()}));
        if (d > double(max))
            return fail(codedError("value.tooLarge", {key, v.dump(), std::to_string(max)}));
        out = int(d);
        return true;
    }

    bool readNumber(const json &v, const std::string &field, float &out)
    {
        if (!v.is_number())
            return fail(expected(field, "a number", v));
        const double d = v.get<double>();
        if (!std::isfinite(d) || std::abs(d) > 3.4028234663852886e38)
            return fail(codedError("project.float32", {field, v.dump()}));
        out = float(d);
        return true;
    }

    bool readMatrix(const json &v, const std::string &field, MatrixF &out)
    {
        if (v.is_object() && v.contains("npy"))
            return readReference(v, field, out);
        if (v.is_object())
            return fail(expected(field, "a matrix (an array of rows of numbers) or {\"npy\": \"file.npy\"}", v));
        if (!v.is_array())
            return fail(expected(field, "a matrix (an array of rows of numbers)", v));
        if (v.empty())
            return fail(codedError("project.matrix.empty", {field}));
        const size_t rows = v.size();
        size_t cols = 0;
        for (size_t r = 0; r < rows; ++r) {
            const std::string rowField = field + "[" + std::to_string(r) + "]";
            if (!v[r].is_array())
                return fail(expected(rowField, "a row (an array of numbers)", v[r]));
            if (v[r].empty())
                return fail(codedError("project.row.empty", {rowField}));
            if (r == 0)
                cols = v[r].size();
            else if (v[r].size() != cols)
                return fail(
                    codedError("project.row.length", {rowField, std::to_string(cols), std::to_string(v[r].size())}));
        }
        out.resize(Eigen::Index(rows), Eigen::Index(cols));
        for (size_t r = 0; r < rows; ++r)
            for (size_t c = 0; c < cols; ++c)
                if (!readNumber(v[r][c], field + "[" + std::to_string(r) + "][" + std::to_string(c) + "]",
                                out(Eigen::Index(r), Eigen::Index(c))))
                    return false;
        return true;
    }

    // true/false or 0/1 per entry (true = real token).
    bool readFlags(const json &v, const std::string &field, std::vector<bool> &out)
    {
        if (!v.is_array())
            return fail(expected(field, "an array of true/false (true = real token)", v));
        for (size_t i = 0; i < v.size(); ++i) {
            if (v[i].is_boolean())
                out.push_back(v[i].get<bool>());
            else if (v[i].is_number() && (v[i].get<double>() == 0 || v[i].get<double>() == 1))
                out.push_back(v[i].get<double>() == 1);
            else
                return fail(expected(field + "[" + std::to_string(i) + "]", "true or false", v[i]));
        }
        return true;
    }

    // An input matrix that may hold a batch: a 2-D matrix (batched = false, one entry in out),
    // or B x T x d given inline (an array of B matrices) or as a 3-D .npy reference.
    bool readInput(const json &v, const std::string &field, std::vector<MatrixF> &out, bool &batched)
    {
        out.clear();
        if (v.is_object() && v.contains("npy")) {
            if (v.size() != 1 || !v["npy"].is_string())
                return fail(expected(field, "{\"npy\": \"relative/path.npy\"} with nothing else", v));
            const std::string &path = v["npy"].get_ref<const std::string &>();
            auto stack = readReferencedStack(field, path, folder, true);
            if (!stack)
                return fail(stack.error());
            const MatrixF &all = stack->rows;
            if (references)
                (*references)[field] =
                    NpyReference{path, all.rows(), all.cols(), matrixFingerprint(all), stack->sequences};
            batched = stack->sequences > 0;
            const Eigen::Index count = batched ? stack->sequences : 1, rows = all.rows() / count;
            for (Eigen::Index b = 0; b < count; ++b)
                out.push_back(all.middleRows(b * rows, rows));
            return true;
        }
        batched = v.is_array() && !v.empty() && v[0].is_array() && !v[0].empty() && v[0][0].is_array();
        if (!batched) {
            out.emplace_back();
            return readMatrix(v, field, out.back());
        }
        for (size_t b = 0; b < v.size(); ++b) {
            const std::string slice = field + "[" + std::to_string(b) + "]";
            if (!v[b].is_array())
                return fail(expected(slice, "a matrix (B x T x d: one matrix per sequence)", v[b]));
            out.emplace_back();
            if (!readMatrix(v[b], slice, out.back()))
                return false;
            if (b > 0 && (out[b].rows() != out[0].rows() || out[b].cols() != out[0].cols()))
                return fail(Error{slice + ": expected " + std::to_string(out[0].rows()) + " x " +
                                  std::to_string(out[0].cols()) + " like " + field + "[0], found " +
                                  std::to_string(out[b].rows()) + " x " + std::to_string(out[b].cols())});
        }
        return true;
    }

    bool readReference(const json &v, const std::string &field, MatrixF &out)
    {
        if (v.size() != 1 || !v["npy"].is_string())
            return fail(expected(field, "{\"npy\": \"relative/path.npy\"} with nothing else", v));
        const std::string &path = v["npy"].get_ref<const std::string &>();
        auto matrix = readReferencedMatrix(field, path, folder);
        if (!matrix)
            return fail(matrix.error());
        out = std::move(*matrix);
        if (references)
            (*references)[field] = NpyReference{path, out.rows(), out.cols(), matrixFingerprint(out)};
        return true;
    }

    bool readVector(const json &obj, const char *key, const std::string &field, std::optional<VectorF> &out)
    {
        if (!obj.contains(key) || obj[key].is_null())
            return true;
        const json &v = obj[key];
        if (!v.is_array())
            return fail(expected(field, "an array of numbers", v));
        VectorF vec(Eigen::Index(v.size()));
        for (size_t i = 0; i < v.size(); ++i)
            if (!readNumber(v[i], field + "[" + std::to_string(i) + "]", vec[Eigen::Index(i)]))
                return false;
        out = std::move(vec);
        return true;
    }

    bool readTokens(const json &side, const std::string &field, Eigen::Index rows, std::vector<std::string> &out)
    {
        if (!side.contains("tokens"))
            return fail(codedError("project.missing", {field, "one label per row of the matrix x"}));
        return readTokenList(side["tokens"], field, rows, out);
    }

    bool readTokenList(const json &v, const std::string &field, Eigen::Index rows, std::vector<std::string> &out)
    {
        if (!v.is_array())
            return fail(expected(field, "an array of strings", v));
        for (size_t i = 0; i < v.size(); ++i) {
            if (!v[i].is_string())
                return fail(expected(field + "[" + std::to_string(i) + "]", "a string", v[i]));
            out.push_back(v[i].get<std::string>());
        }
        if (Eigen::Index(out.size()) != rows)
            return fail(codedError("project.labels", {field, std::to_string(rows), std::to_string(out.size())}));
        return true;
    }

    bool readSide(const json &root, const char *key, MatrixF &x, std::vector<std::string> &tokens)
    {
        if (!root.contains(key))
            return fail(codedError("project.missing", {key, "{\"tokens\": [...], \"x\": [[...]]}"}));
        const json &side = root[key];
        if (!side.is_object())
            return fail(expected(key, "an object with \"tokens\" and \"x\"", side));
        if (!side.contains("x"))
            return fail(codedError("project.missing", {std::string(key) + ".x", "a matrix with one row per token"}));
        return readMatrix(side["x"], std::string(key) + ".x", x) &&
               readTokens(side, std::string(key) + ".tokens", x.rows(), tokens);
    }

    bool readMask(const json &root, MaskSpec &mask)
    {
        if (!root.contains("mask") || root["mask"].is_null())
            return true;
        const json &m = root["mask"];
        if (!m.is_object())
            return fail(expected("mask", "an object", m));
        if (m.contains("causal") && !m["causal"].is_null()) {
            if (!m["causal"].is_boolean())
                return fail(expected("mask.causal", "true or false", m["causal"]));
            mask.causal = m["causal"].get<bool>();
        }
        if (m.contains("keyPadding") && !m["keyPadding"].is_null()) {
            const json &kp = m["keyPadding"];
            if (!kp.is_array())
                return fail(expected("mask.keyPadding", "an array of true/false (true = real token)", kp));
            // B rows (one per sequence of a batch) are read with the batch (core/formats/BatchedProject.cpp).
            keyPaddingRows = !kp.empty() && kp[0].is_array();
            if (!keyPaddingRows && !readFlags(kp, "mask.keyPadding", mask.keyPadding))
                return false;
        }
        if (m.contains("allowed") && !m["allowed"].is_null()) {
            const json &a = m["allowed"];
            MatrixF values;
            if (!readMatrixOfFlags(a, values))
                return false;
            mask.allowed = values.cast<std::uint8_t>();
        }
        if (m.contains("window") && !m["window"].is_null()) {
            const json &w = m["window"];
            if (!isWholeNumber(w))
                return fail(expected("mask.window", "a whole number of at least 1", w));
            if (w.get<double>() < 1)
                return fail(codedError("validation.window", {w.dump()}));
            if (w.get<double>() > double(std::int64_t(1) << 40))
                return fail(
                    codedError("value.tooLarge", {"mask.window", w.dump(), std::to_string(std::int64_t(1) << 40)}));
            mask.window = std::int64_t(w.get<double>());
        }
        return true;
    }

    // The optional fields of design.md's "Modern attention": kvHeads, rope, softcap and sinks
    // (mask.window is read with the mask). Their values are checked by validateProblem.
    bool readModernAttention(const json &root, AttentionProblem &p)
    {
        AttentionSpec &spec = p.spec;
        if (root.contains("kvHeads") && !root["kvHeads"].is_null()) {
            const json &g = root["kvHeads"];
            if (!isWholeNumber(g))
                return fail(expected("kvHeads", "a whole number that divides heads", g));
            const double d = g.get<double>();
            if (d < 1 || d > spec.heads || std::fmod(double(spec.heads), d) != 0)
                return fail(codedError("validation.kvHeads", {std::to_string(spec.heads), g.dump()}));
            spec.kvHeads = int(d) == spec.heads ? 0 : int(d);
        }
        if (root.contains("rope") && !root["rope"].is_null()) {
            const json &r = root["rope"];
            if (!r.is_object())
                return fail(expected("rope", "an object such as {\"base\": 10000}", r));
            RopeSpec rope;
            if (r.contains("base") && !r["base"].is_null()) {
                if (!r["base"].is_number())
                    return fail(expected("rope.base", "a number above 0", r["base"]));
                rope.base = r["base"].get<double>();
                if (!std::isfinite(rope.base) || rope.base <= 0)
                    return fail(codedError("validation.rope.base", {r["base"].dump()}));
            }
            if (!readPositions(r, "queryPositions", rope.queryPositions) ||
                !readPositions(r, "keyPositions", rope.keyPositions))
                return false;
            if (r.contains("frequencies") && !r["frequencies"].is_null()) {
                const json &a = r["frequencies"];
                if (!a.is_array())
                    return fail(expected("rope.frequencies", "an array of numbers of 0 or more", a));
                for (size_t i = 0; i < a.size(); ++i) {
                    if (!a[i].is_number() || !std::isfinite(a[i].get<double>()) || a[i].get<double>() < 0)
                        return fail(codedError("validation.rope.frequency", {std::to_string(i), a[i].dump()}));
                    rope.frequencies.push_back(a[i].get<double>());
                }
            }
            if (r.contains("scaling") && !r["scaling"].is_null()) {
                const json &f = r["scaling"];
                if (!f.is_number() || !std::isfinite(f.get<double>()) || !(f.get<double>() > 0))
                    return fail(codedError("validation.rope.scaling", {f.dump()}));
                rope.scaling = f.get<double>();
            }
            spec.rope = std::move(rope);
        }
        if (root.contains("softcap") && !root["softcap"].is_null()) {
            const json &c = root["softcap"];
            if (!c.is_number())
                return fail(expected("softcap", "a number above 0", c));
            if (!(c.get<double>() > 0))
                return fail(codedError("validation.softcap", {c.dump()}));
            float cap = 0;
            if (!readNumber(c, "softcap", cap))
                return false;
            spec.softcap = c.get<double>();
        }
        if (root.contains("qkNormEps") && !root["qkNormEps"].is_null()) {
            const json &e = root["qkNormEps"];
            if (!e.is_number() || !(e.get<double>() > 0) || e.get<double>() > 1)
                return fail(codedError("validation.qkNormEps", {e.dump()}));
            spec.qkNormEps = e.get<double>();
        }
        return readVector(root, "sinks", "sinks", p.weights.sinks) &&
               readVector(root, "qNorm", "qNorm", p.weights.qNorm) &&
               readVector(root, "kNorm", "kNorm", p.weights.kNorm);
    }

private:
    static bool isWholeNumber(const json &v)
    {
        return v.is_number_integer() || v.is_number_unsigned() ||
               (v.is_number_float() && std::isfinite(v.get<double>()) &&
                std::floor(v.get<double>()) == v.get<double>());
    }

    bool readPositions(const json &rope, const char *key, std::vector<std::int64_t> &out)
    {
        if (!rope.contains(key) || rope[key].is_null())
            return true;
        const std::string field = std::string("rope.") + key;
        const json &a = rope[key];
        if (!a.is_array())
            return fail(expected(field, "an array of positions (whole numbers of 0 or more)", a));
        for (size_t i = 0; i < a.size(); ++i) {
            const std::string at = field + "[" + std::to_string(i) + "]";
            if (!isWholeNumber(a[i]))
                return fail(expected(at, "a whole number of 0 or more", a[i]));
            if (a[i].get<double>() < 0 || a[i].get<double>() > double(std::int64_t(1) << 40))
                return fail(codedError("validation.position", {at, a[i].dump()}));
            out.push_back(std::int64_t(a[i].get<double>()));
        }
        return true;
    }

    bool readMatrixOfFlags(const json &a, MatrixF &values)
    {
        // Booleans are accepted as well as 0/1, then the matrix reads like any other.
        json numeric = a;
        if (numeric.is_array())
            for (auto &row : numeric)
                if (row.is_array())
                    for (auto &cell : row)
                        if (cell.is_boolean())
                            cell = cell.get<bool>() ? 1 : 0;
        if (!readMatrix(numeric, "mask.allowed", values))
            return false;
        for (Eigen::Index r = 0; r < values.rows(); ++r)
            for (Eigen::Index c = 0; c < values.cols(); ++c)
                if (values(r, c) != 0.0f && values(r, c) != 1.0f)
                    return fail(codedError("project.mask.binary",
                                           {"mask.allowed[" + std::to_string(r) + "][" + std::to_string(c) + "]",
                                            numeric.is_array() ? numeric[size_t(r)][size_t(c)].dump()
                                                               : json(double(values(r, c))).dump()}));
        return true;
    }
};

// Writers shared with core/formats/BatchedProject.cpp (defined in core/formats/ProjectFile.cpp).
json matrixValue(const MatrixF &m);

// The `{"npy": ...}` reference to write for field when the matrix (B matrices one under another
// for a batch of `sequences`; 0 for a 2-D matrix) still equals what the reference held.
using ReferenceLookup =
    std::function<std::optional<json>(const std::string &field, const MatrixF &m, Eigen::Index sequences)>;

// Reads query, key and value (each 2-D, or B x T x d for a batch) with their tokens into
// project.problem (sequence 0) and project.batch. Call after Reader::readMask: it also reads
// mask.keyPadding given as B rows. Defined in core/formats/BatchedProject.cpp.
bool readProjectInputs(Reader &in, const json &root, Project &project);

// Writes query, key and value for project (B x T x d for a batch whose sequences agree).
void writeProjectInputs(const Project &project, json &root, const ReferenceLookup &reference);
// mask.keyPadding as B rows when the project's batch gave it so.
std::optional<json> batchKeyPadding(const Project &project);

} // namespace attnscope::projectjson
