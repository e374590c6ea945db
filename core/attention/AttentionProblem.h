#pragma once

#include "core/Tensor.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace attnscope {

enum class AttentionMode { Self, Cross };

// How the raw scores Q_h·K_hᵀ are scaled before masking and softmax.
enum class ScaleMode {
    InvSqrtDk, // 1 / sqrt(headDimQK), the usual choice
    None,      // 1, as in the self-attention tutorial's worked example
    Custom,    // AttentionSpec::scaleValue
};

// The value a masked logit is replaced with. -inf gives masked weights of exactly 0 and
// fully masked rows of 0; -1e9 reproduces code that fills with a large negative number,
// where a fully masked row becomes uniform.
enum class MaskFill { NegInf, NegLarge };

inline constexpr double kNegLargeFill = -1e9;

inline constexpr double kDefaultRopeBase = 10000.0;

// Rotary position embeddings (design.md, "Modern attention"): after the projections, each
// head's q and k are rotated by their position, dimension i paired with i + dK/2.
struct RopeSpec {
    double base = kDefaultRopeBase; // theta_i = base^(-2i/dK)
    // theta_i for i in [0, dK/2) given one by one, replacing the base's (a model's rope
    // scaling: linear, dynamic, YaRN, Llama 3); empty: from the base.
    std::vector<double> frequencies;
    // Multiplies every cos and sin (YaRN's attention factor), so q·k gains its square; 1: none.
    double scaling = 1.0;
    // One non-negative position per query (key) row; empty: 0, 1, ..., T-1. Given positions
    // are also what the causal mask and the window compare.
    std::vector<std::int64_t> queryPositions;
    std::vector<std::int64_t> keyPositions;
};

// The shape of the computation: everything but the numbers.
struct AttentionSpec {
    AttentionMode mode = AttentionMode::Self;
    int heads = 1;
    int headDimQK = 1; // dK
    int headDimV = 1;  // dV
    ScaleMode scaleMode = ScaleMode::InvSqrtDk;
    double scaleValue = 1.0; // used only with ScaleMode::Custom
    MaskFill maskFill = MaskFill::NegInf;
    // Key/value heads G (grouped-query attention; 1 is multi-query); 0: as many as `heads`.
    // Ask core/attention/HeadLayout.h which columns a head reads, never h*dK.
    int kvHeads = 0;
    std::optional<RopeSpec> rope;
    std::optional<double> softcap; // c > 0: scores become c*tanh(scores/c) before the mask
    // The epsilon of the per-head RMSNorms of q and k (AttentionWeights::qNorm, kNorm).
    double qkNormEps = 1e-6;

    // The factor applied to Q_h·K_hᵀ.
    double scale() const;
    // G: kvHeads, or heads where it is 0.
    int keyValueHeads() const { return kvHeads > 0 ? kvHeads : heads; }
};

// Projection weights; they multiply on the right (Q = Xq·Wq + bq).
struct AttentionWeights {
    MatrixF q;                    // d_q  by heads*headDimQK
    MatrixF k;                    // d_kv by kvHeads*headDimQK
    MatrixF v;                    // d_v_in (the value input's width) by kvHeads*headDimV
    std::optional<MatrixF> o;     // heads*headDimV by d_out; absent: output = context
    std::optional<VectorF> qBias; // heads*headDimQK
    std::optional<VectorF> kBias; // kvHeads*headDimQK
    std::optional<VectorF> vBias; // kvHeads*headDimV
    std::optional<VectorF> oBias; // d_out (only with o)
    // One sink logit per query head: it joins each row's softmax (never scaled, capped or
    // masked) and is then dropped, so a row's weights sum to less than 1.
    std::optional<VectorF> sinks;
    // Per-head RMSNorm weights (headDimQK each) applied to every head of q (k) after the
    // projection and before RoPE: x·w/sqrt(mean(x²) + qkNormEps) (Qwen 3, Gemma 3).
    std::optional<VectorF> qNorm;
    std::optional<VectorF> kNorm;
};

// The parts of the "allowed" mask; the effective mask is their AND.
struct MaskSpec {
    bool causal = false;               // key j allowed for query i only if j <= i
    std::vector<bool> keyPadding;      // empty or Tk entries; true = real token
    std::optional<MaskMatrix> allowed; // Tq by Tk custom matrix, 1 = allowed
    std::int64_t window = 0;           // sliding window W >= 1: key j allowed only if j > i - W; 0: none
};

// One complete attention computation: spec, inputs, weights and mask.
struct AttentionProblem {
    AttentionSpec spec;
    MatrixF xq;  // Tq by d_q
    MatrixF xkv; // Tk by d_kv; ignored (and usually empty) in self-attention
    // Cross-attention only: a separate value input (PyTorch's attention(query, key, value) with
    // three different tensors), Tk by d_v_in. Absent: the values come from the key input.
    std::optional<MatrixF> xv;
    AttentionWeights weights;
    MaskSpec mask;
    // false: the caller reads the weights and the outputs, not the scores (a model's forward,
    // which keeps only its attentions). An engine may then leave the trace's scores empty and
    // skip the products the mask hides; everything else in the trace is as with true.
    bool keepScores = true;

    // The key/value input: xkv in cross-attention, xq in self-attention.
    const MatrixF &keyInput() const { return spec.mode == AttentionMode::Cross ? xkv : xq; }

    // The value input: xv where a cross-attention problem gives one, else the key input.
    const MatrixF &valueInput() const { return spec.mode == AttentionMode::Cross && xv ? *xv : keyInput(); }
    bool hasSeparateValue() const { return spec.mode == AttentionMode::Cross && xv.has_value(); }

    Eigen::Index tq() const { return xq.rows(); }
    Eigen::Index tk() const { return keyInput().rows(); }
    Eigen::Index dq() const { return xq.cols(); }
    Eigen::Index dkv() const { return keyInput().cols(); }
    Eigen::Index dvIn() const { return valueInput().cols(); }
    // Widths of Q (heads*dK), of the context (heads*dV), and of K and V (kvHeads*dK, kvHeads*dV).
    Eigen::Index qkWidth() const { return Eigen::Index(spec.heads) * spec.headDimQK; }
    Eigen::Index vWidth() const { return Eigen::Index(spec.heads) * spec.headDimV; }
    Eigen::Index kWidth() const { return Eigen::Index(spec.keyValueHeads()) * spec.headDimQK; }
    Eigen::Index kvVWidth() const { return Eigen::Index(spec.keyValueHeads()) * spec.headDimV; }
    Eigen::Index dOut() const { return weights.o ? weights.o->cols() : vWidth(); }
};

} // namespace attnscope
