// Global loads and stores in runs, plus LDS and scratch traffic that memory grouping ignores.
#include "device.h"
#include "sqtt/markers.hpp"

__global__ void memory_kernel(const float *__restrict__ in, float *__restrict__ out) {
    __shared__ float sh[64];
    int t = thread_x();
    float a = in[t];
    float b = in[t + 64];
    float c = in[t + 128];
    float d = in[t + 192];
    sh[t] = a + b;
    sync_threads();
    float s = sh[63 - t];
    out[t] = s + c;
    out[t + 64] = d;
    out[t + 128] = a * d;
}
