#include "kh.h"
// One kernel per MFMA shape: A ([blocks][M][K]), B ([blocks][K][M]) and C, D ([blocks][M][M]),
// all row-major, moved between memory and registers by the layouts AMD's matrix-instruction
// tables state for each family. One wave each.

typedef unsigned short bf;
typedef signed char i8;
typedef _Float16 h4 __attribute__((ext_vector_type(4)));
typedef short s2 __attribute__((ext_vector_type(2)));
typedef short s4 __attribute__((ext_vector_type(4)));
typedef float f4 __attribute__((ext_vector_type(4)));
typedef float f16v __attribute__((ext_vector_type(16)));
typedef float f32v __attribute__((ext_vector_type(32)));
typedef int i4v __attribute__((ext_vector_type(4)));
typedef int i16v __attribute__((ext_vector_type(16)));
typedef int i32v __attribute__((ext_vector_type(32)));
typedef double d4 __attribute__((ext_vector_type(4)));

// A and B: lanes 0..M-1 hold the rows of A (columns of B) of block 0, the next M lanes those
// of block 1, and so on; the lane groups after all blocks take the next P values of k.
template <int M, int K, int B, int P, typename E>
static __device__ void a_values(const E *a, u32 l, E *out) {
  u32 blk = (l / M) % B, i = l % M, k0 = (l / (M * B)) * P;
  for (int e = 0; e < P; e++) out[e] = a[(blk * M + i) * K + k0 + e];
}
template <int M, int K, int B, int P, typename E>
static __device__ void b_values(const E *b, u32 l, E *out) {
  u32 blk = (l / M) % B, j = l % M, k0 = (l / (M * B)) * P;
  for (int e = 0; e < P; e++) out[e] = b[(blk * K + k0 + e) * M + j];
}

// C and D with 32-bit elements, register r of lane l, family by family: 32 x 32 blocks in
// sixteen registers each (four-row tiles alternating between the lane halves), 16 x 16 blocks
// in four registers each (lane group g holds rows 4g..4g+3), 4 x 4 blocks one per four lanes
// (register r holds row r).
template <int M> static __device__ u32 d_index(u32 l, u32 r) {
  u32 blk, row;
  if (M == 32) {
    blk = r / 16;
    row = 8 * ((r % 16) / 4) + 4 * (l / 32) + r % 4;
  } else if (M == 16) {
    blk = r / 4;
    row = 4 * (l / 16) + r % 4;
  } else {
    blk = l / 4;
    row = r;
  }
  return (blk * M + row) * M + l % M;
}

// C and D with 64-bit elements: 16 x 16, pair r of lane group g holds row 4r + g; four 4 x 4
// blocks, lanes 16i + 4b + j hold row i, column j of block b.
template <int M> static __device__ u32 d64_index(u32 l, u32 r) {
  if (M == 16) return (4 * r + l / 16) * 16 + l % 16;
  return (((l / 4) % 4) * 4 + l / 16) * 4 + l % 4;
}

// A kernel with the broadcast controls CBSZ, ABID and BLGP (for gfx942's f64 shapes, BLGP's
// bits negate A, B and C).
#define MFMA_KERNEL(NAME, BUILTIN, E, AT, O, CT, NC, M, K, B, P)                               \
  MFMA_KERNEL_MODS(NAME, BUILTIN, E, AT, O, CT, NC, M, K, B, P, 0, 0, 0)
#define MFMA64_KERNEL(NAME, BUILTIN, CT, NC, M, K, B) MFMA64_KERNEL_MODS(NAME, BUILTIN, CT, NC, M, K, B, 0)

