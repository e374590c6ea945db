// Shared by the pooled passes (pooled_rows.comp, pooled_cells.comp): the push constants,
// the bindings they have in common and the structural mask of design.md, evaluated per
// (row, key) instead of stored as Tq x Tk. Causal and the window compare row indices, or, under
// POOL_POSITIONS, the positions of the query and key (a problem's RoPE positions, a Q/K layer's;
// rebased to 32 bits by the host, gpu/VulkanPooledSources.cpp).

#include "common.glsl"

// Flags word bits (see gpu/VulkanPooled.cpp).
#define POOL_CAUSAL 1u
#define POOL_PADDING 2u   // padBits: bit j%32 of word j/32 = key j is kept
#define POOL_CUSTOM 4u    // customBits: row i, words [i*words, (i+1)*words), 1 = allowed
#define POOL_NEG_LARGE 8u // masked logits are -1e9 (else -inf: masked keys weigh nothing)
#define POOL_MEAN 16u     // cells sum their weights (the host divides); else they take the max
#define POOL_CELL_PER_THREAD 32u // small cells: one thread per cell instead of one workgroup
#define POOL_SOFTCAP 64u  // scores become softcap·tanh(score / softcap) before the mask
#define POOL_SINKS 128u   // pooled_rows.comp: one sink logit per head joins each row's normaliser
// Causal and the window compare positions[i] (queries) with positions[tq + j] (keys); row i's
// keys that may be allowed lie in [positions[tq + tk + i], positions[2 tq + tk + i]).
#define POOL_POSITIONS 256u

// The largest finite float: the running max starts here so no infinity ever reaches exp().
#define POOL_LOWEST -3.402823466e38
#define POOL_FILL -1e9

layout(push_constant) uniform Push {
    uint tq, tk, dk, dv, qkw, vw;
    uint nq, nk;
    uint r0, r1;     // the query rows of this chunk
    uint x0, y0, h0; // the first workgroup's coordinates (a dispatch split by the device's limits)
    uint flags, words;
    float scale;
    uint window;   // sliding window W: key j allowed only if j > i - W (positions alike); 0: none
    uint group;    // query heads per key/value head: K is Tk x (qkw / group), V Tk x (vw / group)
    float softcap; // c of POOL_SOFTCAP
} pc;

layout(std430, set = 0, binding = 0) readonly buffer BufQ { float q[]; };
layout(std430, set = 0, binding = 1) readonly buffer BufK { float k[]; };
layout(std430, set = 0, binding = 2) readonly buffer BufPad { uint padBits[]; };
layout(std430, set = 0, binding = 3) readonly buffer BufCustom { uint customBits[]; };
layout(std430, set = 0, binding = 4) readonly buffer BufPositions { uint positions[]; }; // POOL_POSITIONS

bool allowedAt(uint i, uint j)
{
    const bool byPosition = (pc.flags & POOL_POSITIONS) != 0u;
    const uint qp = byPosition ? positions[i] : i, kp = byPosition ? positions[pc.tq + j] : j;
    if ((pc.flags & POOL_CAUSAL) != 0u && kp > qp)
        return false;
    if (pc.window != 0u && qp >= pc.window && kp <= qp - pc.window)
        return false;
    if ((pc.flags & POOL_PADDING) != 0u && ((padBits[j >> 5] >> (j & 31u)) & 1u) == 0u)
        return false;
    if ((pc.flags & POOL_CUSTOM) != 0u && ((customBits[i * pc.words + (j >> 5)] >> (j & 31u)) & 1u) == 0u)
        return false;
    return true;
}

// The scaled (and soft-capped) score of query row i and key j in head h, recomputed wherever it
// is needed. Head h reads key/value head h / group (core/attention/HeadLayout.h).
float score(uint i, uint j, uint h)
{
    const uint qBase = i * pc.qkw + h * pc.dk, kBase = j * (pc.qkw / pc.group) + (h / pc.group) * pc.dk;
    float s = 0.0;
    for (uint d = 0u; d < pc.dk; ++d)
        s = fma(q[qBase + d], k[kBase + d], s);
    s *= pc.scale;
    return (pc.flags & POOL_SOFTCAP) != 0u ? softcapped(s, pc.softcap) : s;
}

// The logit of (i, j) after the mask, or false where it weighs nothing (masked under -inf).
bool logitAt(uint i, uint j, uint h, out float logit)
{
    if (allowedAt(i, j)) {
        logit = score(i, j, h);
        return true;
    }
    logit = POOL_FILL;
    return (pc.flags & POOL_NEG_LARGE) != 0u;
}
