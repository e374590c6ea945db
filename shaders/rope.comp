#version 450
// RoPE in the projection stage (design.md, "Modern attention"; core/attention/Rope.h): within
// each head of width dK, dimension i < dK/2 pairs with i + dK/2 (rotate_half) and the pair is
// rotated by its row's angle. cos and sin come from core's ropeTable (angles formed in double,
// rounded once), so the GPU rotates by exactly the CPU's factors. One invocation per (pair,
// row, head) of a chunk; src and dst may be the same buffer (each invocation reads its pair
// before writing it, and no other invocation touches it).

#include "common.glsl"

layout(constant_id = 0) const uint WG = 64; // pairs per workgroup
layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer BufSrc { float src[]; };
layout(std430, set = 0, binding = 1) writeonly buffer BufDst { float dst[]; };
layout(std430, set = 0, binding = 2) readonly buffer BufTable { float table[]; }; // [row][pair]: cos, sin

layout(push_constant) uniform Push {
    uint pairs;          // pairs of this chunk (at most dK/2)
    uint halfDim;        // dK/2: the partner of dimension i is i + halfDim
    uint srcOff, dstOff; // first element of the chunk's (head, row, pair) origin
    uint tabOff;         // first table element of the chunk's (row, pair) origin
    uint rowStride;      // floats per row of src and dst (heads*dK)
    uint headStride;     // dK
    uint tabRowStride;   // dK: a cos and a sin per pair
} pc;

void main()
{
    const uint i = gl_GlobalInvocationID.x, r = gl_WorkGroupID.y, h = gl_WorkGroupID.z;
    if (i >= pc.pairs)
        return;
    const uint x = h * pc.headStride + r * pc.rowStride + i;
    const uint t = pc.tabOff + r * pc.tabRowStride + 2u * i;
    const float a = src[pc.srcOff + x], b = src[pc.srcOff + x + pc.halfDim];
    const float c = table[t], s = table[t + 1u];
    // The CPU's order of operations (core/attention/Rope.cpp applyRope), unfused.
    precise float y0 = a * c - b * s;
    precise float y1 = b * c + a * s;
    dst[pc.dstOff + x] = y0;
    dst[pc.dstOff + x + pc.halfDim] = y1;
}
