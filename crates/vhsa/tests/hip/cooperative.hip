/* Cooperative launches: the device advertises them, and a kernel whose work-groups meet at a
 * grid-wide barrier (cooperative_groups::this_grid().sync()) sees every work-group's writes
 * from before the barrier. */
#include "hip_test.h"
#include <hip/hip_cooperative_groups.h>

namespace cg = cooperative_groups;

__global__ void two_phase(const int* x, int* partial, int* out, int n) {
  cg::grid_group grid = cg::this_grid();
  __shared__ int sum;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x == 0) sum = 0;
  __syncthreads();
  if (i < n) atomicAdd(&sum, x[i]);
  __syncthreads();
  if (threadIdx.x == 0) partial[blockIdx.x] = sum;
  grid.sync();
  int total = 0;
  for (unsigned g = 0; g < gridDim.x; g++) total += partial[g];
  if (i < n) out[i] = x[i] * total;
}

int main() {
  int coop = 0;
  CHECK_HIP(hipDeviceGetAttribute(&coop, hipDeviceAttributeCooperativeLaunch, 0));
  CHECK(coop == 1, "cooperative launch is not supported (%d)", coop);
  const int blocks = 16, threads = 128, n = blocks * threads;
  int *x, *partial, *out;
  CHECK_HIP(hipMalloc(&x, n * sizeof(int)));
  CHECK_HIP(hipMalloc(&partial, blocks * sizeof(int)));
  CHECK_HIP(hipMalloc(&out, n * sizeof(int)));
  int* hx = (int*)malloc(n * sizeof(int));
  long long total = 0;
  for (int i = 0; i < n; i++) {
    hx[i] = i % 7 + 1;
    total += hx[i];
  }
  CHECK_HIP(hipMemcpy(x, hx, n * sizeof(int), hipMemcpyHostToDevice));
  int nn = n;
  void* args[] = {&x, &partial, &out, &nn};
  CHECK_HIP(hipLaunchCooperativeKernel((void*)two_phase, dim3(blocks), dim3(threads), args, 0, 0));
  CHECK_HIP(hipDeviceSynchronize());
  int* hout = (int*)malloc(n * sizeof(int));
  CHECK_HIP(hipMemcpy(hout, out, n * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) CHECK(hout[i] == hx[i] * total, "out[%d] = %d, want %lld", i, hout[i], hx[i] * total);
  printf("PASS\n");
  return 0;
}
