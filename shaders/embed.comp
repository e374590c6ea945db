#version 450
// A model's embeddings (core/models/TransformerModel.cpp embed, TranslationModel.cpp embed):
// row r of y is the token embedding of ids[r] times a scale (Gemma's and Marian's √d; 1
// otherwise), plus position r's embedding (learned, or Marian's sinusoidal table) and token type
// 0's where the model has them. The table may be a checkpoint's float16 or bfloat16, two values
// to a word, converted here (FLAG_EMBED_F16, FLAG_EMBED_BF16). One invocation per element of a chunk of
// y's rows; the token table is bound a chunk of its rows at a time, and an element whose id lies
// in another chunk is left to that chunk's dispatch.

#include "common.glsl"

layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer BufIds { uint ids[]; };
layout(std430, set = 0, binding = 1) readonly buffer BufTokens { float tokens[]; };       // vocab x d
layout(std430, set = 0, binding = 1) readonly buffer BufTokenWords { uint tokenWords[]; }; // 16-bit
layout(std430, set = 0, binding = 2) readonly buffer BufPositions { float positions[]; }; // the chunk's rows x d
layout(std430, set = 0, binding = 3) readonly buffer BufTokenType { float tokenType[]; }; // d
layout(std430, set = 0, binding = 4) writeonly buffer BufY { float y[]; };

layout(push_constant) uniform Push {
    uint rows, cols; // of this chunk of y (bound from its first row)
    uint first;      // the row of ids (and the position) of the chunk's row 0
    uint flags;      // FLAG_EMBED_POSITIONS, FLAG_EMBED_TOKEN_TYPE
    float scale;
    uint vocabStart, vocabCount; // the rows of the token table bound: ids outside are another chunk's
} pc;

void main()
{
    const uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * WG;
    if (i >= pc.rows * pc.cols)
        return;
    const uint r = i / pc.cols, c = i % pc.cols;
    const uint id = ids[pc.first + r];
    if (id < pc.vocabStart || id - pc.vocabStart >= pc.vocabCount)
        return;
    const uint e = (id - pc.vocabStart) * pc.cols + c;
    const bool stored16 = (pc.flags & (FLAG_EMBED_F16 | FLAG_EMBED_BF16)) != 0u;
    const float token =
        stored16 ? unpackStored16(tokenWords[e >> 1], e, (pc.flags & FLAG_EMBED_BF16) != 0u) : tokens[e];
    precise float v = token * pc.scale;
    if ((pc.flags & FLAG_EMBED_POSITIONS) != 0u)
        v = v + positions[r * pc.cols + c]; // bound from the chunk's first position
    if ((pc.flags & FLAG_EMBED_TOKEN_TYPE) != 0u)
        v = v + tokenType[c];
    y[i] = v;
}
