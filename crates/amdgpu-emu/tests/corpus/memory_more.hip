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

// A buffer resource over `p` with NUM_RECORDS `bytes` and the given data and number formats
// (word 3: DST_SEL_XYZW = X, Y, Z, W, then NUM_FORMAT and DATA_FORMAT).
#define RSRC(p, bytes, dfmt, nfmt)                                                         \
  __builtin_amdgcn_make_buffer_rsrc((void *)(p), 0, (int)(bytes),                          \
                                    (int)(0xFAC | (nfmt) << 12 | (dfmt) << 15))
#if defined(__gfx942__)
#define GLC "sc0"
#else
#define GLC "glc"
#endif

// Private arrays of halves and bytes (gfx90a reaches scratch through MUBUF): two elements
// picked at run time pack into one register (buffer_load_short_d16_hi and the byte forms).
extern "C" __global__ void private_d16(const f16 *in, const unsigned char *bytes, const int *pick,
                                       half2 *hout, short2 *bout) {
  f16 a[256];
  unsigned char u[256];
  signed char s[256];
  u32 i = gid_x();
  for (int k = 0; k < 256; ++k) {
    a[k] = in[(i + k) % 512];
    u[k] = bytes[(i + k) % 512];
    s[k] = (signed char)bytes[(i * 3 + k) % 512];
  }
  int p = pick[i];
  int x = p & 255, y = (p >> 8) & 255;
  half2 v;
  v.x = a[x];
  v.y = a[y];
  hout[i] = v + v;
  short2 w;
  w.x = u[x];
  w.y = u[y];
  short2 z;
  z.x = s[y];
  z.y = s[x];
  bout[i] = w * (short)5 + z;
}

// Buffer atomics through clang's builtins: returning and plain integer adds to shared
// counters, float adds, packed half adds and f64 min/max to per-lane slots.
extern "C" __global__ void buffer_atomic_builtins(int *counters, float *f, half2 *h, double *d,
                                                  const float *fv, const half2 *hv,
                                                  const double *dv, int *ret) {
  u32 i = gid_x();
  __amdgpu_buffer_rsrc_t rc = RSRC(counters, 64, 4, 7);
  __amdgpu_buffer_rsrc_t rf = RSRC(f, 4 * 64, 4, 7);
  __amdgpu_buffer_rsrc_t rh = RSRC(h, 4 * 64, 4, 7);
  __amdgpu_buffer_rsrc_t rd = RSRC(d, 8 * 64, 4, 7);
  ret[i] = __builtin_amdgcn_raw_ptr_buffer_atomic_add_i32((int)i + 1, rc, 4 * (i % 4), 0, 0);
  (void)__builtin_amdgcn_raw_ptr_buffer_atomic_add_i32(3, rc, 16, 0, 0);
  // Lanes past NUM_RECORDS (offsets from 60 bytes on) are out of range: dropped.
  (void)__builtin_amdgcn_raw_ptr_buffer_atomic_add_i32(1, rc, 20 + 4 * (i % 16), 0, 0);
  (void)__builtin_amdgcn_raw_ptr_buffer_atomic_fadd_f32(fv[i], rf, 4 * (i % 64), 0, 0);
  (void)__builtin_amdgcn_raw_ptr_buffer_atomic_fadd_v2f16(hv[i], rh, 4 * (i % 64), 0, 0);
  (void)__builtin_amdgcn_raw_ptr_buffer_atomic_fmax_f64(dv[i], rd, 8 * (i % 32), 0, 0);
  (void)__builtin_amdgcn_raw_ptr_buffer_atomic_fmin_f64(dv[i], rd, 8 * (32 + i % 32), 0, 0);
}

// Every buffer atomic with GLC, in assembly: lane i owns dwords 16i.. of `m32` and qwords
// 16i.. of `m64`, applies operation k with operand k of its `o32`/`o64` to slot k, and
// records the value each returned.
#define AT32(name, k)                                                                      \
  do {                                                                                     \
    u32 v = o32[k];                                                                        \
    asm volatile("buffer_atomic_" name " %0, %1, %2, 0 offen " GLC "\n s_waitcnt vmcnt(0)" \
                 : "+v"(v) : "v"(b32 + 4 * (k)), "s"(rs32) : "memory");                    \
    r32[16 * i + (k)] = v;                                                                 \
  } while (0)
