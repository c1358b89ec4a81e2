// Test kernels for the executable tests and the end-to-end C program.
#include "kernels.h"

// Incremented once per dispatch of `increment`.
__device__ uint32_t counter = 7;
// Holds the address of `counter`: a dynamic relocation the loader applies.
__device__ uint32_t* counter_address = &counter;
// Zero-initialised storage (.bss).
__device__ uint64_t histogram[16];
// Read-only data with external linkage.
extern __device__ const uint32_t lookup[4];
__device__ const uint32_t lookup[4] = {11, 22, 33, 44};

// Adds 1 to data[i] for i < n; work-item 0 also counts the dispatch in `counter`.
KERNEL increment(uint32_t* data, uint32_t n) {
  __shared__ uint32_t tile[64];
  uint32_t i = global_idx_x();
  tile[thread_idx_x()] = i;
  sync_threads();
  if (i < n) data[i] += 1 + (tile[thread_idx_x()] - i);
  if (i == 0) atomic_add_u32(&counter, 1);
}

// Counts values into `histogram` using `lookup`; has no native implementation.
KERNEL scatter(const uint32_t* values, uint32_t n, uint64_t scale) {
  uint32_t i = global_idx_x();
  if (i < n) atomic_add_u64(&histogram[values[i] % 16], scale * lookup[i % 4]);
}
