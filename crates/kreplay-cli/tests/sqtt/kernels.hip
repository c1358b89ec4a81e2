// Device code for the `kreplay sqtt` tests: two kernels and device functions that stay out of
// line, so their symbols are in the code object.
#include "kernels.h"

__device__ __attribute__((noinline)) float scale(float x, float k) { return x * k + 1.0f; }

__device__ __attribute__((noinline)) float clamp_add(float a, float b) {
  float s = a + b;
  return s > 100.0f ? 100.0f : s;
}

__global__ void saxpy(float* y, const float* x, float a, int n) {
  uint32_t i = global_idx_x();
  if (i < (uint32_t)n) y[i] = clamp_add(scale(x[i], a), y[i]);
}

KERNEL reduce_sum(float* out, const float* in, int n) {
  uint32_t i = global_idx_x();
  if (i < (uint32_t)n) atomic_add_u32((uint32_t*)out, (uint32_t)scale(in[i], 2.0f));
}