#define AT64(name, k)                                                                      \
  do {                                                                                     \
    u64 v = o64[k];                                                                        \
    asm volatile("buffer_atomic_" name " %0, %1, %2, 0 offen " GLC "\n s_waitcnt vmcnt(0)" \
                 : "+v"(v) : "v"(b64 + 8 * (k)), "s"(rs64) : "memory");                    \
    q64[16 * i + (k)] = v;                                                                 \
  } while (0)
typedef u32 u32x4 __attribute__((ext_vector_type(4)));
extern "C" __global__ void buffer_atomic_asm(u32 *m32, u64 *m64, const u32 *ops32,
                                             const u64 *ops64, u32 *r32, u64 *q64) {
  u32 i = gid_x();
  __amdgpu_buffer_rsrc_t rs32 = RSRC(m32, 64 * 16 * 4, 4, 7);
  __amdgpu_buffer_rsrc_t rs64 = RSRC(m64, 64 * 16 * 8, 4, 7);
  const u32 *o32 = &ops32[16 * i];
  const u64 *o64 = &ops64[16 * i];
  u32 b32 = 64 * i, b64 = 128 * i;
  AT32("swap", 0);
  {
    u64 v = (u64)o32[14] << 32 | o32[1];
    asm volatile("buffer_atomic_cmpswap %0, %1, %2, 0 offen offset:4 " GLC "\n s_waitcnt vmcnt(0)"
                 : "+v"(v) : "v"(b32), "s"(rs32) : "memory");
    r32[16 * i + 1] = (u32)v;
  }
  AT32("add", 2);
  AT32("sub", 3);
  AT32("smin", 4);
  AT32("umin", 5);
  AT32("smax", 6);
  AT32("umax", 7);
  AT32("and", 8);
  AT32("or", 9);
  AT32("xor", 10);
  AT32("inc", 11);
  AT32("dec", 12);
  AT32("add_f32", 13);
  AT32("pk_add_f16", 15);
  AT64("swap_x2", 0);
  {
    u32x4 v = {(u32)o64[1], (u32)(o64[1] >> 32), (u32)o64[14], (u32)(o64[14] >> 32)};
    asm volatile("buffer_atomic_cmpswap_x2 %0, %1, %2, 0 offen offset:8 " GLC "\n s_waitcnt vmcnt(0)"
                 : "+v"(v) : "v"(b64), "s"(rs64) : "memory");
    q64[16 * i + 1] = (u64)v.y << 32 | v.x;
  }
  AT64("add_x2", 2);
  AT64("sub_x2", 3);
  AT64("smin_x2", 4);
  AT64("umin_x2", 5);
  AT64("smax_x2", 6);
  AT64("umax_x2", 7);
  AT64("and_x2", 8);
  AT64("or_x2", 9);
  AT64("xor_x2", 10);
  AT64("inc_x2", 11);
  AT64("dec_x2", 12);
  AT64("add_f64", 13);
  AT64("min_f64", 14);
  AT64("max_f64", 15);
}

// The MUBUF d16 loads in assembly: the register starts as `keep[i]`, the loads replace one
// half with the element at `off[i]` (bytes of `src`).
extern "C" __global__ void buffer_d16_asm(const u32 *src, const u32 *off, const u32 *keep,
                                          u32 *out) {
  u32 i = gid_x();
  __amdgpu_buffer_rsrc_t r = RSRC(src, 256, 4, 7);
  u32 o = off[i];
  u32 v[6];
  for (int k = 0; k < 6; ++k) v[k] = keep[6 * i + k];
  asm volatile("buffer_load_ubyte_d16 %0, %1, %2, 0 offen\n s_waitcnt vmcnt(0)"
               : "+v"(v[0]) : "v"(o), "s"(r) : "memory");
  asm volatile("buffer_load_ubyte_d16_hi %0, %1, %2, 0 offen\n s_waitcnt vmcnt(0)"
               : "+v"(v[1]) : "v"(o), "s"(r) : "memory");
  asm volatile("buffer_load_sbyte_d16 %0, %1, %2, 0 offen\n s_waitcnt vmcnt(0)"
               : "+v"(v[2]) : "v"(o), "s"(r) : "memory");
  asm volatile("buffer_load_sbyte_d16_hi %0, %1, %2, 0 offen\n s_waitcnt vmcnt(0)"
               : "+v"(v[3]) : "v"(o), "s"(r) : "memory");
  asm volatile("buffer_load_short_d16 %0, %1, %2, 0 offen\n s_waitcnt vmcnt(0)"
               : "+v"(v[4]) : "v"(o & ~1u), "s"(r) : "memory");
  asm volatile("buffer_load_short_d16_hi %0, %1, %2, 0 offen\n s_waitcnt vmcnt(0)"
               : "+v"(v[5]) : "v"(o & ~1u), "s"(r) : "memory");
  for (int k = 0; k < 6; ++k) out[6 * i + k] = v[k];
}

