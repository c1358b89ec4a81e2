// A marker name chosen at run time: the plugin must reject it with a clear error.
#include "device.h"
#include "sqtt/markers.hpp"

__global__ void bad_name_kernel(float *p, int which) {
    const char *name = which ? "first" : "second";
    sqtt_marker_point(name);
    p[thread_x()] = 0.0f;
}
