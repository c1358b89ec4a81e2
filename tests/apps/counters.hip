// Device code for the counter tests, run on the virtual runtimes' emulator.
#include "kernels.h"

// x[i] = x[i] * 3 + 1 for i < n: straight-line scalar, vector and memory work.
KERNEL scale(uint32_t* x, uint32_t n) {
  uint32_t i = global_idx_x();
  if (i < n) x[i] = x[i] * 3u + 1u;
}

// Background work submitted on another queue while `scale` is replayed.
KERNEL busy(uint32_t* x, uint32_t n) {
  uint32_t i = global_idx_x();
  if (i < n) x[i] += 1u;
}
