#include "gpu/VulkanPooledSource.h"

#include "core/attention/HeadLayout.h"
#include "core/attention/Mask.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace attnscope::vk {

using Slot = PooledEngine::Slot;

namespace {

// The causal and window parts of the mask in the shaders' terms, into `src` (its window and
// flags). Row indices (`qp` and `kp` empty) the shaders compare themselves. Other positions go
// to the Positions slot: rebased to 32 bits (masking compares differences only), then each row's
// range of keys that may be allowed: contiguous where key positions never decrease (found by
// binary search), else every key. Returns that slot's words, empty when none.
Result<std::vector<std::uint32_t>> structuralMask(PooledSource &src, bool causal, std::int64_t window,
                                                  const std::vector<std::int64_t> &qp,
                                                  const std::vector<std::int64_t> &kp)
{
    src.maskFlags |= causal ? kCausal : 0;
    if (qp.empty() || (!causal && window <= 0)) {
        // A window of Tq rows or more masks nothing when positions are row indices.
        src.window = window > 0 && std::uint64_t(window) < src.tq ? std::uint64_t(window) : 0;
        return std::vector<std::uint32_t>{};
    }
    const std::uint64_t tq = src.tq, tk = src.tk;
    const auto [qLow, qHigh] = std::minmax_element(qp.begin(), qp.end());
    const auto [kLow, kHigh] = std::minmax_element(kp.begin(), kp.end());
    const std::int64_t lowest = std::min(*qLow, *kLow), highest = std::max(*qHigh, *kHigh);
    const std::uint64_t span = std::uint64_t(highest - lowest);
    if (span > 0xffffffffull)
        return Error{"pooled positions: they span " + std::to_string(span) +
                         " positions, more than the 2^32 the shaders compare",
                     ErrorKind::TooLarge};
    // A window wider than every difference masks nothing.
    src.window = window > 0 && std::uint64_t(window) <= span ? std::uint64_t(window) : 0;
    src.maskFlags |= kPositions;
    const bool sorted = std::is_sorted(kp.begin(), kp.end());
    std::vector<std::uint32_t> words(size_t(3 * tq + tk));
    for (std::uint64_t i = 0; i < tq; ++i) {
        words[i] = std::uint32_t(qp[i] - lowest);
        std::uint64_t begin = 0, end = tk;
        if (sorted) {
            if (causal)
                end = std::uint64_t(std::upper_bound(kp.begin(), kp.end(), qp[i]) - kp.begin());
            if (window > 0)
                begin = std::uint64_t(std::upper_bound(kp.begin(), kp.end(), qp[i] - window) - kp.begin());
            begin = std::min(begin, end);
        }
        words[size_t(tq + tk + i)] = std::uint32_t(begin);
        words[size_t(2 * tq + tk + i)] = std::uint32_t(end);
    }
    for (std::uint64_t j = 0; j < tk; ++j)
        words[size_t(tq + j)] = std::uint32_t(kp[j] - lowest);
    src.bytes[Slot::Positions] = words.size() * sizeof(std::uint32_t);
    return words;
}

bool areIndices(const std::vector<std::int64_t> &positions)
{
    for (size_t i = 0; i < positions.size(); ++i)
        if (positions[i] != std::int64_t(i))
            return false;
    return true;
}

} // namespace

