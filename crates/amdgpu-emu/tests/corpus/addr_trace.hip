#include "kh.h"
// Built with the SQTT marker pass plugin and SQTT_TRACE_ADDRESSES=memory.
extern "C" __global__ void addr_traced(int *x, int n) {
  u32 i = gid_x();
  if (i < (u32)n) x[i] += 3;
}
