// A code object with every kind of symbol a loader reports: kernels, writable, read-only and
// zero-initialised variables, and a pointer the loader relocates.
#include "kernels.h"

// Written by `count`; starts at 7.
__device__ uint32_t counter = 7;
// The address of `counter`: one dynamic relocation.
__device__ uint32_t* counter_address = &counter;
// Zero-initialised storage (.bss).
__device__ uint64_t histogram[16];
// Read-only data with external linkage.
extern __device__ const uint32_t lookup[4];
__device__ const uint32_t lookup[4] = {11, 22, 33, 44};

// Adds 1 to data[i] for i < n through 256 bytes of LDS; work-item 0 counts the dispatch.
KERNEL count(uint32_t* data, uint32_t n) {
  __shared__ uint32_t tile[64];
  uint32_t i = global_idx_x();
  tile[thread_idx_x()] = i;
  sync_threads();
  if (i < n) data[i] += 1 + (tile[thread_idx_x()] - i);
  if (i == 0) atomic_add_u32(&counter, 1);
}

// Counts values into `histogram`, weighted by `lookup`.
KERNEL scatter(const uint32_t* values, uint32_t n, uint64_t scale) {
  uint32_t i = global_idx_x();
  if (i < n) atomic_add_u64(&histogram[values[i] % 16], scale * lookup[i % 4]);
}
