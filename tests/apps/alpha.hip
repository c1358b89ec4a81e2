// Device code for the executable-lifetime tests; gamma.hip has the same layout.
#include "kernels.h"

__device__ int alpha_var = 0x0a0a0a0a;

KERNEL alpha(int* out) { out[0] = ++alpha_var; }
