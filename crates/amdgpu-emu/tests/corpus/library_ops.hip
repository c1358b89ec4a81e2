#include "kh.h"
// Instructions AMD's library kernels use (rocPRIM scans and sorts, rocSPARSE, rocRAND half
// precision) and clang-22 emits for matrix and mixed-precision code: 16-bit compares and their
// cmpx/SDWA forms, 64-bit and f64 LDS atomics, cache invalidations of acquire loads, MFMA
// shapes beyond 16x16x4f32, the mixed-precision FMAs and range-checked buffer accesses.

// One 16-bit compare of a and b (their low halves) as 0 or 1.
#define CMP16(op)                                                                            \
  ({                                                                                         \
    u32 r_;                                                                                  \
    asm volatile("v_cmp_" #op " vcc, %1, %2\n\tv_cndmask_b32 %0, 0, 1, vcc"                 \
                 : "=v"(r_) : "v"(a), "v"(b) : "vcc");                                       \
    r_;                                                                                      \
  })

// Each lane compares a[i] with b[i] by all sixteen 16-bit integer compares; bit k of out[i]
// is compare k (i16 f lt eq le gt ne ge t, then u16 in the same order).
extern "C" __global__ void cmp16(const u32 *pa, const u32 *pb, u32 *out) {
  u32 i = gid_x();
  u32 a = pa[i], b = pb[i];
  u32 bits = CMP16(f_i16) | CMP16(lt_i16) << 1 | CMP16(eq_i16) << 2 | CMP16(le_i16) << 3 |
             CMP16(gt_i16) << 4 | CMP16(ne_i16) << 5 | CMP16(ge_i16) << 6 | CMP16(t_i16) << 7 |
             CMP16(f_u16) << 8 | CMP16(lt_u16) << 9 | CMP16(eq_u16) << 10 | CMP16(le_u16) << 11 |
             CMP16(gt_u16) << 12 | CMP16(ne_u16) << 13 | CMP16(ge_u16) << 14 | CMP16(t_u16) << 15;
  // SDWA: the high half of a against the low half of b.
  u32 s;
  asm volatile("v_cmp_ne_u16_sdwa vcc, %1, %2 src0_sel:WORD_1 src1_sel:WORD_0\n\t"
               "v_cndmask_b32 %0, 0, 1, vcc"
               : "=v"(s) : "v"(a), "v"(b) : "vcc");
  // cmpx: lanes whose compare fails are switched off for one move.
  u32 x = 0, y = 0;
  asm volatile("s_mov_b64 s[20:21], exec\n\t"
               "v_cmpx_ne_u16 vcc, %2, %3\n\t"
               "v_mov_b32 %0, 1\n\t"
               "s_mov_b64 exec, s[20:21]\n\t"
               "v_cmpx_ge_i16 vcc, %2, %3\n\t"
               "v_mov_b32 %1, 1\n\t"
               "s_mov_b64 exec, s[20:21]"
               : "+v"(x), "+v"(y) : "v"(a), "v"(b) : "vcc", "s20", "s21");
  out[i] = bits | s << 16 | x << 17 | y << 18;
}

// 16-bit keys compared by compiled code (rocPRIM's radix passes compare digits this way).
extern "C" __global__ void count_ne16(const unsigned short *k, u32 *out, u32 n) {
  u32 i = gid_x();
  if (i < n) out[i] = (k[i] != k[(i + 1) % n]) + 2 * (k[i] <= (unsigned short)0x7FFF);
}

