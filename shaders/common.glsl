// Shared by every attention pass. Kept tiny on purpose: it exists so that an edited
// include shows up in glslc's depfile and rebuilds every shader that uses it.

#extension GL_EXT_control_flow_attributes : enable

// Flags word bits (see GemmPush::flags in gpu/VulkanPasses.cpp).
#define FLAG_BIAS 1u       // add bias[n] to every output (first K chunk only)
#define FLAG_ACCUMULATE 2u // C += A·B instead of C = A·B (later K chunks)

// Mask fill modes of the softmax (see core/attention/AttentionProblem.h MaskFill).
#define FILL_NEG_INF 0u
#define FILL_NEG_LARGE 1u
