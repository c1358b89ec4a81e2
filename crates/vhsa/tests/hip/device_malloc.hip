/* Device malloc and free: the device library's allocator asks HIP's host-call listener for more
 * memory while the kernel runs, so the kernel writes memory allocated after its dispatch began.
 * Every work-item allocates (small blocks and some larger than the allocator's slabs), fills its
 * block, and a second dispatch reads each block written by another work-item and frees it. */
#include "hip_test.h"

#define ITEMS 1024
#define BLOCK 256

__device__ size_t bytes_of(int i) { return (i % 97 == 0) ? 65536 + 8 * i : 16 + 4 * (i % 29); }

__global__ void fill(unsigned** blocks) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  size_t n = bytes_of(i) / sizeof(unsigned);
  unsigned* p = (unsigned*)malloc(n * sizeof(unsigned));
  blocks[i] = p;
  if (!p) return;
  for (size_t k = 0; k < n; k++) p[k] = 0x9e3779b9u * (unsigned)i + (unsigned)k;
}

__global__ void check_and_free(unsigned** blocks, int* bad) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int j = (i + BLOCK + 1) % ITEMS; /* written by a work-item of another work-group */
  unsigned* p = blocks[j];
  if (!p) {
    atomicAdd(bad, 1);
    return;
  }
  size_t n = bytes_of(j) / sizeof(unsigned);
  for (size_t k = 0; k < n; k++)
    if (p[k] != 0x9e3779b9u * (unsigned)j + (unsigned)k) {
      atomicAdd(bad, 1);
      break;
    }
  __syncthreads();
  free(blocks[i]);
}

int main() {
  unsigned** blocks = nullptr;
  int* bad = nullptr;
  CHECK_HIP(hipMalloc(&blocks, ITEMS * sizeof(unsigned*)));
  CHECK_HIP(hipMalloc(&bad, sizeof(int)));
  CHECK_HIP(hipMemset(bad, 0, sizeof(int)));
  for (int round = 0; round < 2; round++) {
    hipLaunchKernelGGL(fill, dim3(ITEMS / BLOCK), dim3(BLOCK), 0, 0, blocks);
    CHECK_HIP(hipGetLastError());
    CHECK_HIP(hipDeviceSynchronize());
    static unsigned* host[ITEMS];
    CHECK_HIP(hipMemcpy(host, blocks, sizeof(host), hipMemcpyDeviceToHost));
    for (int i = 0; i < ITEMS; i++) {
      CHECK(host[i] != nullptr, "round %d: malloc returned NULL for work-item %d", round, i);
      for (int k = 0; k < i; k++)
        CHECK(host[k] != host[i], "round %d: work-items %d and %d got the same block", round, k, i);
    }
    hipLaunchKernelGGL(check_and_free, dim3(ITEMS / BLOCK), dim3(BLOCK), 0, 0, blocks, bad);
    CHECK_HIP(hipGetLastError());
    CHECK_HIP(hipDeviceSynchronize());
    int h = -1;
    CHECK_HIP(hipMemcpy(&h, bad, sizeof(int), hipMemcpyDeviceToHost));
    CHECK(h == 0, "round %d: %d blocks did not hold what their work-item wrote", round, h);
  }
  CHECK_HIP(hipFree(blocks));
  CHECK_HIP(hipFree(bad));
  printf("PASS\n");
  return 0;
}
