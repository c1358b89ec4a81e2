#include "kernels.h"
/* Kernels whose counters the aqlprofile tests collect: (float *a, const float *b, float s). */

/* Straight-line: a global load and store, an LDS round trip through a barrier, f32 math. */
KERNEL straight(float *a, const float *b, float s) {
  __shared__ float t[256];
  uint32_t l = thread_idx_x();
  uint32_t i = block_idx_x() * 256 + l;
  t[l] = b[i];
  __builtin_amdgcn_s_barrier();
  a[i] = t[255 - l] * s + 1.0f;
}

/* A loop of b[0] trips (uniform), then a store. */
KERNEL looped(float *a, const float *b, float s) {
  uint32_t i = block_idx_x() * 64 + thread_idx_x();
  int n = (int)b[0];
  float acc = s;
  for (int k = 0; k < n; k++) acc = acc * 0.5f + 3.0f;
  a[i] = acc;
}