// 64-bit and f64 LDS atomics: every lane of one work-group folds its value in.
extern "C" __global__ void lds64(const u64 *in, const double *fin, u64 *out, double *fout) {
  __shared__ u64 s[8];
  __shared__ double f[3];
  u32 t = tid_x();
  if (t == 0) {
    s[0] = ~0ull; s[1] = 0; s[2] = ~0ull; s[3] = 0; s[4] = 0; s[5] = 0; s[6] = 0; s[7] = 0;
    f[0] = 0; f[1] = 1e300; f[2] = -1e300;
  }
  syncthreads();
  u64 v = in[t];
  __hip_atomic_fetch_min(&s[0], v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  __hip_atomic_fetch_max((i64 *)&s[1], (i64)v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  __hip_atomic_fetch_and(&s[2], v | 0xF0F0ull, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  __hip_atomic_fetch_or(&s[3], v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  __hip_atomic_fetch_xor(&s[4], v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  __hip_atomic_fetch_sub(&s[5], v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  u64 old = __hip_atomic_fetch_max(&s[6], v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  __hip_atomic_fetch_add(&s[7], old <= v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  double x = fin[t];
  __hip_atomic_fetch_add(&f[0], x, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  __hip_atomic_fetch_min(&f[1], x, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  __hip_atomic_fetch_max(&f[2], x, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  syncthreads();
  if (t < 8) out[t] = s[t];
  if (t < 3) fout[t] = f[t];
}

// A system-scope acquire load (gfx90a: buffer_invl2 and buffer_wbinvl1_vol after it).
extern "C" __global__ void acquire_flag(const u32 *flag, u32 *out) {
  u32 v = __hip_atomic_load(flag, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_SYSTEM);
  out[gid_x()] = v + 1;
}

// Mixed precision as compiled code writes it: f16 products accumulated in f32, and an f32
// fma rounded to f16.
extern "C" __global__ void fma_mix(const f16 *a, const f16 *b, const float *c, float *out,
                                   f16 *out16, u32 n) {
  u32 i = gid_x();
  if (i >= n) return;
  out[i] = __builtin_fmaf((float)a[i], (float)b[i], c[i]);
  out16[i] = (f16)__builtin_fmaf((float)a[i], (float)b[i], (float)b[(i + 1) % n]);
}

// The modifiers compiled code rarely uses: high halves, neg and abs, the high-half result.
extern "C" __global__ void fma_mix_modifiers(const u32 *ab, const float *c, u32 *out) {
  u32 i = gid_x();
  u32 x = ab[i];
  float y = c[i];
  u32 r0, r1 = 0x12345678;
  asm volatile("v_fma_mix_f32 %0, -%1, |%1|, %2 op_sel:[1,0,0] op_sel_hi:[1,1,0]"
               : "=v"(r0) : "v"(x), "v"(y));
  asm volatile("v_fma_mixhi_f16 %0, %1, %1, -%2 op_sel:[0,1,0] op_sel_hi:[1,1,0]"
               : "+v"(r1) : "v"(x), "v"(y));
  out[2 * i] = r0;
  out[2 * i + 1] = r1;
}

typedef u32 u32x4_b __attribute__((ext_vector_type(4)));

// Buffer loads and stores against the V#'s NUM_RECORDS (composable-kernel and Tensile style
// bounds checks): lane i writes 8 words to out[8i..]: a raw dword at byte i*4, the four dwords
// of a raw dwordx4 at byte i*4, a raw byte at byte i, a structured dword (index i, 8-byte
// records, offset 4), and a raw dword at byte i*4 with SOFFSET 64 (outside the check). It then
// stores i + 1 at byte i*4 of dst through a raw V# of the same size.
extern "C" __global__ void buffer_bounds(const u32 *src, u32 *out, u32 *dst, u32 records) {
  u32 i = gid_x();
  __amdgpu_buffer_rsrc_t r = __builtin_amdgcn_make_buffer_rsrc((void *)src, 0, records, 0x27000);
  __amdgpu_buffer_rsrc_t w = __builtin_amdgcn_make_buffer_rsrc((void *)dst, 0, records, 0x27000);
  u64 base = (u64)src;
  u32x4_b s = {(u32)base, (u32)(base >> 32) | 8u << 16, records / 8, 0x27000};
  u32 *o = out + 8 * i;
  o[0] = __builtin_amdgcn_raw_buffer_load_b32(r, i * 4, 0, 0);
  u32x4_b v = __builtin_amdgcn_raw_buffer_load_b128(r, i * 4, 0, 0);
  o[1] = v.x;
  o[2] = v.y;
  o[3] = v.z;
  o[4] = v.w;
  o[5] = __builtin_amdgcn_raw_buffer_load_b8(r, i, 0, 0);
  u32 d;
  asm volatile("buffer_load_dword %0, %1, %2, 0 idxen offset:4\n\ts_waitcnt vmcnt(0)"
               : "=v"(d) : "v"(i), "s"(s));
  o[6] = d;
  o[7] = __builtin_amdgcn_raw_buffer_load_b32(r, i * 4, 64, 0);
  __builtin_amdgcn_raw_buffer_store_b32(i + 1, w, i * 4, 0, 0);
}

#if defined(__gfx942__)
typedef float f32x2_c __attribute__((ext_vector_type(2)));

// gfx942's 8-bit float conversions: lane i converts the bytes of in[i] (fp8 then bf8), each
// by its SDWA byte select and by the packed forms (word 0 and word 1), into out[16i..].
extern "C" __global__ void cvt_f8(const u32 *in, float *out) {
  u32 i = gid_x();
  u32 v = in[i];
  float *o = out + 16 * i;
  o[0] = __builtin_amdgcn_cvt_f32_fp8(v, 0);
  o[1] = __builtin_amdgcn_cvt_f32_fp8(v, 1);
  o[2] = __builtin_amdgcn_cvt_f32_fp8(v, 2);
  o[3] = __builtin_amdgcn_cvt_f32_fp8(v, 3);
  o[4] = __builtin_amdgcn_cvt_f32_bf8(v, 0);
  o[5] = __builtin_amdgcn_cvt_f32_bf8(v, 1);
  o[6] = __builtin_amdgcn_cvt_f32_bf8(v, 2);
  o[7] = __builtin_amdgcn_cvt_f32_bf8(v, 3);
  f32x2_c p = __builtin_amdgcn_cvt_pk_f32_fp8(v, false), q = __builtin_amdgcn_cvt_pk_f32_fp8(v, true);
  o[8] = p.x;
  o[9] = p.y;
  o[10] = q.x;
  o[11] = q.y;
  p = __builtin_amdgcn_cvt_pk_f32_bf8(v, false);
  q = __builtin_amdgcn_cvt_pk_f32_bf8(v, true);
  o[12] = p.x;
  o[13] = p.y;
  o[14] = q.x;
  o[15] = q.y;
}
#endif
