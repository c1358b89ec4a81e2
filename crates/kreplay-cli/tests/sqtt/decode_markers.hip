// Device code for `tests/sqtt_decode.rs`: named user scopes, a data point and a point around an
// out-of-line device function that function instrumentation wraps in F: markers.
#include "kernels.h"
#include "sqtt/markers.hpp"

__device__ __attribute__((noinline)) float refine(float x, int n) {
  float s = x;
  for (int k = 0; k < n; ++k) s = s * 1.5f + 0.25f;
  return s;
}

KERNEL phases(float* out, const float* in, int n) {
  uint32_t i = global_idx_x();
  sqtt_marker_enter("load");
  float v = i < (uint32_t)n ? in[i] : 0.0f;
  sqtt_marker_exit("load");
  sqtt_marker_enter("compute");
  v = refine(v, n);
  sqtt_marker_data("lane_value", i);
  sqtt_marker_exit("compute");
  sqtt_marker_point("store");
  if (i < (uint32_t)n) out[i] = v;
}
