// Device code for the vhsa shader-data test: built with the SQTT marker pass plugin
// (named markers; SQTT_TRACE_ADDRESSES=memory traces the load and the store of x[i]).
#include "kernels.h"
#include "sqtt/markers.hpp"

KERNEL traced(int* x, int n) {
  uint32_t i = global_idx_x();
  if (i >= (uint32_t)n) return;
  sqtt_marker_enter("work");
  x[i] += 3;
  sqtt_marker_exit("work");
}
