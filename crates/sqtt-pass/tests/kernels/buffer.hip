// Raw buffer loads and stores through a buffer resource.
#include "device.h"
#include "sqtt/markers.hpp"

__global__ void buffer_kernel(float *p, int n) {
    __amdgpu_buffer_rsrc_t r = __builtin_amdgcn_make_buffer_rsrc(p, (short)0, n * 4, 0x00027000);
    int t = thread_x();
    float v = __builtin_amdgcn_raw_buffer_load_b32(r, t * 4, 16, 0);
    __builtin_amdgcn_raw_buffer_store_b32(v * 2.0f, r, t * 4, 0, 0);
}
