/* A multi-device cooperative launch: one grid on each of two devices. Every work-item updates
 * its device's array, passes a multi-grid barrier (cooperative_groups::this_multi_grid().sync())
 * and then reads what the other device's grid wrote before the barrier. */
#include "hip_test.h"
#include <hip/hip_cooperative_groups.h>

namespace cg = cooperative_groups;

__global__ void exchange(int* mine, const int* theirs, int* out, int n) {
  cg::multi_grid_group all = cg::this_multi_grid();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) mine[i] += 1 + (int)all.grid_rank();
  all.sync();
  if (i < n) out[i] = 10 * mine[i] + theirs[i];
}

int main() {
  int count = 0, multi = 0;
  CHECK_HIP(hipGetDeviceCount(&count));
  CHECK(count >= 2, "two devices needed (%d)", count);
  CHECK_HIP(hipDeviceGetAttribute(&multi, hipDeviceAttributeCooperativeMultiDeviceLaunch, 0));
  CHECK(multi == 1, "multi-device cooperative launch is not supported (%d)", multi);
  const int n = 512;
  int *data[2], *out[2];
  hipStream_t stream[2];
  hipLaunchParams launch[2];
  void* args[2][4];
  int size = n;
  for (int g = 0; g < 2; g++) {
    CHECK_HIP(hipSetDevice(g));
    // Both grids read each other's array: host-visible memory every device reaches.
    CHECK_HIP(hipHostMalloc(&data[g], n * sizeof(int), hipHostMallocCoherent));
    memset(data[g], 0, n * sizeof(int));
    CHECK_HIP(hipMalloc(&out[g], n * sizeof(int)));
    CHECK_HIP(hipStreamCreate(&stream[g]));
  }
  for (int g = 0; g < 2; g++) {
    args[g][0] = &data[g];
    args[g][1] = &data[1 - g];
    args[g][2] = &out[g];
    args[g][3] = &size;
    launch[g].func = (void*)exchange;
    launch[g].gridDim = dim3(n / 128);
    launch[g].blockDim = dim3(128);
    launch[g].args = args[g];
    launch[g].sharedMem = 0;
    launch[g].stream = stream[g];
  }
  CHECK_HIP(hipLaunchCooperativeKernelMultiDevice(launch, 2, 0));
  for (int g = 0; g < 2; g++) {
    CHECK_HIP(hipSetDevice(g));
    CHECK_HIP(hipDeviceSynchronize());
  }
  // Grid g added 1 + g, then wrote ten times that plus the other grid's 1 + (1 - g).
  int* host = (int*)malloc(n * sizeof(int));
  for (int g = 0; g < 2; g++) {
    CHECK_HIP(hipMemcpy(host, out[g], n * sizeof(int), hipMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
      CHECK(host[i] == 10 * (1 + g) + (2 - g), "device %d item %d: %d", g, i, host[i]);
  }
  free(host);
  printf("PASS\n");
  return 0;
}
