// The media, legacy, dot-product and 16-bit VALU operations: the f16 transcendentals, the
// cube-map and SAD operations, dot products, v_trig_preop_f64, and (through inline assembly)
// the forms the compiler does not choose by itself.
#include "kh.h"
typedef _Float16 h2 __attribute__((ext_vector_type(2)));
typedef short s2 __attribute__((ext_vector_type(2)));
typedef unsigned short us2 __attribute__((ext_vector_type(2)));

static __device__ inline f16 half_of(u32 x) { return __builtin_bit_cast(f16, (unsigned short)x); }
static __device__ inline u32 bits_of(f16 x) { return __builtin_bit_cast(unsigned short, x); }

// f16 operations on the low halves of a[i], b[i], c[i]: 12 results per thread.
extern "C" __global__ void f16_ops(const u32 *a, const u32 *b, const u32 *c, u32 *out, int n) {
  u32 i = gid_x();
  if (i >= (u32)n) return;
  f16 p = half_of(a[i]), q = half_of(b[i]), r = half_of(c[i]);
  u32 *o = out + 12 * i;
  o[0] = bits_of(__builtin_exp2f16(p));
  o[1] = bits_of(__builtin_log2f16(p));
  o[2] = bits_of(__builtin_amdgcn_sinh(p));
  o[3] = bits_of(__builtin_amdgcn_cosh(p));
  o[4] = bits_of(__builtin_amdgcn_frexp_manth(p));
  o[5] = (u32)(int)__builtin_amdgcn_frexp_exph(p);
  o[6] = bits_of(p / q);
  o[7] = bits_of(__builtin_fminf16(__builtin_fminf16(p, q), r));
  o[8] = bits_of(__builtin_fmaxf16(__builtin_fmaxf16(p, q), r));
  o[9] = bits_of(__builtin_amdgcn_fmed3h(p, q, r));
  h2 x = {p, q}, y = {q, r};
  o[10] = __builtin_bit_cast(u32, __builtin_amdgcn_fdot2(x, y, (float)r, false));
  o[11] = __builtin_bit_cast(u32, __builtin_amdgcn_fdot2(x, y, (float)r, true));
}

// Packed f16 fused multiply-adds as half2 arithmetic compiles them (v_pk_fma_f16, each half
// from its own half): four steps of x = x * y + s on both halves.
extern "C" __global__ void half2_fma_chain(const u32 *a, const u32 *b, const u32 *c, u32 *out, int n) {
  u32 i = gid_x();
  if (i >= (u32)n) return;
  h2 x = __builtin_bit_cast(h2, a[i]), y = __builtin_bit_cast(h2, b[i]), s = __builtin_bit_cast(h2, c[i]);
  for (int k = 0; k < 4; k++) x = __builtin_elementwise_fma(x, y, s);
  out[i] = __builtin_bit_cast(u32, x);
}

// Integer media operations and dot products of a[i], b[i], c[i]: 20 results per thread.
extern "C" __global__ void int_ops(const u32 *a, const u32 *b, const u32 *c, u32 *out, int n) {
  u32 i = gid_x();
  if (i >= (u32)n) return;
  u32 x = a[i], y = b[i], z = c[i];
  u32 *o = out + 20 * i;
  o[0] = __builtin_amdgcn_lerp(x, y, z);
  o[1] = __builtin_amdgcn_sad_u8(x, y, z);
  o[2] = __builtin_amdgcn_sad_hi_u8(x, y, z);
  o[3] = __builtin_amdgcn_sad_u16(x, y, z);
  o[4] = (x > y ? x - y : y - x) + z;
  o[5] = __builtin_amdgcn_msad_u8(x, y, z);
  u64 wide = (u64)y << 32 | x, acc = (u64)x << 32 | z;
  u64 qs = __builtin_amdgcn_qsad_pk_u16_u8(wide, z, acc);
  u64 mq = __builtin_amdgcn_mqsad_pk_u16_u8(wide, z, acc);
  o[6] = (u32)qs;
  o[7] = (u32)(qs >> 32);
  o[8] = (u32)mq;
  o[9] = (u32)(mq >> 32);
  s2 sx = __builtin_bit_cast(s2, x), sy = __builtin_bit_cast(s2, y);
  us2 ux = __builtin_bit_cast(us2, x), uy = __builtin_bit_cast(us2, y);
  o[10] = __builtin_amdgcn_sdot2(sx, sy, (int)z, false);
  o[11] = __builtin_amdgcn_udot2(ux, uy, z, true);
  o[12] = __builtin_amdgcn_sdot4(x, y, z, false);
  o[13] = __builtin_amdgcn_udot4(x, y, z, false);
  o[14] = __builtin_amdgcn_sdot8(x, y, z, true);
  o[15] = __builtin_amdgcn_udot8(x, y, z, false);
  short sa = (short)x, sb = (short)y;
  o[16] = (u32)(unsigned short)__builtin_elementwise_add_sat(sa, sb);
  o[17] = (u32)(unsigned short)__builtin_elementwise_sub_sat(sa, sb);
  o[18] = __builtin_amdgcn_sdot8(x, y, z, false);
  o[19] = __builtin_amdgcn_udot2(ux, uy, z, false);
}