#define MFMA_KERNEL_MODS(NAME, BUILTIN, E, AT, O, CT, NC, M, K, B, P, CBSZ, ABID, BLGP)         \
  extern "C" __global__ void NAME(const E *a, const E *b, const O *c, O *d) {                 \
    u32 l = tid_x();                                                                           \
    E ta[P], tb[P];                                                                            \
    a_values<M, K, B, P>(a, l, ta);                                                            \
    b_values<M, K, B, P>(b, l, tb);                                                            \
    AT av, bv;                                                                                 \
    __builtin_memcpy(&av, ta, sizeof(av));                                                     \
    __builtin_memcpy(&bv, tb, sizeof(bv));                                                     \
    O tc[NC];                                                                                  \
    for (int r = 0; r < NC; r++) tc[r] = c[d_index<M>(l, r)];                                  \
    CT acc;                                                                                    \
    __builtin_memcpy(&acc, tc, sizeof(acc));                                                   \
    acc = BUILTIN(av, bv, acc, CBSZ, ABID, BLGP);                                              \
    __builtin_memcpy(tc, &acc, sizeof(acc));                                                   \
    for (int r = 0; r < NC; r++) d[d_index<M>(l, r)] = tc[r];                                  \
  }

#define MFMA64_KERNEL_MODS(NAME, BUILTIN, CT, NC, M, K, B, BLGP)                              \
  extern "C" __global__ void NAME(const double *a, const double *b, const double *c,          \
                                  double *d) {                                                 \
    u32 l = tid_x();                                                                           \
    double av, bv;                                                                             \
    a_values<M, K, B, 1>(a, l, &av);                                                           \
    b_values<M, K, B, 1>(b, l, &bv);                                                           \
    double tc[NC];                                                                             \
    for (int r = 0; r < NC; r++) tc[r] = c[d64_index<M>(l, r)];                                \
    CT acc;                                                                                    \
    __builtin_memcpy(&acc, tc, sizeof(acc));                                                   \
    acc = BUILTIN(av, bv, acc, 0, 0, BLGP);                                                    \
    __builtin_memcpy(tc, &acc, sizeof(acc));                                                   \
    for (int r = 0; r < NC; r++) d[d64_index<M>(l, r)] = tc[r];                                \
  }

// Shapes on both targets.
MFMA_KERNEL(f32_32x32x1f32, __builtin_amdgcn_mfma_f32_32x32x1f32, float, float, float, f32v, 32, 32, 1, 2, 1)
MFMA_KERNEL(f32_16x16x1f32, __builtin_amdgcn_mfma_f32_16x16x1f32, float, float, float, f16v, 16, 16, 1, 4, 1)
MFMA_KERNEL(f32_4x4x1f32, __builtin_amdgcn_mfma_f32_4x4x1f32, float, float, float, f4, 4, 4, 1, 16, 1)
MFMA_KERNEL(f32_32x32x2f32, __builtin_amdgcn_mfma_f32_32x32x2f32, float, float, float, f16v, 16, 32, 2, 1, 1)
MFMA_KERNEL(f32_16x16x4f32, __builtin_amdgcn_mfma_f32_16x16x4f32, float, float, float, f4, 4, 16, 4, 1, 1)
MFMA_KERNEL(f32_32x32x4f16, __builtin_amdgcn_mfma_f32_32x32x4f16, _Float16, h4, float, f32v, 32, 32, 4, 2, 4)
MFMA_KERNEL(f32_16x16x4f16, __builtin_amdgcn_mfma_f32_16x16x4f16, _Float16, h4, float, f16v, 16, 16, 4, 4, 4)
MFMA_KERNEL(f32_4x4x4f16, __builtin_amdgcn_mfma_f32_4x4x4f16, _Float16, h4, float, f4, 4, 4, 4, 16, 4)
MFMA_KERNEL(f32_32x32x8f16, __builtin_amdgcn_mfma_f32_32x32x8f16, _Float16, h4, float, f16v, 16, 32, 8, 1, 4)
MFMA_KERNEL(f32_16x16x16f16, __builtin_amdgcn_mfma_f32_16x16x16f16, _Float16, h4, float, f4, 4, 16, 16, 1, 4)
MFMA_KERNEL(i32_32x32x4i8, __builtin_amdgcn_mfma_i32_32x32x4i8, i8, int, int, i32v, 32, 32, 4, 2, 4)
MFMA_KERNEL(i32_16x16x4i8, __builtin_amdgcn_mfma_i32_16x16x4i8, i8, int, int, i16v, 16, 16, 4, 4, 4)
MFMA_KERNEL(i32_4x4x4i8, __builtin_amdgcn_mfma_i32_4x4x4i8, i8, int, int, i4v, 4, 4, 4, 16, 4)
MFMA_KERNEL(f32_32x32x4bf16_1k, __builtin_amdgcn_mfma_f32_32x32x4bf16_1k, bf, s4, float, f32v, 32, 32, 4, 2, 4)
MFMA_KERNEL(f32_16x16x4bf16_1k, __builtin_amdgcn_mfma_f32_16x16x4bf16_1k, bf, s4, float, f16v, 16, 16, 4, 4, 4)
MFMA_KERNEL(f32_4x4x4bf16_1k, __builtin_amdgcn_mfma_f32_4x4x4bf16_1k, bf, s4, float, f4, 4, 4, 4, 16, 4)
MFMA_KERNEL(f32_32x32x8bf16_1k, __builtin_amdgcn_mfma_f32_32x32x8bf16_1k, bf, s4, float, f16v, 16, 32, 8, 1, 4)
MFMA_KERNEL(f32_16x16x16bf16_1k, __builtin_amdgcn_mfma_f32_16x16x16bf16_1k, bf, s4, float, f4, 4, 16, 16, 1, 4)
MFMA64_KERNEL(f64_16x16x4f64, __builtin_amdgcn_mfma_f64_16x16x4f64, d4, 4, 16, 4, 1)
MFMA64_KERNEL(f64_4x4x4f64, __builtin_amdgcn_mfma_f64_4x4x4f64, double, 1, 4, 4, 4)

