// Barriers: __syncthreads-style s_barrier everywhere; on GFX12 also an explicit
// signal+wait pair and a standalone signal.
#include "device.h"
#include "sqtt/markers.hpp"

__global__ void barrier_kernel(float *p) {
    __shared__ float sh[64];
    int t = thread_x();
    sh[t] = p[t];
    sync_threads();
    float v = sh[63 - t];
#if defined(__gfx1200__) || defined(__gfx1201__)
    __builtin_amdgcn_s_barrier_signal(-1);
    __builtin_amdgcn_s_barrier_wait(-1);
    v += sh[(t + 1) & 63];
    __builtin_amdgcn_s_barrier_signal(-1);
#endif
    p[t] = v;
}
