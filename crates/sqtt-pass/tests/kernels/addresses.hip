// One global load, one LDS store, one LDS load and one global store.
#include "device.h"
#include "sqtt/markers.hpp"

__global__ void address_kernel(float *p) {
    __shared__ float sh[64];
    int t = thread_x();
    float v = p[t * 2];
    sh[t] = v;
    sync_threads();
    p[t] = sh[63 - t] + 1.0f;
}