// Broadcast controls on both targets: (cbsz, abid, blgp).
MFMA_KERNEL_MODS(f32_16x16x1f32_mods, __builtin_amdgcn_mfma_f32_16x16x1f32, float, float, float, f16v, 16, 16, 1, 4, 1, 2, 3, 3)
MFMA_KERNEL_MODS(f32_4x4x1f32_mods, __builtin_amdgcn_mfma_f32_4x4x1f32, float, float, float, f4, 4, 4, 1, 16, 1, 4, 9, 4)
MFMA_KERNEL_MODS(f32_4x4x4f16_mods, __builtin_amdgcn_mfma_f32_4x4x4f16, _Float16, h4, float, f4, 4, 4, 4, 16, 4, 3, 5, 6)
MFMA_KERNEL_MODS(i32_32x32x4i8_mods, __builtin_amdgcn_mfma_i32_32x32x4i8, i8, int, int, i32v, 32, 32, 4, 2, 4, 1, 1, 1)
MFMA_KERNEL_MODS(f32_16x16x4bf16_1k_mods, __builtin_amdgcn_mfma_f32_16x16x4bf16_1k, bf, s4, float, f16v, 16, 16, 4, 4, 4, 1, 0, 7)
MFMA_KERNEL_MODS(f32_32x32x2f32_mods, __builtin_amdgcn_mfma_f32_32x32x2f32, float, float, float, f16v, 16, 32, 2, 1, 1, 0, 0, 2)
// A lane pattern gfx90a defines for a one-block f16 shape and gfx942 does not.
MFMA_KERNEL_MODS(f32_32x32x8f16_mods, __builtin_amdgcn_mfma_f32_32x32x8f16, _Float16, h4, float, f16v, 16, 32, 8, 1, 4, 0, 0, 5)

