#include "kh.h"
typedef float f4 __attribute__((ext_vector_type(4)));
// Kernels whose instruction counts follow from their disassembly: straight-line code (no bounds
// check, the grid is a multiple of the work-group) and one loop whose trip count is an argument.

// Global loads and stores, f32 multiply-add, LDS through a work-group barrier.
extern "C" __global__ void straight(float *a, const float *b, float s) {
  __shared__ float t[256];
  u32 l = tid_x();
  u32 i = bid_x() * 256 + l;
  t[l] = b[i];
  syncthreads();
  a[i] = t[255 - l] * s + 1.0f;
}

// One MFMA per wave, its result stored.
extern "C" __global__ void mfma_once(const float *a, float *d) {
  u32 l = tid_x();
  f4 acc = {0, 0, 0, 0};
  acc = __builtin_amdgcn_mfma_f32_16x16x4f32(a[l], a[l + 64], acc, 0, 0, 0);
  d[l] = acc[0] + acc[1] + acc[2] + acc[3];
}

// A uniform loop of `n` trips.
extern "C" __global__ void looped(float *a, int n) {
  u32 i = bid_x() * 64 + tid_x();
  float acc = a[i];
  for (int k = 0; k < n; k++) acc = acc * 0.5f + 3.0f;
  a[i] = acc;
}