// Cube-map coordinates of the direction (a[i], b[i], c[i]).
extern "C" __global__ void cube_ops(const float *a, const float *b, const float *c, float *out, int n) {
  u32 i = gid_x();
  if (i >= (u32)n) return;
  float x = a[i], y = b[i], z = c[i];
  out[4 * i + 0] = __builtin_amdgcn_cubeid(x, y, z);
  out[4 * i + 1] = __builtin_amdgcn_cubesc(x, y, z);
  out[4 * i + 2] = __builtin_amdgcn_cubetc(x, y, z);
  out[4 * i + 3] = __builtin_amdgcn_cubema(x, y, z);
}

extern "C" __global__ void trig_preop(const double *x, const u32 *segment, double *out, int n) {
  u32 i = gid_x();
  if (i < (u32)n) out[i] = __builtin_amdgcn_trig_preop(x[i], (int)segment[i]);
}

#define VOP3(name, mods) \
  asm volatile(name " %0, %1, %2, %3" mods : "=v"(r) : "v"(x), "v"(y), "v"(z)); *o++ = r
#define VOP2(name) \
  asm volatile(name " %0, %1, %2" : "=v"(r) : "v"(x), "v"(y)); *o++ = r
#define VOP1(name) \
  asm volatile(name " %0, %1" : "=v"(r) : "v"(x)); *o++ = r
#define ACC(name, mods) \
  r = z; asm volatile(name " %0, %1, %2" mods : "+v"(r) : "v"(x), "v"(y)); *o++ = r

// Operations and operand forms the compiler does not choose, on a[i], b[i], c[i] as raw bits:
// ASM_RESULTS results per thread, in the order of the statements.
#define ASM_RESULTS 38
extern "C" __global__ void asm_ops(const u32 *a, const u32 *b, const u32 *c, u32 *out, int n) {
  u32 i = gid_x();
  if (i >= (u32)n) return;
  u32 x = a[i], y = b[i], z = c[i], r;
  u32 *o = out + ASM_RESULTS * i;
  VOP1("v_cvt_off_f32_i4");
  VOP1("v_sat_pk_u8_i16");
  asm volatile("v_madmk_f16 %0, %1, 0x4170, %2" : "=v"(r) : "v"(x), "v"(y)); *o++ = r;
  asm volatile("v_madak_f16 %0, %1, %2, 0xc880" : "=v"(r) : "v"(x), "v"(y)); *o++ = r;
  VOP3("v_mad_f16", "");
  VOP3("v_mad_legacy_f16", "");
  VOP3("v_fma_legacy_f16", "");
  VOP3("v_div_fixup_legacy_f16", "");
  VOP3("v_div_fixup_f16", " op_sel:[1,0,1,0]");
  VOP3("v_min3_i16", "");
  VOP3("v_max3_i16", "");
  VOP3("v_med3_i16", "");
  VOP3("v_min3_u16", "");
  VOP3("v_max3_u16", "");
  VOP3("v_med3_u16", "");
  VOP3("v_mad_u16", "");
  VOP3("v_mad_i16", "");
  VOP3("v_mad_u16", " clamp");
  VOP3("v_mad_i16", " clamp");
  VOP3("v_min3_f16", " op_sel:[1,1,0,0]");
  VOP3("v_med3_f16", " op_sel:[0,1,1,0]");
  r = z; asm volatile("v_max3_f16 %0, %1, %2, %3 op_sel:[0,0,0,1]" : "+v"(r) : "v"(x), "v"(y), "v"(z)); *o++ = r;
  VOP3("v_mad_i16", " op_sel:[1,1,1,0]");
  VOP2("v_add_i16");
  VOP2("v_sub_i16");
  asm volatile("v_add_i16 %0, %1, %2 op_sel:[1,1,0]" : "=v"(r) : "v"(x), "v"(y)); *o++ = r;
  VOP2("v_mul_legacy_f32");
  ACC("v_dot2c_f32_f16", "");
  ACC("v_dot2c_i32_i16", "");
  ACC("v_dot4c_i32_i8", "");
  ACC("v_dot8c_i32_i4", "");
  ACC("v_dot4c_i32_i8_e64", " clamp");
  ACC("v_pk_fmac_f16", "");
  VOP3("v_dot2_i32_i16", "");
  VOP3("v_dot4_i32_i8", "");
  VOP3("v_dot2_f32_f16", " neg_lo:[1,0,0] neg_hi:[0,1,0]");
  VOP3("v_dot4_i32_i8", " clamp");
  asm volatile("v_clrexcp\n v_mov_b32 %0, %1" : "=v"(r) : "v"(x)); *o++ = r;
}

