// Shared by every attention pass. Kept tiny on purpose: it exists so that an edited
// include shows up in glslc's depfile and rebuilds every shader that uses it.

#extension GL_EXT_control_flow_attributes : enable

// Flags word bits (see GemmPush::flags in gpu/VulkanPasses.cpp).
#define FLAG_BIAS 1u       // add bias[n] to every output (first K chunk only)
#define FLAG_ACCUMULATE 2u // C += A·B instead of C = A·B (later K chunks)
#define FLAG_SOFTCAP 4u    // C = cap·tanh(C / cap) once complete (last K chunk only)
#define FLAG_B_F16 8u      // B holds float16 values, two to a word (a model's stored weight)
#define FLAG_B_BF16 16u    // B holds bfloat16 values, two to a word

// Flags of the model's passes (see gpu/VulkanForward.cpp).
#define FLAG_NORM_LAYER 1u       // rownorm.comp: LayerNorm (mean and bias) rather than RMSNorm
#define FLAG_EMBED_POSITIONS 1u  // embed.comp: add the learned position embedding
#define FLAG_EMBED_TOKEN_TYPE 2u // embed.comp: add token type 0's embedding
#define FLAG_EMBED_F16 4u        // embed.comp: the token table holds float16 values, two to a word
#define FLAG_EMBED_BF16 8u       // embed.comp: the token table holds bfloat16 values

// Element i of a tensor of 16-bit values packed two to a 32-bit word (element 2j in the low half
// of word j, as little-endian checkpoints store them), given its word: float16, or bfloat16 where
// `brain` (its bits are a float32's upper half). Both convert to float32 exactly.
float unpackStored16(uint word, uint i, bool brain)
{
    const uint bits = (i & 1u) == 0u ? (word & 0xFFFFu) : (word >> 16);
    return brain ? uintBitsToFloat(bits << 16) : unpackHalf2x16(bits).x;
}

// Mask fill modes of the softmax (see core/attention/AttentionProblem.h MaskFill).
#define FILL_NEG_INF 0u
#define FILL_NEG_LARGE 1u

// Soft-capping (design.md, "Modern attention"): a score s becomes c·tanh(s / c). tanh is formed
// from exp(-2|x|), which never overflows, instead of trusting the driver's tanh for large |x|.
float softcapped(float s, float c)
{
    const float x = s / c;
    const float e = exp(-2.0 * abs(x));
    return c * sign(x) * ((1.0 - e) / (1.0 + e));
}
