// Markers without payload, for shader-clock packing.
#include "device.h"
#include "sqtt/markers.hpp"

__global__ void clock_kernel(float *p) {
    int t = thread_x();
    sqtt_marker_enter("phase");
    float v = p[t];
    sqtt_marker_exit("phase");
    sqtt_marker_enter(5u);
    sqtt_marker_point(6ul);
    sqtt_marker_exit(5u);
    p[t] = v + 1.0f;
}