// Operations decoded but refused (an illegal-instruction fault with the reason).
extern "C" __global__ void refused_screen_partition(u32 *out) {
  u32 r;
  asm volatile("v_screen_partition_4se_b32 %0, %1" : "=v"(r) : "v"(out[0]));
  out[0] = r;
}

typedef unsigned int u4 __attribute__((ext_vector_type(4)));

// v_mqsad_u32_u8 of (b[i]:a[i], c[i]) into the accumulator (a[i], b[i], c[i], a[i] ^ b[i]).
extern "C" __global__ void mqsad_u32(const u32 *a, const u32 *b, const u32 *c, u32 *out, int n) {
  u32 i = gid_x();
  if (i >= (u32)n) return;
  u4 acc = {a[i], b[i], c[i], a[i] ^ b[i]};
  u4 r = __builtin_amdgcn_mqsad_u32_u8((u64)b[i] << 32 | a[i], c[i], acc);
  for (int k = 0; k < 4; k++) out[4 * i + k] = r[k];
}

// gfx942's conversions of f32 pairs to fp8 and bf8 into one word of an old value (nothing on
// gfx90a, which has no such instructions).
extern "C" __global__ void pack_8bit_floats(const float *a, const float *b, const u32 *old, u32 *out, int n) {
  u32 i = gid_x();
  if (i >= (u32)n) return;
#if defined(__gfx942__)
  out[4 * i + 0] = __builtin_amdgcn_cvt_pk_fp8_f32(a[i], b[i], old[i], false);
  out[4 * i + 1] = __builtin_amdgcn_cvt_pk_fp8_f32(a[i], b[i], old[i], true);
  out[4 * i + 2] = __builtin_amdgcn_cvt_pk_bf8_f32(a[i], b[i], old[i], false);
  out[4 * i + 3] = __builtin_amdgcn_cvt_pk_bf8_f32(a[i], b[i], old[i], true);
#endif
}

typedef float f4 __attribute__((ext_vector_type(4)));
typedef float fl2 __attribute__((ext_vector_type(2)));
typedef _Float16 h4 __attribute__((ext_vector_type(4)));
typedef _Float16 h8 __attribute__((ext_vector_type(8)));

// gfx942's xf32 and sparse MFMAs, which the emulator decodes but refuses.
extern "C" __global__ void refused_xf32(float *out) {
#if defined(__gfx942__)
  fl2 a = {out[0], out[1]};
  f4 c = {0, 0, 0, 0};
  f4 r = __builtin_amdgcn_mfma_f32_16x16x8_xf32(a, a, c, 0, 0, 0);
  out[tid_x()] = r[0];
#endif
}
extern "C" __global__ void refused_smfmac(float *out) {
#if defined(__gfx942__)
  h4 a = {(f16)out[0], (f16)out[1], (f16)out[2], (f16)out[3]};
  h8 b = {a[0], a[1], a[2], a[3], a[0], a[1], a[2], a[3]};
  f4 c = {0, 0, 0, 0};
  f4 r = __builtin_amdgcn_smfmac_f32_16x16x32_f16(a, b, c, (int)out[4], 0, 0);
  out[tid_x()] = r[0];
#endif
}

