/* Device printf: formatted output from several work-items and work-groups goes through HIP's
 * hostcall buffer, whose doorbell is an HSA signal the kernel updates directly in memory. */
#include "hip_test.h"

__global__ void say(int base, float scale, const char* tag) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  printf("item %d of %s: %d %.2f\n", i, tag, base + i, scale * i);
}

int main() {
  const char* tag_host = "grid";
  char* tag = nullptr;
  CHECK_HIP(hipMalloc(&tag, 8));
  CHECK_HIP(hipMemcpy(tag, tag_host, 5, hipMemcpyHostToDevice));
  hipLaunchKernelGGL(say, dim3(2), dim3(3), 0, 0, 100, 0.5f, tag);
  CHECK_HIP(hipGetLastError());
  CHECK_HIP(hipDeviceSynchronize());
  fflush(stdout);
  CHECK_HIP(hipFree(tag));
  printf("PASS\n");
  return 0;
}
