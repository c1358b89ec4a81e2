#include "kh.h"
// A grid-wide barrier as cooperative launches build it (one work-item of each work-group
// meets the others at the global wave-sync barrier, between two work-group barriers): each
// work-group writes its partial sum, and after the barrier every work-group reads all of them.

static __device__ void grid_sync() {
  __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "agent");
  syncthreads();
  if (tid_x() == 0) {
    u32 nwm1 = __builtin_amdgcn_read_exec() ? (grid_x() / bdim_x()) - 1 : 0;
    __builtin_amdgcn_ds_gws_barrier(nwm1, 0);
  }
  syncthreads();
  __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "agent");
}

extern "C" __global__ void gws_init(u32 nwm1) { __builtin_amdgcn_ds_gws_init(nwm1, 0); }

// partial[g] = sum of x over work-group g; then out[i] = x[i] * (sum of every partial), twice
// (the barrier is met again in a loop).
extern "C" __global__ void grid_scale(const u32 *x, u32 *partial, u32 *out) {
  __shared__ u32 sum;
  u32 i = gid_x();
  u32 groups = grid_x() / bdim_x();
  for (int pass = 0; pass < 2; pass++) {
    if (tid_x() == 0) sum = 0;
    syncthreads();
    LDS_ATOMIC_ADD(&sum, x[i] + pass);
    syncthreads();
    if (tid_x() == 0) partial[pass * groups + bid_x()] = sum;
    grid_sync();
    u32 total = 0;
    for (u32 g = 0; g < groups; g++) total += partial[pass * groups + g];
    out[pass * grid_x() + i] = x[i] * total;
    grid_sync();
  }
}