// VOP3P dot products with half selects (gfx90a: LLVM accepts only the default ones on gfx942).
extern "C" __global__ void dot2_half_selects(const u32 *a, const u32 *b, const u32 *c, u32 *out, int n) {
  u32 i = gid_x();
  if (i >= (u32)n) return;
#if defined(__gfx90a__)
  u32 x = a[i], y = b[i], z = c[i], r;
  asm volatile("v_dot2_f32_f16 %0, %1, %2, %3 op_sel:[1,0,0] op_sel_hi:[0,1,1]" : "=v"(r) : "v"(x), "v"(y), "v"(z));
  out[2 * i] = r;
  asm volatile("v_dot2_i32_i16 %0, %1, %2, %3 op_sel:[0,1,0] op_sel_hi:[1,0,1]" : "=v"(r) : "v"(x), "v"(y), "v"(z));
  out[2 * i + 1] = r;
#endif
}

// op_sel on the VOP3 16-bit operations that define it (each source's high half, the
// destination's high half keeping the low one) and the float inline constants of 16-bit
// integer operands (their f16 bits), on a[i], b[i], c[i] as raw bits: OPSEL_RESULTS results
// per thread, in the order of the statements.
#define OPSEL_RESULTS 25
extern "C" __global__ void opsel_16bit(const u32 *a, const u32 *b, const u32 *c, u32 *out, int n) {
  u32 i = gid_x();
  if (i >= (u32)n) return;
  u32 x = a[i], y = b[i], z = c[i], r;
  u32 *o = out + OPSEL_RESULTS * i;
  VOP3("v_fma_f16", " op_sel:[1,0,0,0]");
  VOP3("v_fma_f16", " op_sel:[0,1,0,0]");
  VOP3("v_fma_f16", " op_sel:[0,0,1,0]");
  r = z; asm volatile("v_fma_f16 %0, %1, %2, %3 op_sel:[0,0,0,1]" : "+v"(r) : "v"(x), "v"(y), "v"(z)); *o++ = r;
  r = x; asm volatile("v_fma_f16 %0, %1, %2, %3 op_sel:[1,1,1,1]" : "+v"(r) : "v"(x), "v"(y), "v"(z)); *o++ = r;
  VOP3("v_mad_u32_u16", " op_sel:[1,0,0,0]");
  VOP3("v_mad_u32_u16", " op_sel:[0,1,0,0]");
  VOP3("v_mad_i32_i16", " op_sel:[1,1,0,0]");
  asm volatile("v_pack_b32_f16 %0, %1, %2 op_sel:[1,0,0]" : "=v"(r) : "v"(x), "v"(y)); *o++ = r;
  asm volatile("v_pack_b32_f16 %0, %1, %2 op_sel:[0,1,0]" : "=v"(r) : "v"(x), "v"(y)); *o++ = r;
  r = y; asm volatile("v_mad_u16 %0, %1, %2, %3 op_sel:[1,0,1,1]" : "+v"(r) : "v"(x), "v"(y), "v"(z)); *o++ = r;
  asm volatile("v_sub_i16 %0, %1, %2 op_sel:[0,1,0]" : "=v"(r) : "v"(x), "v"(y)); *o++ = r;
  // 16-bit integer operands with float inline constants.
  asm volatile("v_add_u16_e32 %0, 1.0, %1" : "=v"(r) : "v"(y)); *o++ = r;
  asm volatile("v_add_u16_e64 %0, %1, 0.5" : "=v"(r) : "v"(x)); *o++ = r;
  asm volatile("v_mul_lo_u16_e64 %0, %1, -2.0" : "=v"(r) : "v"(x)); *o++ = r;
  asm volatile("v_lshlrev_b16_e32 %0, 0.15915494, %1" : "=v"(r) : "v"(y)); *o++ = r;
  asm volatile("v_max_i16_e32 %0, -4.0, %1" : "=v"(r) : "v"(y)); *o++ = r;
  asm volatile("v_sub_u16_e64 %0, %1, 4.0" : "=v"(r) : "v"(x)); *o++ = r;
  asm volatile("v_cvt_f16_u16_e32 %0, 2.0" : "=v"(r)); *o++ = r;
  asm volatile("v_cvt_f16_i16_e64 %0, -1.0" : "=v"(r)); *o++ = r;
  asm volatile("v_cmp_lt_u16_e32 vcc, 1.0, %1\n v_cndmask_b32_e64 %0, 0, 1, vcc" : "=v"(r) : "v"(y) : "vcc"); *o++ = r;
  asm volatile("v_cmp_gt_i16_e64 vcc, %1, -0.5\n v_cndmask_b32_e64 %0, 0, 1, vcc" : "=v"(r) : "v"(x) : "vcc"); *o++ = r;
  asm volatile("v_mad_u32_u16 %0, 1.0, %1, %2" : "=v"(r) : "v"(y), "v"(z)); *o++ = r;
  asm volatile("v_min3_u16 %0, %1, 2.0, %2" : "=v"(r) : "v"(x), "v"(y)); *o++ = r;
  asm volatile("v_add_u16_sdwa %0, 1.0, %1 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_0 src1_sel:WORD_1" : "=v"(r) : "v"(y)); *o++ = r;
}