typedef u32 u32x2 __attribute__((ext_vector_type(2)));

// Format loads with the data format, number format and DST_SEL of a V# built at run time:
// lane i reads element i (structured: `idxen`, records of `stride` bytes, `count` of them).
extern "C" __global__ void buffer_format_load(const void *src, u32 word3, int stride, int count,
                                              const u32 *keep, u32 *out) {
  u32 i = gid_x();
  __amdgpu_buffer_rsrc_t r =
      __builtin_amdgcn_make_buffer_rsrc((void *)src, (short)stride, count, (int)word3);
  u32x4 xyzw;
  u32 x;
  u32x2 d16;
  u32 hi = keep[2 * i], lo = keep[2 * i + 1];
  asm volatile("buffer_load_format_xyzw %0, %1, %2, 0 idxen\n s_waitcnt vmcnt(0)"
               : "=v"(xyzw) : "v"(i), "s"(r) : "memory");
  asm volatile("buffer_load_format_x %0, %1, %2, 0 idxen\n s_waitcnt vmcnt(0)"
               : "=v"(x) : "v"(i), "s"(r) : "memory");
  asm volatile("buffer_load_format_d16_xyzw %0, %1, %2, 0 idxen\n s_waitcnt vmcnt(0)"
               : "=v"(d16) : "v"(i), "s"(r) : "memory");
  asm volatile("buffer_load_format_d16_hi_x %0, %1, %2, 0 idxen\n s_waitcnt vmcnt(0)"
               : "+v"(hi) : "v"(i), "s"(r) : "memory");
  asm volatile("buffer_load_format_d16_x %0, %1, %2, 0 idxen\n s_waitcnt vmcnt(0)"
               : "+v"(lo) : "v"(i), "s"(r) : "memory");
  u32 *o = &out[9 * i];
  o[0] = xyzw.x;
  o[1] = xyzw.y;
  o[2] = xyzw.z;
  o[3] = xyzw.w;
  o[4] = x;
  o[5] = d16.x;
  o[6] = d16.y;
  o[7] = hi;
  o[8] = lo;
}

// Format stores through a V# built at run time: lane i writes element i from its four
// register components (`dst`) and from its four packed halves (`dst16`).
extern "C" __global__ void buffer_format_store(void *dst, void *dst16, u32 word3, int stride,
                                               int count, const u32 *regs, const u32 *halves) {
  u32 i = gid_x();
  __amdgpu_buffer_rsrc_t r = __builtin_amdgcn_make_buffer_rsrc(dst, (short)stride, count, (int)word3);
  __amdgpu_buffer_rsrc_t r16 =
      __builtin_amdgcn_make_buffer_rsrc(dst16, (short)stride, count, (int)word3);
  u32x4 v = {regs[4 * i], regs[4 * i + 1], regs[4 * i + 2], regs[4 * i + 3]};
  u32x2 h = {halves[2 * i], halves[2 * i + 1]};
  asm volatile("buffer_store_format_xyzw %0, %1, %2, 0 idxen\n s_waitcnt vmcnt(0)"
               :: "v"(v), "v"(i), "s"(r) : "memory");
  asm volatile("buffer_store_format_d16_xyzw %0, %1, %2, 0 idxen\n s_waitcnt vmcnt(0)"
               :: "v"(h), "v"(i), "s"(r16) : "memory");
}

