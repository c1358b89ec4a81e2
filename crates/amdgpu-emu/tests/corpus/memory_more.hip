// Memory instructions beyond plain loads and stores: d16 LDS accesses, LDS append counters,
// packed LDS atomics, buffer (MUBUF) atomics and format loads, and the DS operations only
// assembly reaches.
#include "kh.h"

typedef _Float16 half2 __attribute__((ext_vector_type(2)));
typedef short short2 __attribute__((ext_vector_type(2)));
#define LDS(T) __attribute__((address_space(3))) T

// Halves in LDS: each lane packs two elements into one register (ds_read_u16_d16_hi on top
// of a plain read) and writes the high half back (ds_write_b16_d16_hi).
extern "C" __global__ void lds_half_pairs(const f16 *in, f16 *out, int n) {
  __shared__ f16 s[512];
  u32 t = tid_x();
  u32 i = gid_x();
  s[2 * t] = in[2 * i];
  s[2 * t + 1] = in[2 * i + 1];
  syncthreads();
  u32 j = (t * 7 + 3) % bdim_x();
  u32 k = (t * 5 + 1) % bdim_x();
  half2 v;
  v.x = s[2 * j + 1];
  v.y = s[2 * k];
  v = v + v;
  syncthreads();
  s[2 * t] = v.y;
  s[2 * t + 1] = v.x;
  syncthreads();
  if ((int)i < n) {
    out[2 * i] = s[2 * ((t + 1) % bdim_x())];
    out[2 * i + 1] = s[2 * ((t + 1) % bdim_x()) + 1];
  }
}

// Bytes widened to packed 16-bit lanes (ds_read_u8_d16(_hi), ds_read_i8_d16(_hi)), and the
// high half's low byte stored back (ds_write_b8_d16_hi).
extern "C" __global__ void lds_byte_pairs(const unsigned char *in, short *out, unsigned char *back) {
  __shared__ unsigned char u[256];
  __shared__ signed char sb[256];
  u32 t = tid_x();
  u32 i = gid_x();
  u[t] = in[i];
  sb[t] = (signed char)in[i ^ 1];
  syncthreads();
  u32 j = (t + 5) % bdim_x();
  short2 a, b;
  a.x = u[t];
  a.y = u[j];
  b.x = sb[t];
  b.y = sb[j];
  short2 c = a * (short)3 + b;
  out[2 * i] = c.x;
  out[2 * i + 1] = c.y;
  syncthreads();
  u[j] = (unsigned char)c.y;
  syncthreads();
  back[i] = u[t];
}

// An LDS ring-buffer counter: lanes with a set flag append, then lanes with another flag
// consume; every lane records what its instruction returned. One wave per block.
extern "C" __global__ void lds_append_consume(const int *flags, int *got_append, int *got_consume,
                                              int *final_count) {
  __shared__ int counters[4];
  u32 t = tid_x();
  u32 i = gid_x();
  if (t < 4) counters[t] = 100 * (int)bid_x() + (int)t;
  syncthreads();
  int f = flags[i];
  int a = -1, c = -1;
  if (f & 1) a = __builtin_amdgcn_ds_append((LDS(int) *)&counters[2]);
  syncthreads();
  if (f & 2) c = __builtin_amdgcn_ds_consume((LDS(int) *)&counters[2]);
  syncthreads();
  got_append[i] = a;
  got_consume[i] = c;
  if (t < 4) final_count[4 * bid_x() + t] = counters[t];
}

#if defined(__gfx942__)
typedef __bf16 bf16x2 __attribute__((ext_vector_type(2)));
#endif

// Packed half and bfloat16 sums in LDS (ds_pk_add_f16 / _bf16, and the returning forms); the
// kernels are empty for gfx90a, which has no such instructions.
extern "C" __global__ void lds_pk_add(const half2 *hv, const unsigned *bv, half2 *hsum, unsigned *bsum,
                                      half2 *hret, unsigned *bret) {
#if defined(__gfx942__)
  __shared__ half2 hs[4];
  __shared__ bf16x2 bs[4];
  u32 t = tid_x();
  u32 i = gid_x();
  if (t < 4) {
    hs[t] = hsum[4 * bid_x() + t];
    bs[t] = __builtin_bit_cast(bf16x2, bsum[4 * bid_x() + t]);
  }
  syncthreads();
  half2 h = hv[i];
  bf16x2 b = __builtin_bit_cast(bf16x2, bv[i]);
  __builtin_amdgcn_ds_atomic_fadd_v2f16((LDS(half2) *)&hs[t % 2], h);
  __builtin_amdgcn_ds_atomic_fadd_v2bf16((LDS(bf16x2) *)&bs[t % 2], b);
  hret[i] = __builtin_amdgcn_ds_atomic_fadd_v2f16((LDS(half2) *)&hs[2 + t % 2], h);
  bret[i] = __builtin_bit_cast(unsigned, __builtin_amdgcn_ds_atomic_fadd_v2bf16((LDS(bf16x2) *)&bs[2 + t % 2], b));
  syncthreads();
  if (t < 4) {
    hsum[4 * bid_x() + t] = hs[t];
    bsum[4 * bid_x() + t] = __builtin_bit_cast(unsigned, bs[t]);
  }
#endif
}

