// Device code for the module-variable test: a __device__ variable the kernel increments.
#include "kernels.h"

__device__ int counter;

KERNEL bump(int* unused) {
  (void)unused;
  counter += 1;
}
