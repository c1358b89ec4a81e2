// Seventy distinct point markers: IDs above 63 do not fit s_ttracedata_imm.
#include "device.h"
#include "sqtt/markers.hpp"

#define P(n) sqtt_marker_point("point_" #n);
#define P10(t) P(t##0) P(t##1) P(t##2) P(t##3) P(t##4) P(t##5) P(t##6) P(t##7) P(t##8) P(t##9)

__global__ void many_kernel(float *data) {
    P10(1) P10(2) P10(3) P10(4) P10(5) P10(6) P10(7)
    data[thread_x()] = 1.0f;
}