// DS operations clang does not emit, in inline assembly: each lane works on its own ten LDS
// dwords (initialised from `init`) with operands from `ops`, and reports what each returned
// (`out`) and its dwords afterwards (`mem`). One wave per block.
extern "C" __global__ void ds_asm(const u32 *init, const u32 *ops, u32 *out, u32 *mem) {
  __shared__ u32 m[64 * 10];
  __shared__ u32 tid_area[72];
  u32 t = tid_x();
  u32 i = gid_x();
  const u32 *o = &ops[16 * i];
  for (int k = 0; k < 10; ++k) m[10 * t + k] = init[10 * i + k];
  syncthreads();
  u32 base = (u32)(unsigned long)(LDS(u32) *)&m[10 * t];
  u32 r0, r1, r2, d = o[8], e = o[9], g = o[10];
  u64 r34, r56;
  u64 c64 = (u64)o[12] << 32 | o[11];
  asm volatile("ds_mskor_rtn_b32 %0, %1, %2, %3\n s_waitcnt lgkmcnt(0)"
               : "=v"(r0) : "v"(base), "v"(o[0]), "v"(o[1]) : "memory");
  asm volatile("ds_wrap_rtn_b32 %0, %1, %2, %3 offset:4\n s_waitcnt lgkmcnt(0)"
               : "=v"(r1) : "v"(base), "v"(o[2]), "v"(o[3]) : "memory");
  asm volatile("ds_cmpst_rtn_f32 %0, %1, %2, %3 offset:8\n s_waitcnt lgkmcnt(0)"
               : "=v"(r2) : "v"(base), "v"(o[4]), "v"(o[5]) : "memory");
  asm volatile("ds_wrxchg2_rtn_b32 %0, %1, %2, %3 offset0:3 offset1:4\n s_waitcnt lgkmcnt(0)"
               : "=v"(r34) : "v"(base), "v"(o[6]), "v"(o[7]) : "memory");
  asm volatile("ds_condxchg32_rtn_b64 %0, %1, %2 offset:24\n s_waitcnt lgkmcnt(0)"
               : "=v"(r56) : "v"(base), "v"(c64) : "memory");
  asm volatile("ds_read_u16_d16 %0, %1 offset:32\n s_waitcnt lgkmcnt(0)"
               : "+v"(d) : "v"(base) : "memory");
  asm volatile("ds_read_i8_d16 %0, %1 offset:33\n s_waitcnt lgkmcnt(0)"
               : "+v"(e) : "v"(base) : "memory");
  asm volatile("ds_read_u8_d16 %0, %1 offset:35\n s_waitcnt lgkmcnt(0)"
               : "+v"(g) : "v"(base) : "memory");
  asm volatile("ds_write_b16_d16_hi %0, %1 offset:36\n ds_mskor_b32 %0, %2, %3 offset:20\n"
               " s_waitcnt lgkmcnt(0)"
               :: "v"(base), "v"(o[13]), "v"(o[14]), "v"(o[15]) : "memory");
  // Lane-indexed accesses based at M0: each lane writes dword `lane + 1` of the area, then
  // reads dword `lane + 2`.
  u32 area = (u32)(unsigned long)(LDS(u32) *)&tid_area[0];
  u32 at;
  asm volatile("s_mov_b32 m0, %1\n s_nop 0\n ds_write_addtid_b32 %2 offset:4\n"
               " s_waitcnt lgkmcnt(0)\n ds_read_addtid_b32 %0 offset:8\n s_waitcnt lgkmcnt(0)"
               : "=v"(at) : "s"(area), "v"(o[0] ^ t) : "memory");
  syncthreads();
  u32 *r = &out[10 * i];
  r[0] = r0;
  r[1] = r1;
  r[2] = r2;
  r[3] = (u32)r34;
  r[4] = (u32)(r34 >> 32);
  r[5] = (u32)r56;
  r[6] = (u32)(r56 >> 32);
  r[7] = d;
  r[8] = e;
  r[9] = g;
  for (int k = 0; k < 10; ++k) mem[10 * i + k] = m[10 * t + k];
  mem[64 * 10 * 4 + i] = at;
}
