#pragma once

// Marks a plain loop kernel to be compiled for three instruction sets, one chosen when the
// program loads (GCC's target_clones): the portable build is SSE2-only, and a loop the compiler
// vectorises runs several times faster with AVX2 or AVX-512. Elsewhere the one default build.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define ATTNSCOPE_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define ATTNSCOPE_SIMD_CLONES
#endif
