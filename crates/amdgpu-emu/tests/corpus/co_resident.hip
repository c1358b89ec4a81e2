#include "kh.h"
// Work-groups that wait on one another without a cooperative launch, as kernels do that rely
// on a small grid being co-resident on the GPU (this code object has no grid-wide barrier
// instruction, so the emulator schedules it as an ordinary dispatch).

// Work-group 0 waits for a flag the last work-group sets; every work-group records that it ran.
extern "C" __global__ void wait_for_last(u32 *flag, u32 *out) {
  u32 g = bid_x(), groups = grid_x() / bdim_x();
  if (g == 0) {
    if (tid_x() == 0)
      while (__hip_atomic_load(flag, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT) == 0) {}
    syncthreads();
    if (tid_x() == 0) out[0] = __hip_atomic_load(flag, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  } else if (g == groups - 1 && tid_x() == 0) {
    __hip_atomic_store(flag, g, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT);
  }
  if (tid_x() == 0) out[1 + g] = g + 1;
}

// A grid barrier made of a global counter: each work-group publishes partial[g], arrives, waits
// until all have, then sums every partial.
extern "C" __global__ void counter_barrier(u32 *count, u32 *partial, u32 *out) {
  __shared__ u32 total;
  u32 g = bid_x(), groups = grid_x() / bdim_x();
  if (tid_x() == 0) {
    partial[g] = g + 1;
    __hip_atomic_fetch_add(count, 1u, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT);
    while (__hip_atomic_load(count, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT) < groups) {}
    u32 s = 0;
    for (u32 k = 0; k < groups; k++) s += partial[k];
    total = s;
  }
  syncthreads();
  out[gid_x()] = total;
}
