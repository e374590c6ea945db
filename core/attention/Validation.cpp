#include "core/attention/Validation.h"

#include "core/ErrorCode.h"
#include "core/io/MemoryLimits.h"

#include <cmath>
#include <limits>
#include <sstream>

namespace attnscope {

namespace {

std::string numberText(double v)
{
    if (std::isnan(v))
        return "NaN";
    if (std::isinf(v))
        return v > 0 ? "Infinity" : "-Infinity";
    std::ostringstream s;
    s << v;
    return s.str();
}

Error shapeError(const std::string &field, Eigen::Index rows, Eigen::Index cols, const char *meaning,
                 Eigen::Index foundRows, Eigen::Index foundCols)
{
    return codedError("validation.shape", {field, shapeString(rows, cols), meaning, shapeString(foundRows, foundCols)});
}

Status checkShape(const std::string &field, const MatrixF &m, Eigen::Index rows, Eigen::Index cols, const char *meaning)
{
    if (m.rows() != rows || m.cols() != cols)
        return shapeError(field, rows, cols, meaning, m.rows(), m.cols());
    return Ok{};
}

template <typename Derived>
Status checkFinite(const std::string &field, const Eigen::MatrixBase<Derived> &m, bool isVector)
{
    for (Eigen::Index r = 0; r < m.rows(); ++r)
        for (Eigen::Index c = 0; c < m.cols(); ++c)
            if (!std::isfinite(m(r, c))) {
                std::string where = field;
                if (!isVector)
                    where.append("[").append(std::to_string(r)).append("]");
                where.append("[").append(std::to_string(c)).append("]");
                return codedError("value.finite", {where, numberText(m(r, c))});
            }
    return Ok{};
}

Status checkVector(const std::string &field, const std::optional<VectorF> &v, Eigen::Index size, const char *meaning)
{
    if (!v)
        return Ok{};
    if (v->size() != size)
        return codedError("validation.vector", {field, std::to_string(size), meaning, std::to_string(v->size())});
    return checkFinite(field, *v, true);
}

Status checkRange(const char *field, std::int64_t value, std::int64_t max)
{
    if (value < 1)
        return codedError("value.atLeastOne", {field, std::to_string(value)});
    if (value > max)
        return codedError("value.tooLarge", {field, std::to_string(value), std::to_string(max)});
    return Ok{};
}

Error tooLarge(std::int64_t bytes, std::int64_t allowed)
{
    return codedError("memory.trace", {formatBytes(bytes), formatBytes(allowed)}, ErrorKind::TooLarge);
}

} // namespace

ProblemLimits ProblemLimits::forThisMachine()
{
    ProblemLimits limits;
    limits.maxTraceBytes = kFollowMachine;
    return limits;
}

std::int64_t traceBytes(std::int64_t h, std::int64_t tq, std::int64_t tk, std::int64_t dk, std::int64_t dv,
                        std::int64_t dOut)
{
    // q, k, v, scores, weights, head outputs, context, output, mask.
    std::int64_t floats = saturatingMul(h, saturatingMul(tq, dk));
    floats = saturatingAdd(floats, saturatingMul(h, saturatingMul(tk, saturatingAdd(dk, dv))));
    floats = saturatingAdd(floats, saturatingMul(saturatingMul(2, h), saturatingMul(tq, tk)));
    floats = saturatingAdd(floats, saturatingMul(saturatingMul(2, h), saturatingMul(tq, dv)));
    floats = saturatingAdd(floats, saturatingMul(tq, dOut));
    return saturatingAdd(saturatingMul(floats, 4), saturatingMul(tq, tk));
}

std::int64_t traceBytes(const AttentionProblem &p)
{
    // Counted as if every head had its own keys and values: an upper bound under grouping.
    return traceBytes(p.spec.heads, p.tq(), p.tk(), p.spec.headDimQK, p.spec.headDimV, p.dOut());
}

Status checkFitsInMemory(const AttentionProblem &problem)
{
    const std::int64_t bytes = traceBytes(problem), allowed = memoryBudget();
    if (bytes > allowed)
        return tooLarge(bytes, allowed);
    return Ok{};
}

Status validateProblem(const AttentionProblem &p, const ProblemLimits &limits)
{
#define ATTNSCOPE_CHECK(expr)                                                                                          \
    do {                                                                                                               \
        if (Status s = (expr); !s)                                                                                     \
            return s;                                                                                                  \
    } while (false)

    const AttentionSpec &spec = p.spec;
    ATTNSCOPE_CHECK(checkRange("heads", spec.heads, limits.maxHeads));
    ATTNSCOPE_CHECK(checkRange("headDimQK", spec.headDimQK, limits.maxHeadDim));
    ATTNSCOPE_CHECK(checkRange("headDimV", spec.headDimV, limits.maxHeadDim));
    // The engines scale in float32: a finite double past float range would become Inf there.
    if (spec.scaleMode == ScaleMode::Custom &&
        (!std::isfinite(spec.scaleValue) || std::abs(spec.scaleValue) > double(std::numeric_limits<float>::max())))
        return codedError("project.float32", {"scale.value", numberText(spec.scaleValue)});

    const bool cross = spec.mode == AttentionMode::Cross;
    if (p.xq.rows() < 1 || p.xq.cols() < 1)
        return codedError("validation.input.empty", {"query.x", shapeOf(p.xq)});
    ATTNSCOPE_CHECK(checkRange("query.x (tokens)", p.xq.rows(), limits.maxTokens));
    ATTNSCOPE_CHECK(checkRange("query.x (dimensions)", p.xq.cols(), limits.maxModelDim));
    if (cross) {
        if (p.xkv.rows() < 1 || p.xkv.cols() < 1)
            return codedError("validation.input.empty", {"key.x", shapeOf(p.xkv)});
        ATTNSCOPE_CHECK(checkRange("key.x (tokens)", p.xkv.rows(), limits.maxTokens));
        ATTNSCOPE_CHECK(checkRange("key.x (dimensions)", p.xkv.cols(), limits.maxModelDim));
    }
    // A value input left over in self-attention is ignored (valueInput()), as xkv is.
    if (p.hasSeparateValue()) {
        if (p.xv->rows() != p.xkv.rows())
            return Error{"value.x: expected " + std::to_string(p.xkv.rows()) + " rows (one per key token), found " +
                         std::to_string(p.xv->rows())};
        if (p.xv->cols() < 1)
            return Error{"value.x: expected at least one dimension, found " + shapeOf(*p.xv)};
        ATTNSCOPE_CHECK(checkRange("value.x (dimensions)", p.xv->cols(), limits.maxModelDim));
    }

    // Modern attention (design.md): each field checked alone, by name.
    if (spec.kvHeads != 0 && (spec.kvHeads < 1 || spec.kvHeads > spec.heads || spec.heads % spec.kvHeads != 0))
        return codedError("validation.kvHeads", {std::to_string(spec.heads), std::to_string(spec.kvHeads)});
    const bool grouped = spec.keyValueHeads() != spec.heads;
    if (spec.rope) {
        if (spec.headDimQK % 2 != 0)
            return codedError("validation.rope.odd", {std::to_string(spec.headDimQK)});
        if (!std::isfinite(spec.rope->base) || spec.rope->base <= 0)
            return codedError("validation.rope.base", {numberText(spec.rope->base)});
        const std::vector<double> &theta = spec.rope->frequencies;
        if (!theta.empty() && theta.size() != size_t(spec.headDimQK / 2))
            return codedError("validation.rope.frequencies",
                              {std::to_string(spec.headDimQK / 2), std::to_string(theta.size())});
        for (size_t i = 0; i < theta.size(); ++i)
            if (!std::isfinite(theta[i]) || theta[i] < 0)
                return codedError("validation.rope.frequency", {std::to_string(i), numberText(theta[i])});
        if (!std::isfinite(spec.rope->scaling) || spec.rope->scaling <= 0)
            return codedError("validation.rope.scaling", {numberText(spec.rope->scaling)});
        const std::pair<const char *, const std::vector<std::int64_t> *> positions[] = {
            {"rope.queryPositions", &spec.rope->queryPositions}, {"rope.keyPositions", &spec.rope->keyPositions}};
        for (const auto &[field, given] : positions) {
            if (given->empty())
                continue;
            const Eigen::Index rows = given == &spec.rope->queryPositions ? p.tq() : p.tk();
            if (Eigen::Index(given->size()) != rows)
                return codedError("validation.positions", {field, std::to_string(rows), std::to_string(given->size())});
            for (size_t i = 0; i < given->size(); ++i)
                if ((*given)[i] < 0)
                    return codedError("validation.position", {std::string(field) + "[" + std::to_string(i) + "]",
                                                              std::to_string((*given)[i])});
        }
    }
    if (spec.softcap && (!std::isfinite(*spec.softcap) || *spec.softcap <= 0 ||
                         *spec.softcap > double(std::numeric_limits<float>::max())))
        return codedError("validation.softcap", {numberText(*spec.softcap)});
    if (p.mask.window < 0)
        return codedError("validation.window", {std::to_string(p.mask.window)});

    const Eigen::Index qkWidth = p.qkWidth(), vWidth = p.vWidth(), kWidth = p.kWidth(), kvVWidth = p.kvVWidth();
    const auto &w = p.weights;
    ATTNSCOPE_CHECK(checkShape("weights.q", w.q, p.dq(), qkWidth, "d_q x heads*headDimQK"));
    ATTNSCOPE_CHECK(
        checkShape("weights.k", w.k, p.dkv(), kWidth, grouped ? "d_kv x kvHeads*headDimQK" : "d_kv x heads*headDimQK"));
    const char *vMeaning = p.hasSeparateValue() ? (grouped ? "d_v_in x kvHeads*headDimV" : "d_v_in x heads*headDimV")
                                                : (grouped ? "d_kv x kvHeads*headDimV" : "d_kv x heads*headDimV");
    ATTNSCOPE_CHECK(checkShape("weights.v", w.v, p.dvIn(), kvVWidth, vMeaning));
    if (w.o) {
        if (w.o->rows() != vWidth || w.o->cols() < 1)
            return shapeError("weights.o", vWidth, std::max<Eigen::Index>(w.o->cols(), 1), "heads*headDimV x d_out",
                              w.o->rows(), w.o->cols());
        ATTNSCOPE_CHECK(checkRange("weights.o (d_out)", w.o->cols(), limits.maxModelDim));
    } else if (w.oBias) {
        return codedError("validation.oBias", {});
    }
    ATTNSCOPE_CHECK(checkVector("weights.qBias", w.qBias, qkWidth, "heads*headDimQK"));
    ATTNSCOPE_CHECK(checkVector("weights.kBias", w.kBias, kWidth, grouped ? "kvHeads*headDimQK" : "heads*headDimQK"));
    ATTNSCOPE_CHECK(checkVector("weights.vBias", w.vBias, kvVWidth, grouped ? "kvHeads*headDimV" : "heads*headDimV"));
    ATTNSCOPE_CHECK(checkVector("weights.oBias", w.oBias, p.dOut(), "d_out"));
    ATTNSCOPE_CHECK(checkVector("sinks", w.sinks, spec.heads, "one per query head"));
    ATTNSCOPE_CHECK(checkVector("weights.qNorm", w.qNorm, spec.headDimQK, "headDimQK"));
    ATTNSCOPE_CHECK(checkVector("weights.kNorm", w.kNorm, spec.headDimQK, "headDimQK"));
    if ((w.qNorm || w.kNorm) && (!std::isfinite(spec.qkNormEps) || spec.qkNormEps <= 0 || spec.qkNormEps > 1))
        return codedError("validation.qkNormEps", {numberText(spec.qkNormEps)});

    const auto &m = p.mask;
    if (!m.keyPadding.empty() && Eigen::Index(m.keyPadding.size()) != p.tk())
        return codedError("validation.keyPadding", {std::to_string(p.tk()), std::to_string(m.keyPadding.size())});
    if (m.allowed) {
        if (m.allowed->rows() != p.tq() || m.allowed->cols() != p.tk())
            return shapeError("mask.allowed", p.tq(), p.tk(), "query tokens x key tokens", m.allowed->rows(),
                              m.allowed->cols());
        for (Eigen::Index i = 0; i < m.allowed->size(); ++i)
            if (m.allowed->data()[i] > 1)
                return codedError("validation.allowed", {std::to_string(int(m.allowed->data()[i]))});
    }

    const std::int64_t bytes = traceBytes(p);
    if (limits.maxTraceBytes == ProblemLimits::kFollowMachine) {
        if (bytes > ProblemLimits::kAlwaysFitsBytes)
            if (const std::int64_t allowed = memoryBudget(); bytes > allowed)
                return tooLarge(bytes, allowed);
    } else if (bytes > limits.maxTraceBytes) {
        return tooLarge(bytes, limits.maxTraceBytes);
    }

    ATTNSCOPE_CHECK(checkFinite("query.x", p.xq, false));
    if (cross)
        ATTNSCOPE_CHECK(checkFinite("key.x", p.xkv, false));
    if (p.hasSeparateValue())
        ATTNSCOPE_CHECK(checkFinite("value.x", *p.xv, false));
    ATTNSCOPE_CHECK(checkFinite("weights.q", w.q, false));
    ATTNSCOPE_CHECK(checkFinite("weights.k", w.k, false));
    ATTNSCOPE_CHECK(checkFinite("weights.v", w.v, false));
    if (w.o)
        ATTNSCOPE_CHECK(checkFinite("weights.o", *w.o, false));
    return Ok{};
#undef ATTNSCOPE_CHECK
}

} // namespace attnscope
