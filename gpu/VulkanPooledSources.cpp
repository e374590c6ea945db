#include "gpu/VulkanPooledSource.h"

#include "core/attention/HeadLayout.h"
#include "core/attention/Mask.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace attnscope::vk {

using Slot = PooledEngine::Slot;

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
    // The shaders compare row indices for causal and the window. Where given RoPE positions are
    // not the row indices, they compare positions instead: then the host evaluates the whole
    // structural mask (core's StructuralMask, so exactly the CPU's) into the custom bits, and
    // the shaders apply no structural part of their own.
    const bool maskOnHost = !positionsAreIndices(p) && (p.mask.causal || p.mask.window > 0);
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
    // A window of Tq rows or more masks nothing when positions are row indices.
    src.window =
        maskOnHost || p.mask.window <= 0 || std::uint64_t(p.mask.window) >= tq ? 0 : std::uint64_t(p.mask.window);

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
    bytes[PadBits] = p.mask.keyPadding.empty() || maskOnHost ? 0 : words * 4;
    bytes[CustomBits] = p.mask.allowed || maskOnHost ? tq * words * 4 : 0;
    bytes[Q] = tq * qkw * f;
    bytes[K] = tk * kw * f;
    bytes[V] = tk * kvw * f;
    bytes[Context] = tq * vw * f;
    bytes[Output] = w.o ? tq * dout * f : 0;
    for (int s = Xq; s <= KNorm; ++s)
        src.upload[size_t(s)] = true;
    src.upload[PadBits] = src.upload[CustomBits] = true;
    src.maskFlags = (p.mask.causal && !maskOnHost ? kCausal : 0) | (bytes[PadBits] ? kPadding : 0) |
                    (bytes[CustomBits] ? kCustom : 0) | (p.spec.maskFill == MaskFill::NegLarge ? kNegLarge : 0) |
                    (w.sinks ? kSinks : 0);

    // Inputs: the matrices as they are, the mask as bits (1 = allowed).
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
        if (bytes[CustomBits]) {
            auto *bits = static_cast<std::uint32_t *>(host(CustomBits));
            std::memset(bits, 0, size_t(bytes[CustomBits]));
            const StructuralMask structural(p);
            auto allowed = [&](std::uint64_t i, std::uint64_t j) {
                return maskOnHost ? structural.allowed(Eigen::Index(i), Eigen::Index(j))
                                  : (*p.mask.allowed)(Eigen::Index(i), Eigen::Index(j)) != 0;
            };
            for (std::uint64_t i = 0; i < tq; ++i)
                for (std::uint64_t j = 0; j < tk; ++j)
                    if (allowed(i, j))
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

    // Positions that are the row indices (none given) take the shaders' own index mask; others
    // are handed over rebased to 32 bits, with each row's range of keys that may be allowed.
    bool indices = true;
    for (Eigen::Index i = 0; i < layer.tq() && indices; ++i)
        indices = layer.queryPosition(i) == i;
    for (Eigen::Index j = 0; j < layer.tk() && indices; ++j)
        indices = layer.keyPosition(j) == j;
    const bool structural = layer.causal || layer.window > 0;
    std::vector<std::uint32_t> positions;
    if (!indices && structural) {
        std::vector<std::int64_t> qp(tq), kp(tk);
        for (std::uint64_t i = 0; i < tq; ++i)
            qp[i] = layer.queryPosition(Eigen::Index(i));
        for (std::uint64_t j = 0; j < tk; ++j)
            kp[j] = layer.keyPosition(Eigen::Index(j));
        const std::int64_t lowest = std::min(*std::min_element(qp.begin(), qp.end()),
                                             *std::min_element(kp.begin(), kp.end())),
                           highest = std::max(*std::max_element(qp.begin(), qp.end()),
                                              *std::max_element(kp.begin(), kp.end()));
        if (std::uint64_t(highest - lowest) > 0xffffffffull)
            return Error{"pooled positions: they span " + std::to_string(highest - lowest) +
                             " positions, more than the 2^32 the shaders compare",
                         ErrorKind::TooLarge};
        // Masking compares differences of positions only, so the shift changes nothing; a
        // window wider than every difference masks nothing.
        const std::uint64_t span = std::uint64_t(highest - lowest);
        src.window = layer.window > 0 && std::uint64_t(layer.window) <= span ? std::uint64_t(layer.window) : 0;
        const bool sorted = std::is_sorted(kp.begin(), kp.end());
        positions.resize(size_t(3 * tq + tk));
        for (std::uint64_t i = 0; i < tq; ++i) {
            positions[i] = std::uint32_t(qp[i] - lowest);
            std::uint64_t begin = 0, end = tk;
            if (sorted) { // the allowed keys of row i are contiguous
                if (layer.causal)
                    end = std::uint64_t(std::upper_bound(kp.begin(), kp.end(), qp[i]) - kp.begin());
                if (layer.window > 0)
                    begin = std::uint64_t(std::upper_bound(kp.begin(), kp.end(), qp[i] - layer.window) - kp.begin());
                begin = std::min(begin, end);
            }
            positions[size_t(tq + tk + i)] = std::uint32_t(begin);
            positions[size_t(2 * tq + tk + i)] = std::uint32_t(end);
        }
        for (std::uint64_t j = 0; j < tk; ++j)
            positions[size_t(tq + j)] = std::uint32_t(kp[j] - lowest);
        src.bytes[Positions] = positions.size() * sizeof(std::uint32_t);
    } else {
        // A window of Tq rows or more masks nothing when positions are row indices.
        src.window = layer.window > 0 && std::uint64_t(layer.window) < tq ? std::uint64_t(layer.window) : 0;
    }
    src.maskFlags = (layer.causal ? kCausal : 0) | (layer.sinks ? kSinks : 0) | (positions.empty() ? 0 : kPositions);

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