#if defined(__gfx90a__)
// gfx90a only: the integer shapes with K = 8 and 16, and the bf16 shapes with two values per
// register.
MFMA_KERNEL(i32_32x32x8i8, __builtin_amdgcn_mfma_i32_32x32x8i8, i8, int, int, i16v, 16, 32, 8, 1, 4)
MFMA_KERNEL(i32_16x16x16i8, __builtin_amdgcn_mfma_i32_16x16x16i8, i8, int, int, i4v, 4, 16, 16, 1, 4)
MFMA_KERNEL(f32_32x32x2bf16, __builtin_amdgcn_mfma_f32_32x32x2bf16, bf, s2, float, f32v, 32, 32, 2, 2, 2)
MFMA_KERNEL(f32_16x16x2bf16, __builtin_amdgcn_mfma_f32_16x16x2bf16, bf, s2, float, f16v, 16, 16, 2, 4, 2)
MFMA_KERNEL(f32_4x4x2bf16, __builtin_amdgcn_mfma_f32_4x4x2bf16, bf, s2, float, f4, 4, 4, 2, 16, 2)
MFMA_KERNEL(f32_32x32x4bf16, __builtin_amdgcn_mfma_f32_32x32x4bf16, bf, s2, float, f16v, 16, 32, 4, 1, 2)
MFMA_KERNEL(f32_16x16x8bf16, __builtin_amdgcn_mfma_f32_16x16x8bf16, bf, s2, float, f4, 4, 16, 8, 1, 2)
#endif

#if defined(__gfx942__)
// gfx942 only: f64 shapes with negated sources (BLGP 5: A and C; 2: B).
MFMA64_KERNEL_MODS(f64_16x16x4f64_mods, __builtin_amdgcn_mfma_f64_16x16x4f64, d4, 4, 16, 4, 1, 5)
MFMA64_KERNEL_MODS(f64_4x4x4f64_mods, __builtin_amdgcn_mfma_f64_4x4x4f64, double, 1, 4, 4, 4, 2)
// gfx942 only: the integer shapes with eight values per lane.
MFMA_KERNEL(i32_32x32x16_i8, __builtin_amdgcn_mfma_i32_32x32x16_i8, i8, long, int, i16v, 16, 32, 16, 1, 8)
MFMA_KERNEL(i32_16x16x32_i8, __builtin_amdgcn_mfma_i32_16x16x32_i8, i8, long, int, i4v, 4, 16, 32, 1, 8)
// gfx942 only: the 8-bit float shapes (fp8 E4M3, bf8 E5M2; A's type first), eight per lane.
typedef unsigned char f8;
MFMA_KERNEL(f32_16x16x32_fp8_fp8, __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8, f8, long, float, f4, 4, 16, 32, 1, 8)
MFMA_KERNEL(f32_16x16x32_fp8_bf8, __builtin_amdgcn_mfma_f32_16x16x32_fp8_bf8, f8, long, float, f4, 4, 16, 32, 1, 8)
MFMA_KERNEL(f32_16x16x32_bf8_fp8, __builtin_amdgcn_mfma_f32_16x16x32_bf8_fp8, f8, long, float, f4, 4, 16, 32, 1, 8)
MFMA_KERNEL(f32_16x16x32_bf8_bf8, __builtin_amdgcn_mfma_f32_16x16x32_bf8_bf8, f8, long, float, f4, 4, 16, 32, 1, 8)
MFMA_KERNEL(f32_32x32x16_fp8_fp8, __builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8, f8, long, float, f16v, 16, 32, 16, 1, 8)
MFMA_KERNEL(f32_32x32x16_fp8_bf8, __builtin_amdgcn_mfma_f32_32x32x16_fp8_bf8, f8, long, float, f16v, 16, 32, 16, 1, 8)
MFMA_KERNEL(f32_32x32x16_bf8_fp8, __builtin_amdgcn_mfma_f32_32x32x16_bf8_fp8, f8, long, float, f16v, 16, 32, 16, 1, 8)
MFMA_KERNEL(f32_32x32x16_bf8_bf8, __builtin_amdgcn_mfma_f32_32x32x16_bf8_bf8, f8, long, float, f16v, 16, 32, 16, 1, 8)
#endif
