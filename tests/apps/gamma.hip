// Device code for the executable-lifetime tests; alpha.hip has the same layout.
#include "kernels.h"

__device__ int gamma_var = 0x5a5a5a5a;

KERNEL gamma(int* out) { out[0] = ++gamma_var; }
