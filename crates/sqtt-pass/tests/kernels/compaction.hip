// First-seen order differs from use counts: IDs are compacted by emission count.
#include "device.h"
#include "sqtt/markers.hpp"

__device__ __attribute__((noinline)) float helper(float x) {
    x = x * 1.5f + 2.0f; x = x * x - 3.0f; x = x * 0.5f + x; x = x / (x + 1.0f);
    x = x * 1.25f + 2.5f; x = x * x - 3.5f; x = x * 0.75f + x; x = x / (x + 2.0f);
    return x;
}

__global__ void compaction_kernel(float *p) {
    int t = thread_x();
    sqtt_marker_point("rare");
    float v = p[t];
    sqtt_marker_enter("hot");
    v = helper(v);
    sqtt_marker_exit("hot");
    p[t] = v;
    sqtt_marker_enter("hot");
    v = helper(v + 1.0f);
    sqtt_marker_exit("hot");
    p[t + 64] = v;
    sqtt_marker_enter("hot");
    p[t + 128] = v * v;
    sqtt_marker_exit("hot");
}
