#include "kh.h"
extern "C" __global__ void reduce_i32(const int *in, int *out, int n) {
  __shared__ int tmp[1024];
  u32 t = tid_x();
  u32 i = gid_x();
  tmp[t] = i < (u32)n ? in[i] : 0;
  for (u32 off = bdim_x() / 2; off > 0; off >>= 1) {
    syncthreads();
    if (t < off) tmp[t] += tmp[t + off];
  }
  if (t == 0) ATOMIC_ADD(out, tmp[0]);
}
extern "C" __global__ void reduce_max_u32(const u32 *in, u32 *out, int n) {
  __shared__ u32 tmp[256];
  u32 t = tid_x();
  u32 m = 0;
  for (u32 i = gid_x(); i < (u32)n; i += grid_x()) m = in[i] > m ? in[i] : m;
  tmp[t] = m;
  syncthreads();
  for (u32 off = bdim_x() / 2; off > 0; off >>= 1) {
    if (t < off) tmp[t] = tmp[t] > tmp[t + off] ? tmp[t] : tmp[t + off];
    syncthreads();
  }
  if (t == 0) ATOMIC_MAX(out, tmp[0]);
}
extern "C" __global__ void reduce_f64(const double *in, double *partial, int n) {
  __shared__ double tmp[256];
  u32 t = tid_x();
  double s = 0;
  for (u32 i = gid_x(); i < (u32)n; i += grid_x()) s += in[i];
  tmp[t] = s;
  for (u32 off = bdim_x() / 2; off > 0; off >>= 1) {
    syncthreads();
    if (t < off) tmp[t] += tmp[t + off];
  }
  if (t == 0) partial[bid_x()] = tmp[0];
}
// Inclusive prefix sum of each block (Hillis-Steele, double-buffered).
extern "C" __global__ void scan_block(const int *in, int *out) {
  __shared__ int buf[2][256];
  u32 t = tid_x(), n = bdim_x(), base = bid_x() * n;
  int p = 0;
  buf[0][t] = in[base + t];
  syncthreads();
  for (u32 off = 1; off < n; off <<= 1) {
    int v = buf[p][t];
    if (t >= off) v += buf[p][t - off];
    buf[1 - p][t] = v;
    p = 1 - p;
    syncthreads();
  }
  out[base + t] = buf[p][t];
}
