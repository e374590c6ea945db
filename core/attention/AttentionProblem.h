#pragma once

#include "core/Tensor.h"

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

// The shape of the computation: everything but the numbers.
struct AttentionSpec {
    AttentionMode mode = AttentionMode::Self;
    int heads = 1;
    int headDimQK = 1; // dK
    int headDimV = 1;  // dV
    ScaleMode scaleMode = ScaleMode::InvSqrtDk;
    double scaleValue = 1.0; // used only with ScaleMode::Custom
    MaskFill maskFill = MaskFill::NegInf;

    // The factor applied to Q_h·K_hᵀ.
    double scale() const;
};

// Projection weights; they multiply on the right (Q = Xq·Wq + bq).
struct AttentionWeights {
    MatrixF q;                    // d_q  by heads*headDimQK
    MatrixF k;                    // d_kv by heads*headDimQK
    MatrixF v;                    // d_v_in (the value input's width) by heads*headDimV
    std::optional<MatrixF> o;     // heads*headDimV by d_out; absent: output = context
    std::optional<VectorF> qBias; // heads*headDimQK
    std::optional<VectorF> kBias; // heads*headDimQK
    std::optional<VectorF> vBias; // heads*headDimV
    std::optional<VectorF> oBias; // d_out (only with o)
};

// The parts of the "allowed" mask; the effective mask is their AND.
struct MaskSpec {
    bool causal = false;               // key j allowed for query i only if j <= i
    std::vector<bool> keyPadding;      // empty or Tk entries; true = real token
    std::optional<MaskMatrix> allowed; // Tq by Tk custom matrix, 1 = allowed
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
    Eigen::Index qkWidth() const { return Eigen::Index(spec.heads) * spec.headDimQK; }
    Eigen::Index vWidth() const { return Eigen::Index(spec.heads) * spec.headDimV; }
    Eigen::Index dOut() const { return weights.o ? weights.o->cols() : vWidth(); }
};

} // namespace attnscope
