#include "kh.h"
#include "sqtt/markers.hpp"
// Built with the SQTT marker pass plugin (-DSQTT_ENABLED=1 -fpass-plugin=...).
NOINLINE __device__ int twice(int v) { return v * 2 + (v & 1); }
extern "C" __global__ void marked(int *x, int n) {
  u32 i = gid_x();
  if (i >= (u32)n) return;
  sqtt_marker_enter("work");
  x[i] = twice(x[i]);
  sqtt_marker_data("work_value", (int)bid_x());
  sqtt_marker_exit("work");
}
