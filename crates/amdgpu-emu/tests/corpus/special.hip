#include "kh.h"
extern "C" __global__ void trap_kernel(int *x) { if (gid_x() == 3) __builtin_trap(); x[gid_x()] = 1; }
extern "C" __global__ void oob_store(int *x, int n) { x[gid_x() * n] = 5; }
extern "C" __global__ void trace_markers(u32 *hw) {
  u32 i = gid_x();
  __builtin_amdgcn_s_ttracedata(0x12 << 2 | 2);
  hw[i] = __builtin_amdgcn_s_getreg((3 << 11) | (8 << 6) | 4) << 8 | __builtin_amdgcn_s_getreg((1 << 11) | (4 << 6) | 4) << 4 | __builtin_amdgcn_s_getreg((3 << 11) | (0 << 6) | 4);
  __builtin_amdgcn_s_ttracedata(1);
}
// Waits for a flag nothing sets.
extern "C" __global__ void spin_forever(volatile int *flag) { while (*flag == 0) {} }
// A loop of f32 arithmetic `n` times per work-item (with `n` near 2^31: longer than any time
// limit of a test).
extern "C" __global__ void long_loop(float *x, int n) {
  float a = x[gid_x()];
  for (int k = 0; k < n; k++) a = a * 0.5f + 1.0f;
  x[gid_x()] = a;
}
