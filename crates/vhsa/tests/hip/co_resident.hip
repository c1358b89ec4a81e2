/* Work-groups that wait on one another in an ordinary launch, as programs written for a GPU
 * whose small grids are co-resident do: work-group 0 waits for a flag the last work-group sets,
 * and a grid barrier made of an atomic counter. Both finish, and every work-group sees what the
 * others wrote before the barrier. */
#include "hip_test.h"

__global__ void wait_for_last(int* flag, int* ran) {
  if (blockIdx.x == 0 && threadIdx.x == 0)
    while (__hip_atomic_load(flag, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT) == 0) {
    }
  if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0)
    __hip_atomic_store(flag, 1, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT);
  if (threadIdx.x == 0) ran[blockIdx.x] = 1;
}

__global__ void counter_barrier(unsigned* count, int* partial, int* out) {
  __shared__ int total;
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = blockIdx.x + 1;
    __hip_atomic_fetch_add(count, 1u, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT);
    while (__hip_atomic_load(count, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT) < gridDim.x) {
    }
    int s = 0;
    for (unsigned g = 0; g < gridDim.x; g++) s += partial[g];
    total = s;
  }
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = total;
}

int main() {
  const int blocks = 200, threads = 128, n = blocks * threads;
  int *flag, *ran, *partial, *out;
  unsigned* count;
  CHECK_HIP(hipMalloc(&flag, sizeof(int)));
  CHECK_HIP(hipMalloc(&ran, blocks * sizeof(int)));
  CHECK_HIP(hipMalloc(&count, sizeof(unsigned)));
  CHECK_HIP(hipMalloc(&partial, blocks * sizeof(int)));
  CHECK_HIP(hipMalloc(&out, n * sizeof(int)));
  CHECK_HIP(hipMemset(flag, 0, sizeof(int)));
  CHECK_HIP(hipMemset(ran, 0, blocks * sizeof(int)));
  CHECK_HIP(hipMemset(count, 0, sizeof(unsigned)));
  hipLaunchKernelGGL(wait_for_last, dim3(blocks), dim3(threads), 0, 0, flag, ran);
  hipLaunchKernelGGL(counter_barrier, dim3(blocks), dim3(threads), 0, 0, count, partial, out);
  CHECK_HIP(hipDeviceSynchronize());
  int hran[blocks];
  CHECK_HIP(hipMemcpy(hran, ran, sizeof(hran), hipMemcpyDeviceToHost));
  for (int g = 0; g < blocks; g++) CHECK(hran[g] == 1, "work-group %d did not run", g);
  int* hout = (int*)malloc(n * sizeof(int));
  CHECK_HIP(hipMemcpy(hout, out, n * sizeof(int), hipMemcpyDeviceToHost));
  const int want = blocks * (blocks + 1) / 2;
  for (int i = 0; i < n; i++) CHECK(hout[i] == want, "out[%d] = %d, want %d", i, hout[i], want);
  printf("PASS\n");
  return 0;
}
