#include "kh.h"
extern "C" __global__ void atomic_ops_i32(int *c, const int *v, int n) {
  u32 i = gid_x();
  if (i >= (u32)n) return;
  int x = v[i];
  ATOMIC_ADD(&c[0], x);
  ATOMIC_MAX(&c[1], x);
  ATOMIC_MIN(&c[2], x);
  ATOMIC_AND(&c[3], x | 0x7ff0);
  ATOMIC_OR(&c[4], x & 0x0ff0);
  ATOMIC_XOR(&c[5], x);
  __hip_atomic_fetch_add((u32 *)&c[6], 1u, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
extern "C" __global__ void atomic_ops_u64(u64 *c, const u64 *v, int n) {
  u32 i = gid_x();
  if (i >= (u32)n) return;
  u64 x = v[i];
  ATOMIC_ADD(&c[0], x);
  ATOMIC_MAX(&c[1], x);
  ATOMIC_MIN(&c[2], x);
  ATOMIC_XOR(&c[3], x);
}
extern "C" __global__ void atomic_add_f32(float *sum, const float *v, int n) {
  u32 i = gid_x();
  if (i < (u32)n) ATOMIC_ADD(sum, v[i]);
}
extern "C" __global__ void atomic_add_f64(double *sum, const double *v, int n) {
  u32 i = gid_x();
  if (i < (u32)n) ATOMIC_ADD(sum, v[i]);
}
// Float maximum through a compare-and-swap loop.
extern "C" __global__ void cas_max_f32(float *m, const float *v, int n) {
  u32 i = gid_x();
  if (i >= (u32)n) return;
  float x = v[i];
  u32 *p = (u32 *)m;
  u32 old = __hip_atomic_load(p, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  while (__builtin_bit_cast(float, old) < x) {
    u32 want = __builtin_bit_cast(u32, x);
    if (ATOMIC_CAS(p, &old, want)) break;
  }
}
// Ticket numbers handed out by an atomic exchange chain: each lane gets a unique slot.
extern "C" __global__ void atomic_xchg_slots(int *slots, int *next, int n) {
  u32 i = gid_x();
  if (i >= (u32)n) return;
  int s = ATOMIC_ADD(next, 1);
  ATOMIC_XCHG(&slots[s], (int)i + 1);
}
extern "C" __global__ void histogram(const u32 *in, u32 *bins, int n, int nbins) {
  __shared__ u32 local[256];
  u32 t = tid_x();
  for (u32 b = t; b < (u32)nbins; b += bdim_x()) local[b] = 0;
  syncthreads();
  for (u32 i = gid_x(); i < (u32)n; i += grid_x()) LDS_ATOMIC_ADD(&local[in[i] % nbins], 1u);
  syncthreads();
  for (u32 b = t; b < (u32)nbins; b += bdim_x()) if (local[b]) ATOMIC_ADD(&bins[b], local[b]);
}
extern "C" __global__ void lds_atomics(const int *in, int *out) {
  __shared__ int s[4];
  __shared__ float f;
  u32 t = tid_x();
  if (t == 0) { s[0] = 0; s[1] = -2147483647 - 1; s[2] = 2147483647; s[3] = 0; f = 0.0f; }
  syncthreads();
  int x = in[gid_x()];
  LDS_ATOMIC_ADD(&s[0], x);
  __hip_atomic_fetch_max(&s[1], x, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  __hip_atomic_fetch_min(&s[2], x, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  __hip_atomic_fetch_xor(&s[3], x, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  __hip_atomic_fetch_add(&f, (float)(x & 15), __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  syncthreads();
  if (t < 4) out[bid_x() * 5 + t] = s[t];
  if (t == 4) out[bid_x() * 5 + 4] = (int)f;
}
