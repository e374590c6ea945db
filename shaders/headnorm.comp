#version 450
// Per-head q/k RMSNorm in the projection stage (design.md, "Modern attention"; core/attention/
// Rope.h applyHeadNorm): every (row, head) slice of dK values becomes x·w / sqrt(mean(x²) + eps),
// after the projection and before RoPE (Qwen 3, Gemma 3). One invocation per (row, head) of a
// chunk, in place: it reads its whole slice before writing it, and no other invocation touches
// it. The sum of squares is accumulated in float, in order (dK is at most a few hundred, so
// its relative error stays near dK·2^-24, well inside the tests' tolerance); the CPU sums in
// double.

#include "common.glsl"

layout(constant_id = 0) const uint WG = 64; // rows per workgroup
layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) buffer BufX { float x[]; };
layout(std430, set = 0, binding = 1) readonly buffer BufWeight { float weight[]; }; // dK

layout(push_constant) uniform Push {
    uint rows;       // rows of this chunk
    uint headDim;    // dK
    uint xOff;       // first element of the chunk's (head, row) origin
    uint wOff;       // first weight element
    uint rowStride;  // floats per row of x (heads*dK)
    uint headStride; // dK
    float eps;
} pc;

void main()
{
    const uint r = gl_GlobalInvocationID.x, h = gl_WorkGroupID.y;
    if (r >= pc.rows)
        return;
    const uint base = pc.xOff + h * pc.headStride + r * pc.rowStride;
    float squares = 0.0;
    for (uint i = 0u; i < pc.headDim; ++i) {
        const float v = x[base + i];
        squares += v * v;
    }
    const float inv = 1.0 / sqrt(squares / float(pc.headDim) + pc.eps);
    for (uint i = 0u; i < pc.headDim; ++i) {
        // The CPU's order: (x·inv)·w, unfused.
        precise float y = x[base + i] * inv;
        precise float z = y * weight[pc.wOff + i];
        x[base + i] = z;
    }
}
