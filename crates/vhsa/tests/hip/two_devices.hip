/* Two devices (VHSA_AGENTS=gfx90a,gfx90a): hipSetDevice, allocations on each, peer access and
 * peer copies, a kernel on each device. */
#include "hip_test.h"

extern "C" __global__ void add_scalar(int* p, int v, size_t n) {
  size_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += v;
}

int main() {
  const uint64_t dispatches_before = gpu_dispatches();
  int count = 0;
  CHECK_HIP(hipGetDeviceCount(&count));
  CHECK(count == 2, "%d devices; run with VHSA_AGENTS=gfx90a,gfx90a", count);

  const size_t n = 1 << 18;
  int* h = (int*)malloc(n * sizeof(int));
  int* dev[2];
  for (int d = 0; d < 2; d++) {
    CHECK_HIP(hipSetDevice(d));
    int cur = -1;
    CHECK_HIP(hipGetDevice(&cur));
    CHECK(cur == d, "hipGetDevice %d after hipSetDevice(%d)", cur, d);
    CHECK_HIP(hipMalloc(&dev[d], n * sizeof(int)));
    hipPointerAttribute_t attr;
    CHECK_HIP(hipPointerGetAttributes(&attr, dev[d]));
    CHECK(attr.device == d, "allocation of device %d reports device %d", d, attr.device);
  }
  CHECK(dev[0] != dev[1]);

  int can = 0;
  CHECK_HIP(hipDeviceCanAccessPeer(&can, 0, 1));
  CHECK(can == 1, "device 0 cannot access device 1");
  CHECK_HIP(hipSetDevice(0));
  CHECK_HIP(hipDeviceEnablePeerAccess(1, 0));
  CHECK_HIP(hipSetDevice(1));
  CHECK_HIP(hipDeviceEnablePeerAccess(0, 0));

  /* Device 0: fill, add 1; copy to device 1 (peer); device 1: add 10; copy back; check. */
  for (size_t i = 0; i < n; i++) h[i] = (int)i;
  CHECK_HIP(hipSetDevice(0));
  CHECK_HIP(hipMemcpy(dev[0], h, n * sizeof(int), hipMemcpyHostToDevice));
  hipLaunchKernelGGL(add_scalar, dim3(n / 256), dim3(256), 0, 0, dev[0], 1, n);
  CHECK_HIP(hipDeviceSynchronize());
  CHECK_HIP(hipMemcpyPeer(dev[1], 1, dev[0], 0, n * sizeof(int)));
  CHECK_HIP(hipSetDevice(1));
  hipLaunchKernelGGL(add_scalar, dim3(n / 256), dim3(256), 0, 0, dev[1], 10, n);
  CHECK_HIP(hipDeviceSynchronize());
  memset(h, 0, n * sizeof(int));
  CHECK_HIP(hipMemcpy(h, dev[1], n * sizeof(int), hipMemcpyDeviceToHost));
  for (size_t i = 0; i < n; i++) CHECK(h[i] == (int)i + 11, "element %zu is %d", i, h[i]);

  /* Asynchronous peer copy back to device 0, on a stream of device 1. */
  hipStream_t s;
  CHECK_HIP(hipStreamCreate(&s));
  CHECK_HIP(hipMemcpyPeerAsync(dev[0], 0, dev[1], 1, n * sizeof(int), s));
  CHECK_HIP(hipStreamSynchronize(s));
  CHECK_HIP(hipSetDevice(0));
  memset(h, 0, n * sizeof(int));
  CHECK_HIP(hipMemcpy(h, dev[0], n * sizeof(int), hipMemcpyDeviceToHost));
  for (size_t i = 0; i < n; i++) CHECK(h[i] == (int)i + 11, "after the peer copy back: element %zu is %d", i, h[i]);
  /* A plain device-to-device hipMemcpy between the two devices' memory. */
  CHECK_HIP(hipMemcpy(dev[1], dev[0], 4096, hipMemcpyDeviceToDevice));

  CHECK_HIP(hipStreamDestroy(s));
  CHECK_HIP(hipFree(dev[0]));
  CHECK_HIP(hipFree(dev[1]));
  free(h);
  CHECK(gpu_dispatches() - dispatches_before >= 2, "the kernels on both devices were dispatched");
  printf("PASS\n");
  return 0;
}