Result<PooledResult> PooledEngine::run(const PooledShared &sh, const AttentionProblem &p, const PoolOptions &options,
                                       PooledRunStats &stats)
{
    const HeadLayout layout = HeadLayout::of(p.spec);
    const std::uint64_t f = sizeof(float), tq = std::uint64_t(p.tq()), tk = std::uint64_t(p.tk()),
                        heads = std::uint64_t(layout.heads), kvHeads = std::uint64_t(layout.kvHeads),
                        dk = std::uint64_t(layout.headDimQK), qkw = std::uint64_t(layout.queryWidth()),
                        kw = std::uint64_t(layout.keyWidth()), vw = std::uint64_t(layout.contextWidth()),
                        kvw = std::uint64_t(layout.valueWidth()), dout = std::uint64_t(p.dOut());
    const std::uint64_t words = (tk + 31) / 32;
    const bool cross = p.spec.mode == AttentionMode::Cross;
    const auto &w = p.weights;
    const std::uint64_t ropeRow = p.spec.rope ? dk * f : 0; // a cos and a sin per pair
    auto size = [&](const auto *m) { return m ? std::uint64_t(m->size()) * f : 0; };

    PooledSource src;
    src.tq = tq;
    src.tk = tk;
    src.heads = heads;
    src.dk = dk;
    src.dv = std::uint64_t(layout.headDimV);
    src.qkw = qkw;
    src.vw = vw;
    src.group = std::uint64_t(layout.groupSize());
    src.scale = float(p.spec.scale());
    if (p.spec.softcap)
        src.softcap = float(*p.spec.softcap);
    // Causal and the window compare the RoPE positions where given (core's StructuralMask).
    const bool indices = positionsAreIndices(p);
    auto mask =
        structuralMask(src, p.mask.causal, p.mask.window, indices ? std::vector<std::int64_t>{} : queryPositions(p),
                       indices ? std::vector<std::int64_t>{} : keyPositions(p));
    if (!mask)
        return mask.error();
    const std::vector<std::uint32_t> &positions = *mask;

    auto &bytes = src.bytes;
    bytes[Xq] = tq * std::uint64_t(p.dq()) * f;
    bytes[Xkv] = cross ? tk * std::uint64_t(p.dkv()) * f : 0;
    bytes[Xv] = p.hasSeparateValue() ? tk * std::uint64_t(p.dvIn()) * f : 0;
    bytes[Wq] = size(&w.q);
    bytes[Wk] = size(&w.k);
    bytes[Wv] = size(&w.v);
    bytes[Wo] = size(w.o ? &*w.o : nullptr);
    bytes[Bq] = size(w.qBias ? &*w.qBias : nullptr);
    bytes[Bk] = size(w.kBias ? &*w.kBias : nullptr);
    bytes[Bv] = size(w.vBias ? &*w.vBias : nullptr);
    bytes[Bo] = size(w.oBias ? &*w.oBias : nullptr);
    bytes[Sinks] = w.sinks ? heads * f : 0;
    bytes[RopeQ] = tq * ropeRow;
    bytes[RopeK] = tk * ropeRow;
    bytes[QNorm] = size(w.qNorm ? &*w.qNorm : nullptr);
    bytes[KNorm] = size(w.kNorm ? &*w.kNorm : nullptr);
    bytes[PadBits] = p.mask.keyPadding.empty() ? 0 : words * 4;
    bytes[CustomBits] = p.mask.allowed ? tq * words * 4 : 0;
    bytes[Q] = tq * qkw * f;
    bytes[K] = tk * kw * f;
    bytes[V] = tk * kvw * f;
    bytes[Context] = tq * vw * f;
    bytes[Output] = w.o ? tq * dout * f : 0;
    for (int s = Xq; s <= KNorm; ++s)
        src.upload[size_t(s)] = true;
    src.upload[PadBits] = src.upload[CustomBits] = src.upload[Positions] = true;
    src.maskFlags |= (bytes[PadBits] ? kPadding : 0) | (bytes[CustomBits] ? kCustom : 0) |
                     (p.spec.maskFill == MaskFill::NegLarge ? kNegLarge : 0) | (w.sinks ? kSinks : 0);

    // Inputs: the matrices as they are, padding and a custom mask as bits (1 = allowed).
    src.fill = [&](const std::function<void *(Slot)> &host) {
        auto put = [&](Slot s, const void *data) {
            if (bytes[s])
                std::memcpy(host(s), data, size_t(bytes[s]));
        };
        put(Xq, p.xq.data());
        if (cross)
            put(Xkv, p.xkv.data());
        if (p.hasSeparateValue())
            put(Xv, p.valueInput().data());
        put(Wq, w.q.data());
        put(Wk, w.k.data());
        put(Wv, w.v.data());
        if (w.o)
            put(Wo, w.o->data());
        if (w.qBias)
            put(Bq, w.qBias->data());
        if (w.kBias)
            put(Bk, w.kBias->data());
        if (w.vBias)
            put(Bv, w.vBias->data());
        if (w.oBias)
            put(Bo, w.oBias->data());
        if (w.sinks)
            put(Sinks, w.sinks->data());
        if (w.qNorm)
            put(QNorm, w.qNorm->data());
        if (w.kNorm)
            put(KNorm, w.kNorm->data());
        if (p.spec.rope) {
            put(RopeQ, ropeTableForGpu(queryPositions(p), *p.spec.rope, int(dk)).data());
            put(RopeK, ropeTableForGpu(keyPositions(p), *p.spec.rope, int(dk)).data());
        }
        if (bytes[PadBits]) {
            std::vector<std::uint32_t> bits(size_t(words), 0u);
            for (std::uint64_t j = 0; j < tk; ++j)
                if (p.mask.keyPadding[size_t(j)])
                    bits[size_t(j / 32)] |= 1u << (j % 32);
            put(PadBits, bits.data());
        }
        if (!positions.empty())
            put(Positions, positions.data());
        if (bytes[CustomBits]) {
            auto *bits = static_cast<std::uint32_t *>(host(CustomBits));
            std::memset(bits, 0, size_t(bytes[CustomBits]));
            for (std::uint64_t i = 0; i < tq; ++i)
                for (std::uint64_t j = 0; j < tk; ++j)
                    if ((*p.mask.allowed)(Eigen::Index(i), Eigen::Index(j)) != 0)
                        bits[i * words + j / 32] |= 1u << (j % 32);
        }
    };

    src.prepare = [&](PassRecorder &rec, const std::function<const Buffer &(Slot)> &device) -> Status {
        const Buffer &xkv = cross ? device(Xkv) : device(Xq);
        const Buffer &xv = p.hasSeparateValue() ? device(Xv) : xkv;
        auto bias = [&](Slot b) { return bytes[b] ? &device(b) : nullptr; };
        const ProjectionPass projections[] = {
            {"pooled projection Q", &device(Xq), tq, std::uint64_t(p.dq()), qkw, &device(Wq), bias(Bq), &device(Q)},
            {"pooled projection K", &xkv, tk, std::uint64_t(p.dkv()), kw, &device(Wk), bias(Bk), &device(K)},
            {"pooled projection V", &xv, tk, std::uint64_t(p.dvIn()), kvw, &device(Wv), bias(Bv), &device(V)},
        };
        for (const ProjectionPass &pr : projections)
            if (Status s = rec.projection(pr); !s)
                return s;
        rec.computeBarrier();
        if (w.qNorm || w.kNorm) { // per-head q/k norms in place, before RoPE (as the CPU engine)
            const float eps = float(p.spec.qkNormEps);
            if (w.qNorm)
                if (Status s = rec.headNorm({"pooled q norm", tq, heads, dk, &device(Q), &device(QNorm), eps}); !s)
                    return s;
            if (w.kNorm)
                if (Status s = rec.headNorm({"pooled k norm", tk, kvHeads, dk, &device(K), &device(KNorm), eps}); !s)
                    return s;
            rec.computeBarrier();
        }
        if (p.spec.rope) { // rotated in place: the pooled path keeps no vectors before RoPE
            const Buffer &q = device(Q), &k = device(K);
            const RopePass ropes[] = {
                {"pooled RoPE Q", tq, heads, dk, &q, &q, &device(RopeQ)},
                {"pooled RoPE K", tk, kvHeads, dk, &k, &k, &device(RopeK)},
            };
            for (const RopePass &r : ropes)
                if (Status s = rec.rope(r); !s)
                    return s;
            rec.computeBarrier();
        }
        return Ok{};
    };

    src.finish = [&](PassRecorder &rec, const std::function<const Buffer &(Slot)> &device, std::uint64_t first,
                     std::uint64_t count) -> Status {
        if (!w.o)
            return Ok{};
        GemmPass out;
        out.name = "pooled output projection";
        out.m = count;
        out.n = dout;
        out.k = vw;
        out.a = {&device(Context), first * vw, vw, 1, 0};
        out.b = {&device(Wo), 0, dout, 1, 0};
        out.c = {&device(Output), first * dout, dout, 1, 0};
        out.bias = bytes[Bo] ? &device(Bo) : nullptr;
        return rec.gemm(out);
    };

    src.output = [&](const std::function<const float *(Slot)> &view, Eigen::Index first, Eigen::Index count) {
        using ConstMap = Eigen::Map<const MatrixF>;
        return w.o ? MatrixF(ConstMap(view(Output), p.tq(), p.dOut()).middleRows(first, count))
                   : MatrixF(ConstMap(view(Context), p.tq(), p.vWidth()).middleRows(first, count));
    };
    return execute(sh, src, options, stats);
}

