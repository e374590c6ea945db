#version 450
// A model's LayerNorm or RMSNorm over whole rows (core/models/TransformerModel.h normalizeRows):
// y = (x - mean)/sqrt(var + eps)·w + b, or x/sqrt(mean(x²) + eps)·w. One workgroup per row:
// every invocation sums a strided share of the row, the shares are added in a tree in shared
// memory (summing in double, as the CPU does, is not needed: a tree of float partial sums over
// a few thousand values keeps its relative error near log2(d)·2^-24).

#include "common.glsl"

layout(constant_id = 0) const uint WG = 128; // invocations per row; a power of two
layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer BufX { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer BufY { float y[]; };
layout(std430, set = 0, binding = 2) readonly buffer BufWeight { float weight[]; };
layout(std430, set = 0, binding = 3) readonly buffer BufBias { float bias[]; };

layout(push_constant) uniform Push {
    uint rows, cols;
    uint flags; // FLAG_NORM_LAYER: subtract the mean and add the bias (LayerNorm)
    float eps;
} pc;

shared float partial[WG];

float rowSum(float v)
{
    const uint t = gl_LocalInvocationID.x;
    partial[t] = v;
    barrier();
    for (uint s = WG / 2u; s > 0u; s >>= 1u) {
        if (t < s)
            partial[t] += partial[t + s];
        barrier();
    }
    const float total = partial[0];
    barrier();
    return total;
}

void main()
{
    const uint r = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    if (r >= pc.rows) // the whole workgroup leaves together
        return;
    const uint t = gl_LocalInvocationID.x, base = r * pc.cols;
    const bool layer = (pc.flags & FLAG_NORM_LAYER) != 0u;
    const float n = float(pc.cols);
    float mean = 0.0;
    if (layer) {
        float s = 0.0;
        for (uint c = t; c < pc.cols; c += WG)
            s += x[base + c];
        mean = rowSum(s) / n;
    }
    float s = 0.0;
    for (uint c = t; c < pc.cols; c += WG) {
        const float d = x[base + c] - mean;
        s += d * d;
    }
    const float inv = 1.0 / sqrt(rowSum(s) / n + pc.eps);
    for (uint c = t; c < pc.cols; c += WG) {
        // The CPU's order: ((x - mean)·inv)·w + b, unfused.
        precise float v = (x[base + c] - mean) * inv;
        precise float w = v * weight[c];
        y[base + c] = layer ? w + bias[c] : w;
    }
}
