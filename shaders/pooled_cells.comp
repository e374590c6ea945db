#version 450
// The pooled path's cell pass: one workgroup per (key bin, query bin, head) of a chunk of
// query rows. It recomputes the exact weights of the block the chunk holds of its cell, from
// the row max and normaliser of pooled_rows.comp (so both passes form the same weights), and
// takes their max or sum; masked weights count as 0 (or as the -1e9 fill's weight). A cell
// whose rows span several chunks combines with what the earlier chunks left in it.

#include "pooled_common.glsl"

layout(constant_id = 0) const uint WG = 64; // a power of two
layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 4) readonly buffer BufStats { float stats[]; };
layout(std430, set = 0, binding = 5) buffer BufPooled { float pooled[]; }; // [h][a][b]
layout(std430, set = 0, binding = 6) readonly buffer BufRowStart { uint rowStart[]; }; // nq + 1
layout(std430, set = 0, binding = 7) readonly buffer BufKeyStart { uint keyStart[]; }; // nk + 1

shared float red[WG];

void main()
{
    const uint b = pc.x0 + gl_WorkGroupID.x, a = pc.y0 + gl_WorkGroupID.y, h = pc.h0 + gl_WorkGroupID.z;
    const uint t = gl_LocalInvocationID.x;
    if (a >= pc.nq || b >= pc.nk)
        return; // uniform per workgroup
    const bool mean = (pc.flags & POOL_MEAN) != 0u;
    const uint binR0 = rowStart[a];
    const uint i0 = max(binR0, pc.r0), i1 = min(rowStart[a + 1u], pc.r1);
    const uint j0 = keyStart[b], keys = keyStart[b + 1u] - j0;
    // The host keeps (rows of a chunk) x Tk below 2^32.
    const uint count = i1 > i0 ? (i1 - i0) * keys : 0u;

    float value = 0.0; // weights are >= 0: 0 is the identity of both max and sum here
    for (uint e = t; e < count; e += WG) {
        const uint i = i0 + e / keys, j = j0 + e % keys;
        const float z = stats[2u * (h * pc.tq + i) + 1u];
        float s;
        if (z <= 0.0 || !logitAt(i, j, h, s))
            continue; // an empty row under -inf, or a masked key under -inf
        const float w = exp(s - stats[2u * (h * pc.tq + i)]) * (1.0 / z);
        value = mean ? value + w : max(value, w);
    }
    red[t] = value;
    barrier();
    for (uint st = WG / 2u; st > 0u; st >>= 1u) {
        if (t < st)
            red[t] = mean ? red[t] + red[t + st] : max(red[t], red[t + st]);
        barrier();
    }
    if (t == 0u) {
        const uint idx = (h * pc.nq + a) * pc.nk + b;
        if (binR0 >= pc.r0) // this chunk holds the cell's first row
            pooled[idx] = red[0];
        else
            pooled[idx] = mean ? pooled[idx] + red[0] : max(pooled[idx], red[0]);
    }
}
