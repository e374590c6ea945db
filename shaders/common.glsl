// Shared by every attention pass. Kept tiny on purpose: it exists so that an edited
// include shows up in glslc's depfile and rebuilds every shader that uses it.

#extension GL_EXT_control_flow_attributes : enable

// Flags word bits (see GemmPush::flags in gpu/VulkanPasses.cpp).
#define FLAG_BIAS 1u       // add bias[n] to every output (first K chunk only)
#define FLAG_ACCUMULATE 2u // C += A·B instead of C = A·B (later K chunks)
#define FLAG_SOFTCAP 4u    // C = cap·tanh(C / cap) once complete (last K chunk only)

// Flags of the model's passes (see gpu/VulkanForward.cpp).
#define FLAG_NORM_LAYER 1u       // rownorm.comp: LayerNorm (mean and bias) rather than RMSNorm
#define FLAG_EMBED_POSITIONS 1u  // embed.comp: add the learned position embedding
#define FLAG_EMBED_TOKEN_TYPE 2u // embed.comp: add token type 0's embedding

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