// MTBUF: formats from the instruction, the V# a raw buffer (`bytes` long) with identity
// DST_SEL; lane i addresses its element by byte offset. Results go to `out` (10 dwords per
// lane); the stores write `dst` (a 4-byte and an 8-byte element per lane).
extern "C" __global__ void tbuffer_asm(const void *src, int bytes, const u32 *regs, void *dst,
                                       u32 *out) {
  u32 i = gid_x();
  __amdgpu_buffer_rsrc_t r = RSRC(src, bytes, 4, 4);
  __amdgpu_buffer_rsrc_t rd = RSRC(dst, 12 * 64 * 4, 4, 4);
  u32x4 a;
  u32x2 b;
  u32x2 c;
  u32 d = regs[4 * i];
  asm volatile("tbuffer_load_format_xyzw %0, %1, %2, 0 format:[BUF_DATA_FORMAT_8_8_8_8] offen\n"
               " s_waitcnt vmcnt(0)"
               : "=v"(a) : "v"(4 * i), "s"(r) : "memory");
  asm volatile("tbuffer_load_format_xy %0, %1, %2, 0 format:[BUF_DATA_FORMAT_16_16,BUF_NUM_FORMAT_SINT] offen\n"
               " s_waitcnt vmcnt(0)"
               : "=v"(b) : "v"(4 * i), "s"(r) : "memory");
  asm volatile("tbuffer_load_format_d16_xyz %0, %1, %2, 0 format:[BUF_DATA_FORMAT_8_8_8_8,BUF_NUM_FORMAT_USCALED] offen\n"
               " s_waitcnt vmcnt(0)"
               : "=v"(c) : "v"(4 * i), "s"(r) : "memory");
  u32x4 v = {regs[4 * i], regs[4 * i + 1], regs[4 * i + 2], regs[4 * i + 3]};
  asm volatile("tbuffer_store_format_xyzw %0, %1, %2, 0 format:[BUF_DATA_FORMAT_8_8_8_8,BUF_NUM_FORMAT_UINT] offen\n"
               " s_waitcnt vmcnt(0)"
               :: "v"(v), "v"(12 * i), "s"(rd) : "memory");
  asm volatile("tbuffer_store_format_xy %0, %1, %2, 0 format:[BUF_DATA_FORMAT_32_32,BUF_NUM_FORMAT_FLOAT] offen offset:4\n"
               " s_waitcnt vmcnt(0)"
               :: "v"(v.zw), "v"(12 * i), "s"(rd) : "memory");
  asm volatile("tbuffer_load_format_x %0, %1, %2, 0 format:[BUF_DATA_FORMAT_32,BUF_NUM_FORMAT_FLOAT] offen\n"
               " s_waitcnt vmcnt(0)"
               : "+v"(d) : "v"(4 * i), "s"(r) : "memory");
  u32 *o = &out[10 * i];
  o[0] = a.x;
  o[1] = a.y;
  o[2] = a.z;
  o[3] = a.w;
  o[4] = b.x;
  o[5] = b.y;
  o[6] = c.x;
  o[7] = c.y;
  o[8] = d;
  o[9] = 0;
}

#define AS1(T) __attribute__((address_space(1))) T
#define AS5(T) __attribute__((address_space(5))) T

// LDS DMA: loads whose data goes to LDS at M0 plus the instruction offset plus four bytes per
// lane (gfx90a: GLOBAL and MUBUF loads with the lds bit; gfx942: global_load_lds_* and MUBUF
// lds). One wave per block; `out` gets the LDS contents, five dwords per lane.
extern "C" __global__ void lds_dma(const u32 *src, u32 *out, u32 *back) {
  __shared__ u32 s[6 * 64];
  u32 t = tid_x();
  u32 i = gid_x();
  for (int k = 0; k < 6; ++k) s[64 * k + t] = 0xDEAD0000u + t;
  syncthreads();
  __builtin_amdgcn_global_load_lds((AS1(void) *)(src + i), (LDS(void) *)&s[0], 4, 0, 0);
  // The offset moves both addresses: lane t's byte at src + i + 16 lands in s[64 + 4 + t].
  __builtin_amdgcn_global_load_lds((AS1(void) *)((const char *)src + i), (LDS(void) *)&s[64], 1, 16,
                                   0);
  __amdgpu_buffer_rsrc_t r = RSRC(src, 4 * 128, 4, 4);
  // Halves at byte 2i (+4 from the offset); lanes past NUM_RECORDS load zero.
  __builtin_amdgcn_raw_ptr_buffer_load_lds(r, (LDS(void) *)&s[192], 2, 2 * i + 256 * bid_x(), 0, 4,
                                          0);
#if defined(__gfx942__)
  u32 priv[64];
  for (int k = 0; k < 64; ++k) priv[k] = src[k] ^ (0x1000u * t);
  u32 pa = (u32)(unsigned long)(AS5(u32) *)&priv[(t * 3) % 64];
  u32 area = (u32)(unsigned long)(LDS(u32) *)&s[256];
  asm volatile("s_mov_b32 m0, %1\n s_nop 0\n scratch_load_lds_dword %0, off\n s_waitcnt vmcnt(0)"
               :: "v"(pa), "s"(area) : "memory");
#else
  __amdgpu_buffer_rsrc_t rt = __builtin_amdgcn_make_buffer_rsrc(back, 4, 64 * 64, 0x27000 | 1 << 23);
  u32 area = (u32)(unsigned long)(LDS(u32) *)&s[0];
  // Each lane stores the dword its LDS DMA load wrote (record = lane, from ADD_TID_ENABLE).
  asm volatile("s_waitcnt vmcnt(0)\n s_mov_b32 m0, %0\n s_nop 0\n buffer_store_lds_dword %1, %2 lds\n"
               " s_waitcnt vmcnt(0)"
               :: "s"(area), "s"(rt), "s"(256 * bid_x()) : "memory");
#endif
  syncthreads();
  for (int k = 0; k < 5; ++k) out[5 * i + k] = s[64 * k + t];
}

