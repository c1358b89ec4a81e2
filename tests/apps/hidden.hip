// Device code for the internal-linkage test: variables that are not executable symbols.
// `hidden_ptrs` (a symbol) tells the application where they were loaded.
#include "kernels.h"

static __device__ int hidden;
namespace {
__device__ int anonymous;
}
__device__ int* hidden_ptrs[2] = {&hidden, &anonymous};

KERNEL bump_hidden(int* unused) {
  (void)unused;
  hidden += 1;
  anonymous += 1;
}
