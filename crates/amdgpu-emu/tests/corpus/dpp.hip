#include "kh.h"
// Built with -mllvm -amdgpu-atomic-optimizer-strategy=DPP: the atomics become wave reductions
// with DPP row shifts and broadcasts plus one atomic per wave.
extern "C" __global__ void dpp_atomic_sum(const int *in, int *sum, u32 *umax, int n) {
  u32 i = gid_x();
  if (i >= (u32)n) return;
  ATOMIC_ADD(sum, in[i]);
  ATOMIC_MAX(umax, (u32)in[i] * 2654435761u);
}
extern "C" __global__ void dpp_atomic_f32(const float *in, float *sum, int n) {
  u32 i = gid_x();
  if (i < (u32)n) ATOMIC_ADD(sum, in[i]);
}