// VOP3 op_sel bits an operation does not define (raw encodings where LLVM does not accept
// them): each `which` runs one and must fault with a named reason.
extern "C" __global__ void refused_op_sel(u32 *out, int which) {
  u32 r = 0;
  if (which == 0) // v_add_f16_e64 v3, v1, v2 with op_sel bit 0
    asm volatile(".long 0xd11f0803, 0x00020501" ::: "v3");
  else if (which == 1) // v_cmp_eq_u16_e64 s[0:1], v1, v2 with op_sel bit 0
    asm volatile(".long 0xd0aa0800, 0x00020501" ::: "s0", "s1");
  else if (which == 2) // v_add_u32_e64 v3, v1, v2 with op_sel bit 3 (destination)
    asm volatile(".long 0xd1344003, 0x00020501" ::: "v3");
  else if (which == 3) // v_add_i16 v3, v1, v2 with op_sel bit 2 (no third source: invalid)
    asm volatile(".long 0xd29e2003, 0x00020501" ::: "v3");
  else if (which == 4) // the high half of an inline constant
    asm volatile("v_fma_f16 %0, 1.0, %0, %0 op_sel:[1,0,0,0]" : "+v"(r));
  else if (which == 5) // accepted by LLVM, undocumented on GFX9
    asm volatile("v_alignbit_b32 %0, %0, %0, %0 op_sel:[1,0,0,0]" : "+v"(r));
  else if (which == 6) // v_mad_u32_u16's 32-bit destination
    asm volatile("v_mad_u32_u16 %0, %0, %0, %0 op_sel:[0,0,0,1]" : "+v"(r));
  out[tid_x()] = r;
}

// Saturating integer arithmetic as the compiler emits it (the VOP3 and packed adds and
// subtracts with clamp) on a[i], b[i] as raw bits: SATURATING_RESULTS results per thread.
#define SATURATING_RESULTS 12
extern "C" __global__ void saturating(const u32 *a, const u32 *b, const u32 *c, u32 *out, int n) {
  u32 i = gid_x();
  if (i >= (u32)n) return;
  u32 x = a[i], y = b[i];
  int sx = (int)x, sy = (int)y;
  unsigned short hx = (unsigned short)x, hy = (unsigned short)y;
  short ix = (short)x, iy = (short)y;
  u32 *o = out + SATURATING_RESULTS * i;
  o[0] = __builtin_elementwise_add_sat(x, y);
  o[1] = __builtin_elementwise_sub_sat(x, y);
  o[2] = (u32)__builtin_elementwise_add_sat(sx, sy);
  o[3] = (u32)__builtin_elementwise_sub_sat(sx, sy);
  o[4] = __builtin_elementwise_add_sat(hx, hy);
  o[5] = __builtin_elementwise_sub_sat(hx, hy);
  o[6] = (unsigned short)__builtin_elementwise_add_sat(ix, iy);
  o[7] = (unsigned short)__builtin_elementwise_sub_sat(ix, iy);
  // Packed halves (v_pk_add_u16 and relatives with clamp).
  us2 px = __builtin_bit_cast(us2, x), py = __builtin_bit_cast(us2, y);
  s2 qx = __builtin_bit_cast(s2, x), qy = __builtin_bit_cast(s2, y);
  o[8] = __builtin_bit_cast(u32, __builtin_elementwise_add_sat(px, py));
  o[9] = __builtin_bit_cast(u32, __builtin_elementwise_sub_sat(px, py));
  o[10] = __builtin_bit_cast(u32, __builtin_elementwise_add_sat(qx, qy));
  o[11] = __builtin_bit_cast(u32, __builtin_elementwise_sub_sat(qx, qy));
}

