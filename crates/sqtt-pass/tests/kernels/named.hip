// Named and numeric markers: IDs, deduplication, exit+enter fusion, payload.
#include "device.h"
#include "sqtt/markers.hpp"

__global__ void named_kernel(float *data, int n) {
    int idx = block_x() * 64 + thread_x();
    if (idx >= n) return;

    sqtt_marker_enter("load_phase");
    float val = data[idx];
    sqtt_marker_exit("load_phase");
    sqtt_marker_enter("compute_phase");
    val = val * val + 1.0f;
    sqtt_marker_data("work_value", (unsigned)idx);
    sqtt_marker_exit("compute_phase");

    sqtt_marker_point("store_begin");
    data[idx] = val;
    sqtt_marker_enter("load_phase");
    data[idx + n] = val * 2.0f;
    sqtt_marker_exit("load_phase");

    sqtt_marker_enter(5);
    sqtt_marker_point(6);
    sqtt_marker_exit(5);
}
