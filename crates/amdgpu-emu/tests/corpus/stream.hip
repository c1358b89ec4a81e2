#include "kh.h"
// BabelStream-style kernels and the replay counter kernels.
extern "C" __global__ void inc(int *x, int n) { u32 i = gid_x(); if (i < (u32)n) x[i] += 1; }
extern "C" __global__ void copy(float *a, const float *c, int n) { u32 i = gid_x(); if (i < (u32)n) a[i] = c[i]; }
extern "C" __global__ void mul(float *b, const float *c, float s, int n) { u32 i = gid_x(); if (i < (u32)n) b[i] = s * c[i]; }
extern "C" __global__ void add(float *c, const float *a, const float *b, int n) { u32 i = gid_x(); if (i < (u32)n) c[i] = a[i] + b[i]; }
extern "C" __global__ void triad(float *a, const float *b, const float *c, float s, int n) {
  u32 i = gid_x(); if (i < (u32)n) a[i] = b[i] + s * c[i];
}
extern "C" __global__ void triad_f64(double *a, const double *b, const double *c, double s, int n) {
  u32 i = gid_x(); if (i < (u32)n) a[i] = b[i] + s * c[i];
}
// Grid-stride dot product: LDS tree reduction with barriers inside the loop.
extern "C" __global__ void dot(const float *a, const float *b, float *partial, int n) {
  __shared__ float tmp[256];
  u32 t = tid_x();
  float s = 0.0f;
  for (u32 i = gid_x(); i < (u32)n; i += grid_x()) s += a[i] * b[i];
  tmp[t] = s;
  for (u32 off = bdim_x() / 2; off > 0; off /= 2) {
    syncthreads();
    if (t < off) tmp[t] += tmp[t + off];
  }
  if (t == 0) partial[bid_x()] = tmp[0];
}
__device__ int counter;
extern "C" __global__ void count_up(int n) { if (gid_x() < (u32)n) ATOMIC_ADD(&counter, 1); }
extern "C" __global__ void read_counter(int *out) { if (gid_x() == 0) *out = counter; }
__device__ float table[8] = {1, 2, 3, 4, 5, 6, 7, 8};
extern "C" __global__ void global_table(float *out, int n) { u32 i = gid_x(); if (i < (u32)n) out[i] = table[i & 7] * 2.0f; }
// ALU-bound: a chain of fused multiply-adds in registers per element.
extern "C" __global__ void alu_fma(float *x, int n, int iters) {
  u32 i = gid_x();
  if (i >= (u32)n) return;
  float a = x[i], b = a * 0.5f + 1.0f, c = 0.999f;
  for (int k = 0; k < iters; k++) {
    a = __builtin_fmaf(a, c, b);
    b = __builtin_fmaf(b, c, a);
    a = __builtin_fmaf(a, c, -b);
    b = __builtin_fmaf(b, 0.5f, a);
  }
  x[i] = a + b;
}
