// Device functions of different size and cost, called from one kernel.
#include "device.h"
#include "sqtt/markers.hpp"

// Many arithmetic instructions, no memory: large by count, cheap by cost.
__device__ __attribute__((noinline)) float alu_fn(float x) {
    x = x * 1.5f + 2.0f; x = x * x - 3.0f; x = x * 0.5f + x; x = x / (x + 1.0f);
    x = x * 1.25f + 2.5f; x = x * x - 3.5f; x = x * 0.75f + x; x = x / (x + 2.0f);
    x = x * 1.5f + 2.0f; x = x * x - 3.0f; x = x * 0.5f + x; x = x / (x + 3.0f);
    return x;
}

// Four global loads: fewer instructions, but expensive by cost.
__device__ __attribute__((noinline)) float mem_fn(const float *p, int i) {
    return p[i] + p[i + 64] + p[i + 128] + p[i + 192];
}

// Below every threshold used by the tests.
__device__ __attribute__((noinline)) float tiny_fn(float x) { return x + 1.0f; }

__global__ void funcs_kernel(float *p) {
    int t = thread_x();
    p[t] = tiny_fn(alu_fn(p[t]) + mem_fn(p, t));
}
