// A global and an LDS atomic: traced as addr_trace_atomic / addr_trace_lds_atomic, never grouped.
#include "device.h"
#include "sqtt/markers.hpp"

__global__ void atomic_kernel(int *counters) {
    __shared__ int local[64];
    int t = thread_x();
    local[t] = 0;
    sync_threads();
    __atomic_fetch_add(&local[t & 7], 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&counters[t & 15], 1, __ATOMIC_RELAXED);
}
