#version 450
// The pooled path's cell pass: one workgroup per (key bin, query bin, head or head mean) of a chunk of
// query rows, or, where cells hold fewer (row, key) pairs than a workgroup has threads, one
// thread per cell. It recomputes the exact weights of the block the chunk holds of its cell, from
// the row max and normaliser of pooled_rows.comp (so both passes form the same weights), and
// takes their max or sum; masked weights count as 0 (or as the -1e9 fill's weight). A cell
// whose rows span several chunks combines with what the earlier chunks left in it.

#include "pooled_common.glsl"

layout(constant_id = 0) const uint WG = 64; // a power of two
layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 5) readonly buffer BufStats { float stats[]; };
layout(std430, set = 0, binding = 6) buffer BufPooled { float pooled[]; }; // [h][a][b], h = H: the head mean
layout(std430, set = 0, binding = 7) readonly buffer BufRowStart { uint rowStart[]; }; // nq + 1
layout(std430, set = 0, binding = 8) readonly buffer BufKeyStart { uint keyStart[]; }; // nk + 1

shared float red[WG];

// The exact weight of (i, j) in head h, from the row max and normaliser of pooled_rows.comp;
// false where it weighs nothing (an empty row under -inf, or a masked key under -inf).
bool weightAt(uint h, uint i, uint j, out float w)
{
    const float z = stats[2u * (h * pc.tq + i) + 1u];
    float s;
    w = 0.0;
    if (z <= 0.0 || !logitAt(i, j, h, s))
        return false;
    w = exp(s - stats[2u * (h * pc.tq + i)]) * (1.0 / z);
    return true;
}

// The max or sum of the weights of rows [i0, i1) x keys [j0, j0 + keys) of head h, this
// invocation taking every `step`-th (row, key) pair from `first` on. Head H (one past the last)
// is the head mean's slot: the weights of every head summed (the host divides by H), so that a
// cell is the max over its block of the mean, not the mean of the heads' maxima.
float poolBlock(uint h, uint i0, uint i1, uint j0, uint keys, uint first, uint step)
{
    const bool mean = (pc.flags & POOL_MEAN) != 0u;
    const uint heads = pc.qkw / pc.dk;
    // The host keeps (rows of a chunk) x Tk below 2^32.
    const uint count = i1 > i0 ? (i1 - i0) * keys : 0u;
    float value = 0.0; // weights are >= 0: 0 is the identity of both max and sum here
    for (uint e = first; e < count; e += step) {
        const uint i = i0 + e / keys, j = j0 + e % keys;
        float w = 0.0, wg;
        if (h < heads) {
            if (!weightAt(h, i, j, w))
                continue;
        } else {
            for (uint g = 0u; g < heads; ++g)
                if (weightAt(g, i, j, wg))
                    w += wg;
        }
        value = mean ? value + w : max(value, w);
    }
    return value;
}

// Keys [j0, j1) of a cell, less those no row of [i0, i1) may see (after the last row, causal;
// before the first row's window; outside every row's range, POOL_POSITIONS): they weigh 0, the
// identity of both max and sum, unless masked logits are -1e9.
void clipKeys(uint i0, uint i1, inout uint j0, inout uint j1)
{
    if ((pc.flags & POOL_NEG_LARGE) != 0u || i0 >= i1)
        return;
    uint lo = 0u, hi = pc.tk;
    if ((pc.flags & POOL_POSITIONS) != 0u) {
        lo = pc.tk;
        hi = 0u;
        for (uint i = i0; i < i1; ++i) {
            lo = min(lo, positions[pc.tq + pc.tk + i]);
            hi = max(hi, positions[2u * pc.tq + pc.tk + i]);
        }
    } else {
        if ((pc.flags & POOL_CAUSAL) != 0u)
            hi = i1;
        if (pc.window != 0u && i0 >= pc.window)
            lo = i0 + 1u - pc.window;
    }
    j0 = max(j0, lo);
    j1 = max(j0, min(j1, hi));
}

// Stores cell (h, a, b), combining with what earlier chunks left where they held rows of it.
void storeCell(uint h, uint a, uint b, bool firstRows, float value)
{
    const uint idx = (h * pc.nq + a) * pc.nk + b;
    if (firstRows)
        pooled[idx] = value;
    else
        pooled[idx] = (pc.flags & POOL_MEAN) != 0u ? pooled[idx] + value : max(pooled[idx], value);
}

void main()
{
    const uint a = pc.y0 + gl_WorkGroupID.y, h = pc.h0 + gl_WorkGroupID.z, t = gl_LocalInvocationID.x;
    if (a >= pc.nq)
        return; // uniform per workgroup
    const uint binR0 = rowStart[a];
    const uint i0 = max(binR0, pc.r0), i1 = min(rowStart[a + 1u], pc.r1);
    const bool firstRows = binR0 >= pc.r0; // this chunk holds the cell's first row

    if ((pc.flags & POOL_CELL_PER_THREAD) != 0u) {
        // Cells of fewer pairs than a workgroup has threads: one thread each, no barriers.
        const uint b = (pc.x0 + gl_WorkGroupID.x) * WG + t;
        if (b < pc.nk) {
            uint j0 = keyStart[b], j1 = keyStart[b + 1u];
            clipKeys(i0, i1, j0, j1);
            storeCell(h, a, b, firstRows, poolBlock(h, i0, i1, j0, j1 - j0, 0u, 1u));
        }
        return;
    }

    const uint b = pc.x0 + gl_WorkGroupID.x;
    if (b >= pc.nk)
        return; // uniform per workgroup
    uint j0 = keyStart[b], j1 = keyStart[b + 1u];
    clipKeys(i0, i1, j0, j1);
    red[t] = poolBlock(h, i0, i1, j0, j1 - j0, t, WG);
    barrier();
    const bool mean = (pc.flags & POOL_MEAN) != 0u;
    for (uint st = WG / 2u; st > 0u; st >>= 1u) {
        if (t < st)
            red[t] = mean ? red[t] + red[t + st] : max(red[t], red[t + st]);
        barrier();
    }
    if (t == 0u)
        storeCell(h, a, b, firstRows, red[0]);
}
