#version 450
// Masked, numerically stable row softmax: one workgroup per (query row, head).
// The mask arrives as bits (1 = allowed, 32 keys per word), never as -inf logits: drivers may
// optimise Inf/NaN arithmetic away, so masked entries are handled by branches and written as
// exact zeros. Semantics match core/attention/CpuBackend.cpp (softmaxRow):
//   -inf fill: masked weights are 0; a row with no allowed key is all 0, even beside a sink.
//   -1e9 fill: masked logits take part as -1e9, so a row with no allowed key is uniform (less
//   the sink's share where there is one).
//   A sink (one logit per head) joins the row's max and normaliser and is then dropped.

#include "common.glsl"

layout(constant_id = 0) const uint WG = 128;
layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer BufS { float scores[]; };
layout(std430, set = 0, binding = 1) writeonly buffer BufW { float weights[]; };
layout(std430, set = 0, binding = 2) readonly buffer BufMask { uint maskBits[]; };
layout(std430, set = 0, binding = 3) readonly buffer BufSinks { float sinks[]; }; // [head]

layout(push_constant) uniform Push {
    uint n;          // keys per row (Tk)
    uint sOff, wOff; // first element of the chunk's row 0, head 0
    uint rowStride;  // Tk
    uint headStride; // Tq*Tk
    uint mOff;       // first mask word of the chunk's row 0
    uint mRs;        // mask words per row
    uint fill;       // FILL_NEG_INF or FILL_NEG_LARGE
    uint sinkOff;    // the chunk's head 0 in sinks
    uint hasSinks;   // 0: no sinks (a placeholder is bound)
} pc;

shared float redF[WG];
shared uint redU[WG];

bool allowedAt(uint row, uint j)
{
    return ((maskBits[pc.mOff + row * pc.mRs + (j >> 5)] >> (j & 31u)) & 1u) != 0u;
}

void main()
{
    const uint row = gl_WorkGroupID.x, h = gl_WorkGroupID.y, t = gl_LocalInvocationID.x;
    const uint sBase = pc.sOff + h * pc.headStride + row * pc.rowStride;
    const uint wBase = pc.wOff + h * pc.headStride + row * pc.rowStride;

    // Pass 1: the maximum allowed logit and the number of allowed keys.
    float localMax = -3.402823466e38;
    uint localCount = 0u;
    for (uint j = t; j < pc.n; j += WG)
        if (allowedAt(row, j)) {
            localMax = max(localMax, scores[sBase + j]);
            ++localCount;
        }
    redF[t] = localMax;
    redU[t] = localCount;
    barrier();
    for (uint s = WG / 2u; s > 0u; s >>= 1u) {
        if (t < s) {
            redF[t] = max(redF[t], redF[t + s]);
            redU[t] += redU[t + s];
        }
        barrier();
    }
    float rowMax = redF[0];
    const uint count = redU[0];
    barrier(); // everyone has read redF[0] before pass 2 reuses it

    const bool hasSink = pc.hasSinks != 0u;
    const float sink = hasSink ? sinks[pc.sinkOff + h] : 0.0;
    if (count == 0u) {
        // Every logit equals the fill: uniform under -1e9, less the sink's share.
        float v = 0.0;
        if (pc.fill == FILL_NEG_LARGE) {
            const float m = hasSink ? max(-1e9, sink) : -1e9, term = exp(-1e9 - m);
            v = term / (float(pc.n) * term + (hasSink ? exp(sink - m) : 0.0));
        }
        for (uint j = t; j < pc.n; j += WG)
            weights[wBase + j] = v;
        return; // uniform per workgroup, so no thread misses a barrier
    }
    if (hasSink)
        rowMax = max(rowMax, sink);
    float maskedTerm = 0.0;
    if (pc.fill == FILL_NEG_LARGE && count < pc.n) {
        rowMax = max(rowMax, -1e9);
        maskedTerm = exp(-1e9 - rowMax);
    }

    // Pass 2: the denominator.
    float localSum = 0.0;
    for (uint j = t; j < pc.n; j += WG)
        localSum += allowedAt(row, j) ? exp(scores[sBase + j] - rowMax) : maskedTerm;
    redF[t] = localSum;
    barrier();
    for (uint s = WG / 2u; s > 0u; s >>= 1u) {
        if (t < s)
            redF[t] += redF[t + s];
        barrier();
    }
    const float inv = 1.0 / (redF[0] + (hasSink ? exp(sink - rowMax) : 0.0));

    // Pass 3: normalise; masked entries are maskedTerm * inv, exactly 0 under -inf.
    for (uint j = t; j < pc.n; j += WG)
        weights[wBase + j] = allowedAt(row, j) ? exp(scores[sBase + j] - rowMax) * inv : maskedTerm * inv;
}