// SDWA forms (through inline assembly) on a[i], b[i], c[i] as raw bits: clamp and output
// modifiers on f32 and f16 results, source and destination selections on integer, float and
// compare operations. SDWA_RESULTS results per thread.
#define SDWA_RESULTS 12
extern "C" __global__ void sdwa_forms(const u32 *a, const u32 *b, const u32 *c, u32 *out, int n) {
  u32 i = gid_x();
  if (i >= (u32)n) return;
  u32 x = a[i], y = b[i], z = c[i], r;
  // f32 values in [-2, 2); f16 halves below 2 in magnitude (exponent bit 14 clear).
  float fx = (float)(int)x * 0x1p-30f, fy = (float)(int)y * 0x1p-30f;
  u32 hx = x & 0xBFFFBFFF, hy = y & 0xBFFFBFFF;
  u32 *o = out + SDWA_RESULTS * i;
  asm volatile("v_add_f32_sdwa %0, %1, %2 clamp dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:DWORD" : "=v"(r) : "v"(fx), "v"(fy)); o[0] = r;
  asm volatile("v_mul_f32_sdwa %0, %1, %2 mul:2 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:DWORD" : "=v"(r) : "v"(fx), "v"(fy)); o[1] = r;
  asm volatile("v_sub_f32_sdwa %0, %1, %2 clamp div:2 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:DWORD" : "=v"(r) : "v"(fx), "v"(fy)); o[2] = r;
  asm volatile("v_cvt_f32_i32_sdwa %0, sext(%1) mul:4 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_0" : "=v"(r) : "v"(x)); o[3] = r;
  r = z; asm volatile("v_add_f16_sdwa %0, %1, %2 clamp dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:WORD_1 src1_sel:WORD_0" : "+v"(r) : "v"(hx), "v"(hy)); o[4] = r;
  asm volatile("v_mul_f16_sdwa %0, -%1, |%2| mul:2 dst_sel:WORD_0 dst_unused:UNUSED_PAD src0_sel:WORD_1 src1_sel:WORD_0" : "=v"(r) : "v"(hx), "v"(hy)); o[5] = r;
  asm volatile("v_add_u32_sdwa %0, %1, %2 clamp dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_0 src1_sel:DWORD" : "=v"(r) : "v"(x), "v"(y)); o[6] = r;
  asm volatile("v_cvt_f32_i32_sdwa %0, sext(%1) dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_0" : "=v"(r) : "v"(x)); o[7] = r;
  asm volatile("v_xor_b32_sdwa %0, %1, %2 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1 src1_sel:DWORD" : "=v"(r) : "v"(x), "v"(y)); o[8] = r;
  asm volatile("v_and_b32_sdwa %0, %1, %2 dst_sel:BYTE_1 dst_unused:UNUSED_SEXT src0_sel:BYTE_2 src1_sel:BYTE_0" : "=v"(r) : "v"(x), "v"(y)); o[9] = r;
  r = z; asm volatile("v_add_u16_sdwa %0, %1, %2 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:WORD_1 src1_sel:WORD_0" : "+v"(r) : "v"(x), "v"(y)); o[10] = r;
  asm volatile("v_cmp_lt_i32_sdwa vcc, sext(%1), sext(%2) src0_sel:WORD_0 src1_sel:BYTE_0\n\tv_cndmask_b32_e64 %0, 0, 1, vcc" : "=v"(r) : "v"(x), "v"(y) : "vcc"); o[11] = r;
}