#if defined(__gfx942__)
// Packed bfloat16 adds in global memory (global_atomic_pk_add_bf16); empty for gfx90a.
extern "C" __global__ void global_pk_add_bf16(unsigned *sum, const unsigned *v) {
  u32 i = gid_x();
  (void)__builtin_amdgcn_global_atomic_fadd_v2bf16((AS1(short2) *)&sum[i % 4],
                                                 __builtin_bit_cast(short2, v[i]));
}
#else
extern "C" __global__ void global_pk_add_bf16(unsigned *sum, const unsigned *v) {}
#endif

// A GWS semaphore operation: decoded, and a named fault when run.
extern "C" __global__ void gws_sema(u32 *out) {
  asm volatile("s_mov_b32 m0, 0\n s_nop 0\n ds_gws_sema_v offset:0 gds" ::: "memory");
  out[gid_x()] = 1;
}

// The 64-bit DS operations clang does not emit, in assembly. Lane t works on A[t], B[t],
// C[t] and C[64 + t] (a 512-byte stride), D[2t] and D[2t + 1], E[t] and F[t], initialised from
// `init` (8 qwords per lane) with operands from `ops` (8 qwords per lane); `out` gets the
// returned values (6 qwords) and the LDS qwords afterwards (8).
extern "C" __global__ void ds_asm64(const u64 *init, const u64 *ops, u64 *out) {
  __shared__ u64 A[64], B[64], C[128], D[128], E[64], F[64];
  u32 t = tid_x();
  u32 i = gid_x();
  const u64 *v = &init[8 * i];
  const u64 *o = &ops[8 * i];
  A[t] = v[0];
  B[t] = v[1];
  C[t] = v[2];
  C[64 + t] = v[3];
  D[2 * t] = v[4];
  D[2 * t + 1] = v[5];
  E[t] = v[6];
  F[t] = v[7];
  syncthreads();
  auto at = [](void *p) { return (u32)(unsigned long)(LDS(void) *)p; };
  u64 r0, r1;
  u32x4 rc, rd;
  asm volatile("ds_mskor_rtn_b64 %0, %1, %2, %3\n s_waitcnt lgkmcnt(0)"
               : "=v"(r0) : "v"(at(&A[t])), "v"(o[0]), "v"(o[1]) : "memory");
  asm volatile("ds_cmpst_rtn_f64 %0, %1, %2, %3\n s_waitcnt lgkmcnt(0)"
               : "=v"(r1) : "v"(at(&B[t])), "v"(o[2]), "v"(o[3]) : "memory");
  asm volatile("ds_wrxchg2st64_rtn_b64 %0, %1, %2, %3 offset1:1\n s_waitcnt lgkmcnt(0)"
               : "=v"(rc) : "v"(at(&C[t])), "v"(o[4]), "v"(o[5]) : "memory");
  asm volatile("ds_wrxchg2_rtn_b64 %0, %1, %2, %3 offset1:1\n s_waitcnt lgkmcnt(0)"
               : "=v"(rd) : "v"(at(&D[2 * t])), "v"(o[5]), "v"(o[4]) : "memory");
  asm volatile("ds_mskor_b64 %0, %1, %2\n ds_cmpst_f64 %3, %4, %5\n s_waitcnt lgkmcnt(0)"
               :: "v"(at(&E[t])), "v"(o[6]), "v"(o[7]), "v"(at(&F[t])), "v"(o[2]), "v"(o[3])
               : "memory");
  syncthreads();
  u64 *w = &out[14 * i];
  w[0] = r0;
  w[1] = r1;
  w[2] = (u64)rc.y << 32 | rc.x;
  w[3] = (u64)rc.w << 32 | rc.z;
  w[4] = (u64)rd.y << 32 | rd.x;
  w[5] = (u64)rd.w << 32 | rd.z;
  w[6] = A[t];
  w[7] = B[t];
  w[8] = C[t];
  w[9] = C[64 + t];
  w[10] = D[2 * t];
  w[11] = D[2 * t + 1];
  w[12] = E[t];
  w[13] = F[t];
}