Result<PooledResult> PooledEngine::runQk(const PooledShared &sh, const QkLayer &layer, const PoolOptions &options,
                                         PooledRunStats &stats)
{
    const std::uint64_t f = sizeof(float), tq = std::uint64_t(layer.tq()), tk = std::uint64_t(layer.tk()),
                        heads = std::uint64_t(layer.heads), hd = std::uint64_t(layer.headDim);
    PooledSource src;
    src.tq = tq;
    src.tk = tk;
    src.heads = heads;
    src.dk = hd;
    src.qkw = heads * hd;
    src.group = heads / std::uint64_t(layer.kvHeads);
    src.scale = float(layer.scale);
    if (layer.softcap)
        src.softcap = float(*layer.softcap);
    src.bytes[Q] = tq * heads * hd * f;
    src.bytes[K] = tk * std::uint64_t(layer.kvHeads) * hd * f;
    src.bytes[Sinks] = layer.sinks ? heads * f : 0;
    src.upload[Q] = src.upload[K] = src.upload[Sinks] = src.upload[Positions] = true;

    std::vector<std::int64_t> qp, kp; // empty: the row indices
    if (!areIndices(layer.queryPositions) || !areIndices(layer.keyPositions)) {
        for (Eigen::Index i = 0; i < layer.tq(); ++i)
            qp.push_back(layer.queryPosition(i));
        for (Eigen::Index j = 0; j < layer.tk(); ++j)
            kp.push_back(layer.keyPosition(j));
    }
    auto mask = structuralMask(src, layer.causal, layer.window, qp, kp);
    if (!mask)
        return mask.error();
    const std::vector<std::uint32_t> &positions = *mask;
    src.maskFlags |= layer.sinks ? kSinks : 0;

    src.fill = [&](const std::function<void *(Slot)> &host) {
        std::memcpy(host(Q), layer.q.data(), size_t(src.bytes[Q]));
        std::memcpy(host(K), layer.k.data(), size_t(src.bytes[K]));
        if (layer.sinks)
            std::memcpy(host(Sinks), layer.sinks->data(), size_t(src.bytes[Sinks]));
        if (!positions.empty())
            std::memcpy(host(Positions), positions.data(), size_t(src.bytes[Positions]));
    };
    return execute(sh, src, options, stats);
}

} // namespace attnscope::vk
