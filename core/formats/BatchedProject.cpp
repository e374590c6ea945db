#include "core/formats/BatchedProject.h"

#include "core/ErrorCode.h"
#include "core/attention/RandomProblem.h"
#include "core/formats/ProjectReader.h"
#include "core/io/MemoryLimits.h"

#include <string>

namespace attnscope {

using namespace projectjson;

int BatchedProject::sequenceCount() const
{
    return isBatched() ? int(m_project.batch->sequences.size()) : 1;
}

AttentionProblem BatchedProject::problemForSequence(int b) const
{
    AttentionProblem p = m_project.problem;
    if (!isBatched() || b == m_project.batch->shown)
        return p;
    const SequenceInputs &s = m_project.batch->sequences[size_t(b)];
    p.xq = s.xq;
    if (p.spec.mode == AttentionMode::Cross) {
        p.xkv = s.xkv;
        p.xv = s.xv;
    }
    // Key padding given once (1-D) is shared by every sequence, as the project's problem has it.
    if (m_project.batch->paddingPerSequence)
        p.mask.keyPadding = s.keyPadding;
    return p;
}

SequenceInputs BatchedProject::sequenceInputs(int b) const
{
    const AttentionProblem &p = m_project.problem;
    SequenceInputs live{p.xq, p.xkv, p.xv, p.mask.keyPadding, m_project.queryTokens, m_project.keyTokens};
    if (!isBatched() || b == m_project.batch->shown)
        return live;
    SequenceInputs s = m_project.batch->sequences[size_t(b)];
    if (!m_project.batch->paddingPerSequence)
        s.keyPadding = live.keyPadding;
    if (!m_project.batch->tokensPerSequence)
        s.queryTokens = live.queryTokens;
    if (!m_project.batch->keyTokensPerSequence)
        s.keyTokens = live.keyTokens;
    return s;
}

bool BatchedProject::sequencesAgree() const
{
    if (!isBatched() || sequenceCount() < 2)
        return true;
    const int shown = m_project.batch->shown;
    const SequenceInputs a = sequenceInputs(shown), b = sequenceInputs(shown == 0 ? 1 : 0);
    const bool cross = m_project.problem.spec.mode == AttentionMode::Cross;
    auto same = [](const MatrixF &x, const MatrixF &y) { return x.rows() == y.rows() && x.cols() == y.cols(); };
    if (!same(a.xq, b.xq) || a.queryTokens.size() != b.queryTokens.size())
        return false;
    if (cross && (!same(a.xkv, b.xkv) || a.keyTokens.size() != b.keyTokens.size() ||
                  a.xv.has_value() != b.xv.has_value() || (a.xv && !same(*a.xv, *b.xv))))
        return false;
    return !m_project.batch->paddingPerSequence || a.keyPadding.size() == b.keyPadding.size();
}

Result<std::vector<AttentionTrace>> computeSequences(AttentionBackend &backend, const Project &project)
{
    const BatchedProject batch(project);
    const int count = batch.sequenceCount();
    std::vector<AttentionTrace> traces;
    traces.reserve(size_t(count));
    for (int b = 0; b < count; ++b) {
        auto trace = backend.compute(batch.problemForSequence(b));
        if (!trace) {
            if (!batch.isBatched())
                return trace.error();
            return Error{"sequence " + std::to_string(b) + " (counting from 0) of " + std::to_string(count) + ": " +
                             trace.message(),
                         trace.kind()};
        }
        traces.push_back(std::move(*trace));
    }
    return traces;
}

Project withSequenceShown(Project project, int b)
{
    if (!project.batch || b < 0 || b >= int(project.batch->sequences.size()) || b == project.batch->shown)
        return project;
    ProjectBatch &batch = *project.batch;
    AttentionProblem &p = project.problem;
    // Keep the shown sequence's edits in its entry, then load sequence b into the problem.
    SequenceInputs &old = batch.sequences[size_t(batch.shown)];
    old.xq = p.xq;
    old.xkv = p.xkv;
    old.xv = p.xv;
    if (batch.paddingPerSequence)
        old.keyPadding = p.mask.keyPadding;
    if (batch.tokensPerSequence)
        old.queryTokens = project.queryTokens;
    if (batch.keyTokensPerSequence)
        old.keyTokens = project.keyTokens;
    const SequenceInputs &next = batch.sequences[size_t(b)];
    p.xq = next.xq;
    if (p.spec.mode == AttentionMode::Cross) {
        p.xkv = next.xkv;
        p.xv = next.xv;
    }
    if (batch.paddingPerSequence)
        p.mask.keyPadding = next.keyPadding;
    if (batch.tokensPerSequence)
        project.queryTokens = next.queryTokens;
    if (batch.keyTokensPerSequence)
        project.keyTokens = next.keyTokens;
    batch.shown = b;
    return project;
}

Status validateBatch(const Project &project, const ProblemLimits &limits)
{
    const BatchedProject batch(project);
    const int count = batch.sequenceCount();
    if (count < 2)
        return Ok{};
    // The CLI holds every sequence's trace at once.
    const std::int64_t one = traceBytes(project.problem), all = one > INT64_MAX / count ? INT64_MAX : one * count;
    const std::int64_t allowed =
        limits.maxTraceBytes == ProblemLimits::kFollowMachine ? memoryBudget() : limits.maxTraceBytes;
    if (all > ProblemLimits::kAlwaysFitsBytes && all > allowed)
        return Error{"size: this batch of " + std::to_string(count) + " sequences needs " + formatBytes(all) +
                         " for its intermediate tensors; this machine allows " + formatBytes(allowed),
                     ErrorKind::TooLarge};
    for (int b = 1; b < count; ++b) {
        ProblemLimits each = limits;
        each.maxTraceBytes = INT64_MAX; // checked for the whole batch above
        if (Status s = validateProblem(batch.problemForSequence(b), each); !s)
            return Error{"sequence " + std::to_string(b) + " (counting from 0) of " + std::to_string(count) + ": " +
                             s.error().message,
                         s.error().kind};
    }
    return Ok{};
}

namespace {

// One input side as read: B matrices (one for a 2-D x) and their labels.
struct SideRead {
    std::vector<MatrixF> x;
    bool batched = false;
    std::vector<std::vector<std::string>> tokens; // one list, or one per sequence
    bool tokensPerSequence = false;
};

std::string shapeText(const SideRead &side)
{
    const MatrixF &m = side.x.front();
    const std::string plane = std::to_string(m.rows()) + " x " + std::to_string(m.cols());
    return side.batched ? std::to_string(side.x.size()) + " x " + plane : plane;
}

bool readSide(Reader &in, const json &root, const std::string &key, bool withTokens, SideRead &out)
{
    if (!root.contains(key))
        return in.fail(codedError("project.missing", {key, "{\"tokens\": [...], \"x\": [[...]]}"}));
    const json &side = root[key];
    if (!side.is_object())
        return in.fail(
            expected(key, withTokens ? "an object with \"tokens\" and \"x\"" : "an object with \"x\"", side));
    if (!side.contains("x"))
        return in.fail(codedError("project.missing", {key + ".x", "a matrix with one row per token"}));
    if (!in.readInput(side["x"], key + ".x", out.x, out.batched))
        return false;
    if (!withTokens)
        return true;
    const std::string field = key + ".tokens";
    const Eigen::Index rows = out.x.front().rows();
    if (!side.contains("tokens") || side["tokens"].is_null()) {
        // A tutorial's rand(64, 10, 512) has no words: rows are labelled t0, t1, ...
        out.tokens.push_back(numberedTokens(rows));
        return true;
    }
    const json &t = side["tokens"];
    out.tokensPerSequence = out.batched && t.is_array() && !t.empty() && t[0].is_array();
    if (!out.tokensPerSequence) {
        out.tokens.emplace_back();
        return in.readTokenList(t, field, rows, out.tokens.back());
    }
    if (t.size() != out.x.size())
        return in.fail(Error{field + ": expected " + std::to_string(out.x.size()) +
                             " lists of labels (one per sequence), found " + std::to_string(t.size())});
    for (size_t b = 0; b < t.size(); ++b) {
        out.tokens.emplace_back();
        if (!in.readTokenList(t[b], field + "[" + std::to_string(b) + "]", rows, out.tokens.back()))
            return false;
    }
    return true;
}

// key.x and value.x are batched exactly when query.x is, with as many sequences.
bool matchesQuery(Reader &in, const std::string &field, const SideRead &query, const SideRead &side, const char *plane)
{
    if (side.batched == query.batched && side.x.size() == query.x.size())
        return true;
    if (!query.batched)
        return in.fail(Error{field + ": expected a 2-D matrix (" + plane + ") like query.x, found " + shapeText(side)});
    return in.fail(Error{field + ": expected " + std::to_string(query.x.size()) + " x " + plane +
                         " (one matrix per sequence of query.x), found " + shapeText(side)});
}

} // namespace

bool projectjson::readProjectInputs(Reader &in, const json &root, Project &project)
{
    const bool cross = project.problem.spec.mode == AttentionMode::Cross;
    SideRead query, key, value;
    if (!readSide(in, root, "query", true, query))
        return false;
    if (cross && (!readSide(in, root, "key", true, key) || !matchesQuery(in, "key.x", query, key, "Tk x d_kv")))
        return false;
    const bool hasValue = root.contains("value") && !root["value"].is_null();
    if (hasValue && !cross)
        return in.fail(Error{"value: a separate value input needs \"mode\": \"cross\" (self-attention takes its "
                             "values from query.x)"});
    if (hasValue &&
        (!readSide(in, root, "value", false, value) || !matchesQuery(in, "value.x", query, value, "Tk x d_v_in")))
        return false;

    std::vector<std::vector<bool>> paddingRows;
    if (in.keyPaddingRows) {
        const json &kp = root["mask"]["keyPadding"];
        if (!query.batched)
            return in.fail(Error{"mask.keyPadding: expected one true/false per key token, found an array of rows "
                                 "(one row per sequence needs a batched query.x)"});
        if (kp.size() != query.x.size())
            return in.fail(Error{"mask.keyPadding: expected " + std::to_string(query.x.size()) +
                                 " rows (one per sequence), found " + std::to_string(kp.size())});
        for (size_t b = 0; b < kp.size(); ++b) {
            paddingRows.emplace_back();
            if (!in.readFlags(kp[b], "mask.keyPadding[" + std::to_string(b) + "]", paddingRows.back()))
                return false;
        }
    }

    AttentionProblem &p = project.problem;
    p.xq = query.x.front();
    project.queryTokens = query.tokens.front();
    if (cross) {
        p.xkv = key.x.front();
        project.keyTokens = key.tokens.front();
    }
    if (hasValue)
        p.xv = value.x.front();
    if (!paddingRows.empty())
        p.mask.keyPadding = paddingRows.front();
    if (!query.batched)
        return true;

    ProjectBatch batch;
    batch.tokensPerSequence = query.tokensPerSequence;
    batch.keyTokensPerSequence = key.tokensPerSequence;
    batch.paddingPerSequence = !paddingRows.empty();
    for (size_t b = 0; b < query.x.size(); ++b) {
        SequenceInputs s;
        s.xq = query.x[b];
        if (cross)
            s.xkv = key.x[b];
        if (hasValue)
            s.xv = value.x[b];
        if (batch.paddingPerSequence)
            s.keyPadding = paddingRows[b];
        if (query.tokensPerSequence)
            s.queryTokens = query.tokens[b];
        if (key.tokensPerSequence)
            s.keyTokens = key.tokens[b];
        batch.sequences.push_back(std::move(s));
    }
    project.batch = std::move(batch);
    return true;
}

void projectjson::writeProjectInputs(const Project &project, json &root, const ReferenceLookup &reference)
{
    const BatchedProject batch(project);
    // The shown sequence no longer shaped like the others (an edit in the GUI): only it can be
    // written, as a 2-D project (BatchedProject::sequencesAgree() lets the GUI warn first).
    const bool batched = batch.isBatched() && batch.sequencesAgree();
    const int count = batched ? batch.sequenceCount() : 1;
    std::vector<SequenceInputs> sequences;
    if (!batched)
        sequences.push_back(batch.sequenceInputs(project.batch ? project.batch->shown : 0));
    for (int b = 0; batched && b < count; ++b)
        sequences.push_back(batch.sequenceInputs(b));
    const bool cross = project.problem.spec.mode == AttentionMode::Cross;

    auto input = [&](const std::string &field, auto pick) -> json {
        if (!batched) {
            const MatrixF &m = pick(sequences.front());
            return reference(field, m, 0).value_or(matrixValue(m));
        }
        const Eigen::Index rows = pick(sequences.front()).rows();
        MatrixF stacked(rows * count, pick(sequences.front()).cols());
        for (int b = 0; b < count; ++b)
            stacked.middleRows(b * rows, rows) = pick(sequences[size_t(b)]);
        if (auto ref = reference(field, stacked, count))
            return *ref;
        json all = json::array();
        for (const SequenceInputs &s : sequences)
            all.push_back(matrixValue(pick(s)));
        return all;
    };
    auto tokens = [&](bool perSequence, auto pick) -> json {
        if (!batched || !perSequence)
            return pick(sequences.front());
        json all = json::array();
        for (const SequenceInputs &s : sequences)
            all.push_back(pick(s));
        return all;
    };
    auto sideObject = [&](const char *key) {
        json side = root.value(key, json::object());
        return side.is_object() ? side : json::object();
    };

    json query = sideObject("query");
    query["tokens"] = tokens(project.batch && project.batch->tokensPerSequence,
                             [](const SequenceInputs &s) { return s.queryTokens; });
    query["x"] = input("query.x", [](const SequenceInputs &s) -> const MatrixF & { return s.xq; });
    root["query"] = std::move(query);
    if (cross) {
        json key = sideObject("key");
        key["tokens"] = tokens(project.batch && project.batch->keyTokensPerSequence,
                               [](const SequenceInputs &s) { return s.keyTokens; });
        key["x"] = input("key.x", [](const SequenceInputs &s) -> const MatrixF & { return s.xkv; });
        root["key"] = std::move(key);
    } else {
        root.erase("key");
    }
    if (cross && project.problem.xv) {
        json value = sideObject("value");
        value["x"] = input("value.x", [](const SequenceInputs &s) -> const MatrixF & { return *s.xv; });
        root["value"] = std::move(value);
    } else {
        root.erase("value");
    }
}

std::optional<json> projectjson::batchKeyPadding(const Project &project)
{
    const BatchedProject batch(project);
    if (!batch.isBatched() || !batch.sequencesAgree() || !project.batch->paddingPerSequence)
        return std::nullopt;
    json rows = json::array();
    for (int b = 0; b < batch.sequenceCount(); ++b)
        rows.push_back(batch.sequenceInputs(b).keyPadding);
    return rows;
}

} // namespace attnscope
