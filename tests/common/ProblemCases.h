#pragma once

// Case families shared by every backend's suite: the same problems run on the CPU engine
// and on Vulkan, each compared with the double reference.

#include "core/attention/AttentionProblem.h"
#include "core/attention/RandomProblem.h"

#include <QMetaType>
#include <QTest>

namespace attnscope::test {

struct Case {
    AttentionMode mode = AttentionMode::Self;
    int tq = 4, tk = 4, dq = 6, dkv = 6;
    int heads = 2, dk = 3, dv = 3;
    bool biases = false, outputProjection = true;
    ScaleMode scaleMode = ScaleMode::InvSqrtDk;
    double scaleValue = 1.0;
    MaskFill fill = MaskFill::NegInf;
    bool causal = false, padding = false, custom = false;
    double inputScale = 1.0; // large values drive the logits to ~1e4
    int dOut = 5;
    int dvIn = 0; // cross only, > 0: a separate value input of this width (V = Xv·Wv)
    // Modern attention (design.md): 0 / false / empty = unused.
    int kvHeads = 0;
    bool rope = false;
    double ropeBase = kDefaultRopeBase;
    std::vector<std::int64_t> queryPositions, keyPositions;
    std::int64_t window = 0;
    double softcap = 0.0;
    bool sinks = false;
    std::vector<double> ropeFrequencies; // a model's scaled rope
    double ropeScaling = 1.0;
    bool qkNorm = false; // per-head RMSNorms of q and k (Qwen 3, Gemma 3)
};

inline AttentionProblem makeProblem(const Case &c, std::uint64_t seed = 42)
{
    AttentionProblem p;
    p.spec.mode = c.mode;
    p.spec.heads = c.heads;
    p.spec.headDimQK = c.dk;
    p.spec.headDimV = c.dv;
    p.spec.scaleMode = c.scaleMode;
    p.spec.scaleValue = c.scaleValue;
    p.spec.maskFill = c.fill;
    p.spec.kvHeads = c.kvHeads;
    if (c.rope)
        p.spec.rope = RopeSpec{.base = c.ropeBase,
                               .frequencies = c.ropeFrequencies,
                               .scaling = c.ropeScaling,
                               .queryPositions = c.queryPositions,
                               .keyPositions = c.keyPositions};
    if (c.softcap > 0)
        p.spec.softcap = c.softcap;
    p.mask.window = c.window;
    const int kvHeads = c.kvHeads > 0 ? c.kvHeads : c.heads;
    const bool cross = c.mode == AttentionMode::Cross;
    const int tk = cross ? c.tk : c.tq, dkv = cross ? c.dkv : c.dq;
    p.xq = initMatrix(c.tq, c.dq, InitKind::Gaussian, seed, c.inputScale);
    if (cross)
        p.xkv = initMatrix(tk, dkv, InitKind::Gaussian, seed + 1, c.inputScale);
    p.weights.q = initMatrix(c.dq, c.heads * c.dk, InitKind::Gaussian, seed + 2, 0.7);
    p.weights.k = initMatrix(dkv, kvHeads * c.dk, InitKind::Gaussian, seed + 3, 0.7);
    const bool separateValue = cross && c.dvIn > 0;
    if (separateValue)
        p.xv = initMatrix(tk, c.dvIn, InitKind::Gaussian, seed + 10, c.inputScale);
    p.weights.v = initMatrix(separateValue ? c.dvIn : dkv, kvHeads * c.dv, InitKind::Gaussian, seed + 4, 0.7);
    if (c.sinks)
        p.weights.sinks = initMatrix(1, c.heads, InitKind::Gaussian, seed + 11, 1.5).row(0);
    if (c.qkNorm) {
        p.weights.qNorm = initMatrix(1, c.dk, InitKind::Gaussian, seed + 12, 0.5).row(0).array() + 1.0f;
        p.weights.kNorm = initMatrix(1, c.dk, InitKind::Gaussian, seed + 13, 0.5).row(0).array() + 1.0f;
        p.spec.qkNormEps = 1e-5;
    }
    if (c.outputProjection)
        p.weights.o = initMatrix(c.heads * c.dv, c.dOut, InitKind::Gaussian, seed + 5, 0.7);
    if (c.biases) {
        p.weights.qBias = initMatrix(1, c.heads * c.dk, InitKind::Gaussian, seed + 6, 0.3);
        p.weights.kBias = initMatrix(1, kvHeads * c.dk, InitKind::Gaussian, seed + 7, 0.3);
        p.weights.vBias = initMatrix(1, kvHeads * c.dv, InitKind::Gaussian, seed + 8, 0.3);
        if (c.outputProjection)
            p.weights.oBias = initMatrix(1, c.dOut, InitKind::Gaussian, seed + 9, 0.3);
    }
    p.mask.causal = c.causal;
    if (c.padding) {
        p.mask.keyPadding.assign(size_t(tk), true);
        p.mask.keyPadding.back() = false;
        if (tk > 2)
            p.mask.keyPadding[size_t(tk) - 2] = false;
    }
    if (c.custom) {
        // A checkerboard-like pattern with one fully blocked query row (row 1).
        MaskMatrix allowed(c.tq, tk);
        for (int i = 0; i < c.tq; ++i)
            for (int j = 0; j < tk; ++j)
                allowed(i, j) = (i + 2 * j) % 3 != 0 ? 1 : 0;
        if (c.tq > 1)
            allowed.row(1).setZero();
        p.mask.allowed = allowed;
    }
    return p;
}

// Adds one row per semantic family of design.md (the column: Case "c").
inline void addSemanticCases()
{
    QTest::addColumn<Case>("c");
    Case base;
    QTest::newRow("self, 2 heads") << base;
    Case c = base;
    c.heads = 1;
    QTest::newRow("one head") << c;
    c = base;
    c.heads = 8;
    c.dk = 2;
    c.dv = 2;
    QTest::newRow("eight heads") << c;
    c = base;
    c.dk = 5;
    c.dv = 2;
    QTest::newRow("dK != dV") << c;
    c = base;
    c.mode = AttentionMode::Cross;
    c.tq = 3;
    c.tk = 7;
    c.dq = 4;
    c.dkv = 9;
    QTest::newRow("cross, Tq != Tk, d_q != d_kv") << c;
    c.dk = 4;
    c.dv = 1;
    c.padding = true;
    QTest::newRow("cross, dK != dV, padded source") << c;
    c.dvIn = 5;
    c.biases = true;
    QTest::newRow("cross, separate value input (d_v_in 5), padded, biases") << c;
    c = base;
    c.biases = true;
    QTest::newRow("biases") << c;
    c = base;
    c.outputProjection = false;
    QTest::newRow("no Wo") << c;
    c.biases = true;
    QTest::newRow("no Wo, biases") << c;
    c = base;
    c.scaleMode = ScaleMode::None;
    QTest::newRow("scale none") << c;
    c.scaleMode = ScaleMode::Custom;
    c.scaleValue = 0.37;
    QTest::newRow("scale 0.37") << c;
    c = base;
    c.causal = true;
    c.tq = 6;
    QTest::newRow("causal") << c;
    c.fill = MaskFill::NegLarge;
    QTest::newRow("causal, -1e9") << c;
    c = base;
    c.padding = true;
    QTest::newRow("key padding") << c;
    c.fill = MaskFill::NegLarge;
    QTest::newRow("key padding, -1e9") << c;
    c = base;
    c.custom = true;
    c.tq = 5;
    QTest::newRow("custom mask") << c;
    c.causal = true;
    c.padding = true;
    QTest::newRow("causal + padding + custom") << c;
    c.fill = MaskFill::NegLarge;
    QTest::newRow("causal + padding + custom, -1e9") << c;
    c = base;
    c.mode = AttentionMode::Cross;
    c.tq = 6;
    c.tk = 4;
    c.dkv = 3;
    c.causal = true;
    c.custom = true;
    c.biases = true;
    QTest::newRow("cross, causal + custom, Tq > Tk") << c;
    c = base;
    c.tq = 1;
    QTest::newRow("one token") << c;
    c = base;
    c.tq = 150;
    c.causal = true;
    c.heads = 3;
    c.dk = 7;
    c.dv = 5;
    c.biases = true;
    QTest::newRow("150 tokens, causal (several row blocks)") << c;
    c.causal = false;
    c.padding = true;
    c.custom = true;
    QTest::newRow("150 tokens, padding + custom") << c;
    c = base;
    c.mode = AttentionMode::Cross;
    c.tq = 129;
    c.tk = 65;
    c.causal = true;
    c.fill = MaskFill::NegLarge;
    QTest::newRow("cross 129 x 65, causal, -1e9 (empty rows are none)") << c;
}

// Adds one row per field of design.md's "Modern attention", each alone and all combined, with
// biases, W_O, cross-attention, both fills and several row blocks (the column: Case "c").
inline void addModernCases()
{
    QTest::addColumn<Case>("c");
    Case base;
    base.heads = 4;
    base.dk = 4;
    base.dv = 3;
    base.tq = 7;
    base.biases = true;
    Case c = base;
    c.kvHeads = 2;
    QTest::newRow("grouped-query: 4 heads, 2 key/value heads") << c;
    c.kvHeads = 1;
    QTest::newRow("multi-query: 1 key/value head") << c;
    c.outputProjection = false;
    QTest::newRow("multi-query, no Wo") << c;
    c = base;
    c.rope = true;
    QTest::newRow("RoPE, base 10000") << c;
    c.ropeBase = 7.5;
    QTest::newRow("RoPE, base 7.5 (large angles)") << c;
    c.ropeFrequencies = {0.9, 0.05};
    c.ropeScaling = 1.3;
    QTest::newRow("RoPE, given frequencies and scaling (YaRN)") << c;
    c.ropeFrequencies.clear();
    c.ropeScaling = 1.0;
    c.qkNorm = true;
    QTest::newRow("q/k norms before RoPE (Qwen 3)") << c;
    c.qkNorm = false;
    c.queryPositions = {3, 9, 10, 11, 40, 41, 100};
    QTest::newRow("RoPE, given positions") << c;
    c.causal = true;
    c.window = 3;
    QTest::newRow("RoPE positions, causal + window compare positions") << c;
    c = base;
    c.window = 3;
    QTest::newRow("window 3") << c;
    c.causal = true;
    QTest::newRow("causal + window 3") << c;
    c.fill = MaskFill::NegLarge;
    QTest::newRow("causal + window 3, -1e9") << c;
    c = base;
    c.window = 1;
    c.causal = true;
    QTest::newRow("window 1: each token sees itself") << c;
    c = base;
    c.softcap = 0.5;
    c.inputScale = 3.0;
    QTest::newRow("soft-cap 0.5") << c;
    c = base;
    c.sinks = true;
    QTest::newRow("sinks") << c;
    c.causal = true;
    c.custom = true; // row 1 has no allowed key: its weights stay 0 beside the sink
    QTest::newRow("sinks, causal + custom (an empty row)") << c;
    c.fill = MaskFill::NegLarge;
    QTest::newRow("sinks, causal + custom, -1e9") << c;
    c = base;
    c.mode = AttentionMode::Cross;
    c.tq = 5;
    c.tk = 9;
    c.dkv = 4;
    c.kvHeads = 2;
    c.rope = true;
    c.keyPositions = {0, 1, 2, 3, 4, 5, 6, 7, 8};
    c.queryPositions = {2, 4, 6, 8, 8};
    c.causal = true;
    c.window = 4;
    c.softcap = 2.0;
    c.sinks = true;
    c.padding = true;
    QTest::newRow("cross: everything together") << c;
    c.dvIn = 5;
    QTest::newRow("cross, separate value input: everything together") << c;
    c = base;
    c.kvHeads = 2;
    c.rope = true;
    c.window = 4;
    c.causal = true;
    c.softcap = 1.5;
    c.sinks = true;
    c.scaleMode = ScaleMode::Custom;
    c.scaleValue = 0.8;
    QTest::newRow("self: everything together") << c;
    c.tq = 150;
    c.heads = 6;
    c.kvHeads = 3;
    c.dk = 6;
    c.window = 40;
    QTest::newRow("self, 150 tokens: everything together (several row blocks)") << c;
}

} // namespace attnscope::test

Q_DECLARE_METATYPE(attnscope::test::Case)
