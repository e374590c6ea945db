#version 450
// Strided, batched, register-blocked matrix product with shared-memory tiles:
//   C[h](m, n) = alpha * sum_k A[h](m, k) * B[h](k, n)  (+ bias[n])  (+ C[h](m, n) when accumulating)
// Element (m, k) of A lives at aOff + h*aHs + m*aRs + k*aCs (likewise B and C), so one shader
// serves the projections (B = W), the per-head scores (B = Kᵀ via swapped strides), weights·V
// (A = weights, B = a column slice of V, C = a column slice of the context: the concatenation
// is implicit in the layout) and the output projection. Grouped-query attention: head h reads
// B's head h / group (K and V hold one head per group of query heads). The host splits work that
// exceeds maxStorageBufferRange or maxComputeWorkGroupCount into chunks, each a smaller GEMM of
// this form; a chunk holds whole groups of heads or lies inside one (gpu/DispatchPlan.h), so the
// chunk's own head index divided by the group is B's head relative to the chunk's binding.

#include "common.glsl"

layout(constant_id = 0) const uint WG_X = 16; // threads along n
layout(constant_id = 1) const uint WG_Y = 16; // threads along m
layout(constant_id = 2) const uint RM = 4;    // outputs per thread along m
layout(constant_id = 3) const uint RN = 4;    // outputs per thread along n
layout(constant_id = 4) const uint BK = 16;   // k depth of one shared tile

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer BufA { float a[]; };
layout(std430, set = 0, binding = 1) readonly buffer BufB { float b[]; };
layout(std430, set = 0, binding = 1) readonly buffer BufBWords { uint bWords[]; }; // 16-bit B
layout(std430, set = 0, binding = 2) buffer BufC { float c[]; };
layout(std430, set = 0, binding = 3) readonly buffer BufBias { float bias[]; };

layout(push_constant) uniform Push {
    uint M, N, K;
    uint aOff, aRs, aCs, aHs;
    uint bOff, bRs, bCs, bHs;
    uint cOff, cRs, cHs;
    uint biasOff;
    uint flags;
    float alpha;
    uint group;   // query heads per head of B (1: B has a head per head of A)
    float softcap; // c of FLAG_SOFTCAP
} pc;

// B's element i (counted in its elements from the binding's start): a float, or a model's
// stored float16 / bfloat16 weight converted here, so the weight stays on the device as stored.
float loadB(uint i)
{
    if ((pc.flags & (FLAG_B_F16 | FLAG_B_BF16)) == 0u)
        return b[i];
    return unpackStored16(bWords[i >> 1], i, (pc.flags & FLAG_B_BF16) != 0u);
}

const uint BM = WG_Y * RM;
const uint BN = WG_X * RN;
const uint THREADS = WG_X * WG_Y;

shared float tileA[BK * BM]; // [k][m]: a thread's RM values along m are contiguous
shared float tileB[BK * BN]; // [k][n]

void main()
{
    const uint h = gl_WorkGroupID.z;
    const uint m0 = gl_WorkGroupID.y * BM;
    const uint n0 = gl_WorkGroupID.x * BN;
    const uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
    const uint tid = ty * WG_X + tx;
    const uint aBase = pc.aOff + h * pc.aHs;
    const uint bBase = pc.bOff + (h / pc.group) * pc.bHs;

    // Each depth tile's partial products are summed on their own, then added to the total
    // with Kahan compensation: a depth of 65536 (a wide model dimension) stays within the
    // project's fp32 tolerance instead of accumulating one rounding per product.
    precise float acc[RM][RN];
    precise float comp[RM][RN];
    [[unroll]] for (uint i = 0; i < RM; ++i)
        [[unroll]] for (uint j = 0; j < RN; ++j) {
            acc[i][j] = 0.0;
            comp[i][j] = 0.0;
        }

    for (uint k0 = 0; k0 < pc.K; k0 += BK) {
        // Cooperative loads; out-of-range elements are zero so edge tiles need no branches below.
        // Consecutive threads walk the operand's unit-stride axis so their reads coalesce.
        for (uint e = tid; e < BK * BM; e += THREADS) {
            const bool kFast = pc.aCs == 1u;
            const uint kk = kFast ? e % BK : e / BM, mm = kFast ? e / BK : e % BM;
            const uint m = m0 + mm, k = k0 + kk;
            tileA[kk * BM + mm] = (m < pc.M && k < pc.K) ? a[aBase + m * pc.aRs + k * pc.aCs] : 0.0;
        }
        for (uint e = tid; e < BK * BN; e += THREADS) {
            const bool nFast = pc.bCs == 1u;
            const uint kk = nFast ? e / BN : e % BK, nn = nFast ? e % BN : e / BK;
            const uint n = n0 + nn, k = k0 + kk;
            tileB[kk * BN + nn] = (n < pc.N && k < pc.K) ? loadB(bBase + k * pc.bRs + n * pc.bCs) : 0.0;
        }
        barrier();
        float part[RM][RN];
        [[unroll]] for (uint i = 0; i < RM; ++i)
            [[unroll]] for (uint j = 0; j < RN; ++j)
                part[i][j] = 0.0;
        [[unroll]] for (uint kk = 0; kk < BK; ++kk) {
            float ra[RM], rb[RN];
            [[unroll]] for (uint i = 0; i < RM; ++i)
                ra[i] = tileA[kk * BM + ty * RM + i];
            [[unroll]] for (uint j = 0; j < RN; ++j)
                rb[j] = tileB[kk * BN + tx + j * WG_X];
            [[unroll]] for (uint i = 0; i < RM; ++i)
                [[unroll]] for (uint j = 0; j < RN; ++j)
                    part[i][j] = fma(ra[i], rb[j], part[i][j]);
        }
        [[unroll]] for (uint i = 0; i < RM; ++i)
            [[unroll]] for (uint j = 0; j < RN; ++j) {
                precise float y = part[i][j] - comp[i][j];
                precise float t = acc[i][j] + y;
                comp[i][j] = (t - acc[i][j]) - y;
                acc[i][j] = t;
            }
        barrier();
    }

    const uint cBase = pc.cOff + h * pc.cHs;
    [[unroll]] for (uint i = 0; i < RM; ++i) {
        const uint m = m0 + ty * RM + i;
        if (m >= pc.M)
            continue;
        [[unroll]] for (uint j = 0; j < RN; ++j) {
            // Columns interleave by WG_X so neighbouring threads store neighbouring addresses.
            const uint n = n0 + tx + j * WG_X;
            if (n >= pc.N)
                continue;
            float v = pc.alpha * acc[i][j];
            if ((pc.flags & FLAG_BIAS) != 0u)
                v += bias[pc.biasOff + n];
            const uint idx = cBase + m * pc.cRs + n;
            if ((pc.flags & FLAG_ACCUMULATE) != 0u)
                v += c[idx];
            if ((pc.flags & FLAG_SOFTCAP) != 0u)
                v = softcapped(v, pc.softcap);
            c[idx] = v;
        }
    }
}
