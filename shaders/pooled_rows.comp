#version 450
// The pooled path's row pass (design.md, `compute --pool N`): one workgroup per (query row,
// head). A first sweep over every key forms the row's max and normaliser by online softmax
// (scores are recomputed, never stored); a second sweep forms the exact weights, the row's
// entropy and its context row weights·V. The max and normaliser are kept for the cell pass.
// Semantics of core/attention/AttentionRules: under -inf an empty row has weights 0, entropy 0 and
// context 0; under -1e9 masked logits are -1e9, so an empty row is uniform. A sink joins the
// row's max and normaliser (so the cell pass, reusing them, forms the same weights) and is
// then dropped, like core/attention/PooledAttention.cpp's.

#include "pooled_common.glsl"

layout(constant_id = 0) const uint WG = 64; // a power of two
layout(constant_id = 1) const uint ACC = 4; // context columns per thread per sweep
layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 5) readonly buffer BufV { float v[]; };
layout(std430, set = 0, binding = 6) writeonly buffer BufC { float context[]; };
layout(std430, set = 0, binding = 7) writeonly buffer BufE { float entropy[]; };
layout(std430, set = 0, binding = 8) writeonly buffer BufStats { float stats[]; }; // [h][i]: max, sum
layout(std430, set = 0, binding = 9) readonly buffer BufSinks { float sinks[]; };  // [h], with POOL_SINKS

shared float redM[WG];
shared float redZ[WG];
shared float tileW[WG];

void main()
{
    const uint i = pc.r0 + pc.x0 + gl_WorkGroupID.x, h = pc.h0 + gl_WorkGroupID.y, t = gl_LocalInvocationID.x;
    if (i >= pc.r1)
        return; // uniform per workgroup
    const bool negLarge = (pc.flags & POOL_NEG_LARGE) != 0u;
    // Keys after i (causal) and keys j <= i - W (window) are masked for this row: only keys of
    // [begin, end) are ever scored. Under POOL_POSITIONS the host found that range.
    uint begin, end;
    if ((pc.flags & POOL_POSITIONS) != 0u) {
        begin = positions[pc.tq + pc.tk + i];
        end = positions[2u * pc.tq + pc.tk + i];
    } else {
        end = (pc.flags & POOL_CAUSAL) != 0u ? min(pc.tk, i + 1u) : pc.tk;
        begin = min(end, pc.window != 0u && i >= pc.window ? i + 1u - pc.window : 0u);
    }

    // Sweep 1: each thread's running max and normaliser over its keys.
    float m = POOL_LOWEST, z = 0.0;
    for (uint j = begin + t; j < end; j += WG) {
        float s;
        if (!logitAt(i, j, h, s))
            continue;
        if (s > m) {
            z = z * exp(m - s) + 1.0;
            m = s;
        } else {
            z += exp(s - m);
        }
    }
    redM[t] = m;
    redZ[t] = z;
    barrier();
    for (uint st = WG / 2u; st > 0u; st >>= 1u) {
        if (t < st) {
            const float m1 = redM[t], m2 = redM[t + st];
            const float mm = max(m1, m2);
            redZ[t] = redZ[t] * exp(m1 - mm) + redZ[t + st] * exp(m2 - mm);
            redM[t] = mm;
        }
        barrier();
    }
    m = redM[0];
    z = redZ[0];
    barrier(); // everyone has read the totals before redM is reused
    if (negLarge && end - begin < pc.tk) { // the keys outside [begin, end): logits of -1e9 each
        const float mm = max(m, POOL_FILL);
        z = z * exp(m - mm) + float(pc.tk - (end - begin)) * exp(POOL_FILL - mm);
        m = mm;
    }
    if ((pc.flags & POOL_SINKS) != 0u) { // never masked: under -inf an empty row stays all 0
        const float sink = sinks[h], mm = max(m, sink);
        z = z * exp(m - mm) + exp(sink - mm);
        m = mm;
    }
    const bool empty = z <= 0.0; // only under -inf: no key is allowed
    const float invZ = empty ? 0.0 : 1.0 / z, logZ = empty ? 0.0 : log(z);
    if (t == 0u) {
        stats[2u * (h * pc.tq + i)] = m;
        stats[2u * (h * pc.tq + i) + 1u] = z;
    }
    // Masked keys weigh nothing under -inf, or where exp(-1e9 - max) underflows: the sweep
    // can then keep to [begin, end).
    const bool maskedZero = !negLarge || exp(POOL_FILL - m) * invZ == 0.0;
    const uint first = empty ? 0u : (maskedZero ? begin : 0u), last = empty ? 0u : (maskedZero ? end : pc.tk);
    const uint vw = pc.vw / pc.group, vBase = (h / pc.group) * pc.dv; // V of key/value head h / group

    // Sweep 2, per block of WG·ACC context columns: exact weights, entropy and weights·V. Once
    // at least, for the entropy: without values (dv = 0, a Q/K layer) there is no context.
    float ent = 0.0;
    for (uint c0 = 0u; c0 == 0u || c0 < pc.dv; c0 += WG * ACC) {
        float acc[ACC];
        [[unroll]] for (uint a = 0u; a < ACC; ++a)
            acc[a] = 0.0;
        for (uint j0 = first; j0 < last; j0 += WG) {
            const uint j = j0 + t;
            float w = 0.0, s;
            if (j < last && logitAt(i, j, h, s)) {
                const float x = s - m;
                w = exp(x) * invZ;
                if (c0 == 0u && w > 0.0)
                    ent -= w * (x - logZ);
            }
            tileW[t] = w;
            barrier();
            const uint n = min(WG, last - j0);
            [[unroll]] for (uint a = 0u; a < ACC; ++a) {
                const uint c = c0 + t + a * WG;
                if (c < pc.dv)
                    for (uint jj = 0u; jj < n; ++jj)
                        acc[a] = fma(tileW[jj], v[(j0 + jj) * vw + vBase + c], acc[a]);
            }
            barrier();
        }
        [[unroll]] for (uint a = 0u; a < ACC; ++a) {
            const uint c = c0 + t + a * WG;
            if (c < pc.dv)
                context[i * pc.vw + h * pc.dv + c] = acc[a];
        }
    }

    redM[t] = ent;
    barrier();
    for (uint st = WG / 2u; st > 0u; st >>= 1u) {
        if (t < st)
            redM[t] += redM[t + st];
        barrier();
    }
    if (t == 0u)
        entropy[h * pc.tq + i] = redM[0];
}
