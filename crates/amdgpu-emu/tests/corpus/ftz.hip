#include "kh.h"
// Built with -fgpu-flush-denormals-to-zero.
extern "C" __global__ void ftz_ops(const float *a, const float *b, float *out, int n) {
  u32 i = gid_x();
  if (i >= (u32)n) return;
  float x = a[i], y = b[i];
  out[3 * i + 0] = x * y;
  out[3 * i + 1] = x / y;
  out[3 * i + 2] = x * y + x;
}