// More typed forms in assembly: a format load to LDS (M0 plus four bytes per lane), a d16_hi
// format store and an MTBUF d16 store. `src` holds 8_8_8_8 UNORM elements, one per lane.
extern "C" __global__ void format_more_asm(const u32 *src, const u32 *halves, unsigned short *hi_out,
                                           unsigned short *t16_out, u32 *lds_out) {
  __shared__ u32 s[64];
  u32 t = tid_x();
  u32 i = gid_x();
  __amdgpu_buffer_rsrc_t r = RSRC(src, 4 * 128, 10, 0);
  __amdgpu_buffer_rsrc_t rh = RSRC(hi_out, 2 * 128, 2, 7);
  __amdgpu_buffer_rsrc_t rt = RSRC(t16_out, 2 * 128, 2, 4);
  u32 area = (u32)(unsigned long)(LDS(u32) *)&s[0];
  s[t] = 0;
  syncthreads();
  asm volatile("s_mov_b32 m0, %0\n s_nop 0\n buffer_load_format_x %1, %2, 0 offen lds\n"
               " s_waitcnt vmcnt(0)"
               :: "s"(area), "v"(4 * i), "s"(r) : "memory");
  u32 h = halves[i];
  asm volatile("buffer_store_format_d16_hi_x %0, %1, %2, 0 offen\n s_waitcnt vmcnt(0)"
               :: "v"(h), "v"(2 * i), "s"(rh) : "memory");
  asm volatile("tbuffer_store_format_d16_x %0, %1, %2, 0 format:[BUF_DATA_FORMAT_16,BUF_NUM_FORMAT_UINT] offen\n"
               " s_waitcnt vmcnt(0)"
               :: "v"(h), "v"(2 * i), "s"(rt) : "memory");
  syncthreads();
  lds_out[i] = s[t];
}

// Aligned 64-bit values are read and written whole. Work-group 0 flips a cell between two
// values whose halves differ (a one-lane store) until the readers are done; the other
// work-groups read it through an address per lane (all the same, so a gather) `rounds` times,
// count the values that are neither, and how often the value they read changed.
extern "C" __global__ void whole_pairs(u64 *cell, const u32 *index, u32 *out, int rounds) {
  volatile u64 *c = cell;
  volatile u32 *done = out + 2;
  const u64 lo = 0x00000000FFFFFFFFull, hi = 0xFFFFFFFF00000000ull;
  if (bid_x() == 0) {
    if (tid_x() == 0) {
      u64 v = lo;
      while (*done < grid_x() / bdim_x() - 1) {
        v = v == lo ? hi : lo;
        c[0] = v;
      }
    }
    return;
  }
  u32 k = index[tid_x()];
  u32 torn = 0, changes = 0;
  u64 last = c[k];
  for (int r = 0; r < rounds; r++) {
    u64 v = c[k];
    torn += (v != lo && v != hi) ? 1u : 0u;
    changes += v != last ? 1u : 0u;
    last = v;
  }
  ATOMIC_ADD(&out[0], torn);
  ATOMIC_ADD(&out[1], changes);
  syncthreads();
  if (tid_x() == 0) ATOMIC_ADD(&out[2], 1u);
}
