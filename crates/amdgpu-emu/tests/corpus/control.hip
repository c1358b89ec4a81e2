#include "kh.h"
extern "C" __global__ void collatz(const u32 *in, u32 *steps, int n) {
  u32 i = gid_x();
  if (i >= (u32)n) return;
  u32 x = in[i], s = 0;
  while (x != 1 && s < 1000) { x = (x & 1) ? 3 * x + 1 : x / 2; s++; }
  steps[i] = s;
}
extern "C" __global__ void nested_divergence(const int *in, int *out, int n) {
  u32 i = gid_x();
  if (i >= (u32)n) return;
  int x = in[i], r;
  if (x > 0) {
    if (x & 1) r = x * 3;
    else if (x & 2) r = x - 7;
    else { r = 0; for (int k = 0; k < (x & 7); k++) r += k * x; }
  } else if (x < -100) {
    return;  // early return leaves out[i] untouched
  } else {
    r = -x;
    for (int k = 0; k < 3; k++) if ((r >> k) & 1) r ^= 0x55 << k;
  }
  out[i] = r;
}
extern "C" __global__ void grid2d(float *out, int w, int h) {
  u32 x = bid_x() * bdim_x() + tid_x();
  u32 y = bid_y() * bdim_y() + tid_y();
  if (x < (u32)w && y < (u32)h) out[y * w + x] = (float)x * 0.5f + (float)y;
}
extern "C" __global__ void block3d(u32 *out) {
  u32 lin = (tid_z() * bdim_y() + tid_y()) * bdim_x() + tid_x();
  u32 wg = (bid_z() * 2 + bid_y()) * 2 + bid_x();
  out[wg * bdim_x() * bdim_y() * bdim_z() + lin] = (tid_x() << 20) | (tid_y() << 10) | tid_z() | (wg << 28);
}
NOINLINE __device__ float poly(float x, int k) {
  float r = 0;
  for (int j = 0; j <= k; j++) r = r * x + (float)(j + 1);
  return r;
}
extern "C" __global__ void call_poly(const float *in, float *out, int n) {
  u32 i = gid_x();
  if (i < (u32)n) out[i] = poly(in[i], (int)(i % 5));
}
NOINLINE __device__ int sum_through(int *p, int count) {
  int s = 0;
  for (int k = 0; k < count; k++) { p[k] += k; s += p[k]; }
  return s;
}
// A generic pointer into LDS and one into private memory, used by the same non-inlined function.
extern "C" __global__ void generic_ptrs(const int *in, int *out) {
  __shared__ int lds[64 * 4];
  int priv[4];
  u32 t = tid_x();
  for (int k = 0; k < 4; k++) { lds[t * 4 + k] = in[t] + k; priv[k] = in[t] * k; }
  int a = sum_through(&lds[t * 4], 4);
  int b = sum_through(priv, 4);
  out[bid_x() * bdim_x() + t] = a * 1000 + b;
}
// A private array indexed at run time.
extern "C" __global__ void private_array(const u32 *idx, u32 *out, int n) {
  u32 i = gid_x();
  if (i >= (u32)n) return;
  u32 a[17];
  for (int k = 0; k < 17; k++) a[k] = i * k + (u32)k * (u32)k;
  u32 s = 0;
  for (int k = 0; k < 8; k++) s += a[(idx[i] + k * 5) % 17];
  out[i] = s;
}
extern "C" __global__ void stencil2d(const float *in, float *out, int w, int h) {
  u32 x = bid_x() * bdim_x() + tid_x();
  u32 y = bid_y() * bdim_y() + tid_y();
  if (x == 0 || y == 0 || x >= (u32)w - 1 || y >= (u32)h - 1) return;
  float c = in[y * w + x];
  out[y * w + x] = 0.5f * c + 0.125f * (in[y * w + x - 1] + in[y * w + x + 1] + in[(y - 1) * w + x] + in[(y + 1) * w + x]);
}
extern "C" __global__ void matmul_tiled(const float *a, const float *b, float *c, int n) {
  __shared__ float ta[16][16], tb[16][16];
  u32 tx = tid_x(), ty = tid_y();
  u32 row = bid_y() * 16 + ty, col = bid_x() * 16 + tx;
  float acc = 0;
  for (int t = 0; t < n / 16; t++) {
    ta[ty][tx] = a[row * n + t * 16 + tx];
    tb[ty][tx] = b[(t * 16 + ty) * n + col];
    syncthreads();
    for (int k = 0; k < 16; k++) acc = __builtin_fmaf(ta[ty][k], tb[k][tx], acc);
    syncthreads();
  }
  c[row * n + col] = acc;
}
extern "C" __global__ void ballot_count(const int *in, u32 *out, int n) {
  u32 i = gid_x();
  int pred = i < (u32)n && (in[i] & 3) == 1;
  u64 mask = __builtin_amdgcn_ballot_w64(pred);
  if ((tid_x() & 63) == 0) out[i / 64] = (u32)__builtin_popcountll(mask);
}
// Dynamic LDS sized by the dispatch packet (group segment size beyond the fixed part).
extern __shared__ int dyn_lds_buf[];
extern "C" __global__ void dyn_lds(const int *in, int *out, int n) {
  u32 t = tid_x();
  for (u32 k = t; k < (u32)n; k += bdim_x()) dyn_lds_buf[k] = in[k] * 2;
  syncthreads();
  for (u32 k = t; k < (u32)n; k += bdim_x()) out[bid_x() * n + k] = dyn_lds_buf[n - 1 - k];
}
// Whole waves end before the barriers; the remaining waves still synchronise every iteration.
extern "C" __global__ void early_exit_barrier(int *out) {
  __shared__ int acc[128];
  u32 t = tid_x();
  if (t >= 128) return;
  acc[t] = (int)t;
  for (int r = 0; r < 5; r++) {
    syncthreads();
    int v = acc[(t + 1) & 127];
    syncthreads();
    acc[t] = v + 1;
  }
  syncthreads();
  out[bid_x() * 128 + t] = acc[t];
}
