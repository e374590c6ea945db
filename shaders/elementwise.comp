#version 450
// The element-wise steps of a model's block (core/models/TransformerModel.cpp): a residual sum
// x += b, an activation x = act(x), and a gated MLP's x = x·act(b) (x the up projection, b the
// gate's). One invocation per element; x is read and written in place.

#include "common.glsl"

layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) buffer BufX { float x[]; };
layout(std430, set = 0, binding = 1) readonly buffer BufB { float b[]; };

layout(push_constant) uniform Push {
    uint count;      // elements
    uint op;         // OP_ADD, OP_ACTIVATE, OP_GATE
    uint activation; // ACT_* (core's Activation, in its order)
} pc;

#define OP_ADD 0u
#define OP_ACTIVATE 1u
#define OP_GATE 2u

#define ACT_GELU_TANH 0u
#define ACT_GELU_ERF 1u
#define ACT_SILU 2u
#define ACT_RELU 3u

// tanh from exp(-2|x|), which never overflows (as common.glsl's softcapped).
float safeTanh(float v)
{
    const float e = exp(-2.0 * abs(v));
    return sign(v) * ((1.0 - e) / (1.0 + e));
}

// erf by Abramowitz and Stegun 7.1.26 with exp: absolute error below 1.5e-7 over the reals
// (GLSL has no erf).
float erfApprox(float v)
{
    const float a = abs(v);
    const float t = 1.0 / (1.0 + 0.3275911 * a);
    const float p = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    return sign(v) * (1.0 - p * exp(-a * a));
}

float activate(float v)
{
    if (pc.activation == ACT_GELU_TANH)
        return 0.5 * v * (1.0 + safeTanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    if (pc.activation == ACT_GELU_ERF)
        return 0.5 * v * (1.0 + erfApprox(v * 0.7071067811865476));
    if (pc.activation == ACT_SILU) // -0 far below zero, as the CPU's x / (1 + inf)
        return v / (1.0 + exp(min(-v, 88.0)));
    return max(v, 0.0);
}

void main()
{
    const uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * WG;
    if (i >= pc.count)
        return;
    if (pc.op == OP_ADD)
        x[i] = x[i] + b[i];
    else if (pc.op == OP_ACTIVATE)
        x[i] = activate(x[i]);
    else
        x[i] = x[i] * activate(b[i]);
}
