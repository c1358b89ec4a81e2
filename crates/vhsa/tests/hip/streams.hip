/* Kernels (emulated), events and elapsed times, hipMallocAsync/hipFreeAsync, graph
 * capture and launch. */
#include "hip_test.h"
#include <time.h>

extern "C" __global__ void add_scalar(int* p, int v, size_t n) {
  size_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += v;
}

/* Spins for `ms` milliseconds of the device's 100 MHz real-time clock, then writes `ms`. */
extern "C" __global__ void busy_wait(int* flag, int ms) {
  if (threadIdx.x == 0) {
    uint64_t t0 = __builtin_amdgcn_s_memrealtime();
    while (__builtin_amdgcn_s_memrealtime() - t0 < (uint64_t)ms * 100000u) {
    }
    *flag = ms;
  }
}

static void check_values(const int* h, size_t n, int base, const char* what) {
  for (size_t i = 0; i < n; i++) CHECK(h[i] == (int)i + base, "%s: element %zu is %d, expected %d", what, i, h[i], (int)i + base);
}

int main() {

  const size_t n = 10000;
  int* h = (int*)malloc(n * sizeof(int));
  for (size_t i = 0; i < n; i++) h[i] = (int)i;
  int* d;
  CHECK_HIP(hipMalloc(&d, n * sizeof(int)));
  CHECK_HIP(hipMemcpy(d, h, n * sizeof(int), hipMemcpyHostToDevice));

  /* A kernel launch on the null stream. */
  hipLaunchKernelGGL(add_scalar, dim3((n + 255) / 256), dim3(256), 0, 0, d, 5, n);
  CHECK_HIP(hipGetLastError());
  CHECK_HIP(hipDeviceSynchronize());
  CHECK_HIP(hipMemcpy(h, d, n * sizeof(int), hipMemcpyDeviceToHost));
  check_values(h, n, 5, "add_scalar on the null stream");

  /* Events around a kernel that takes 30 ms: the elapsed time covers it. */
  hipStream_t s;
  CHECK_HIP(hipStreamCreate(&s));
  hipEvent_t start, stop;
  CHECK_HIP(hipEventCreate(&start));
  CHECK_HIP(hipEventCreate(&stop));
  int* flag;
  CHECK_HIP(hipMalloc(&flag, sizeof(int)));
  CHECK_HIP(hipEventRecord(start, s));
  hipLaunchKernelGGL(busy_wait, dim3(1), dim3(64), 0, s, flag, 30);
  CHECK_HIP(hipEventRecord(stop, s));
  CHECK_HIP(hipEventSynchronize(stop));
  CHECK(hipEventQuery(stop) == hipSuccess);
  float ms = -1;
  CHECK_HIP(hipEventElapsedTime(&ms, start, stop));
  CHECK(ms >= 29.0f, "elapsed %f ms around a 30 ms kernel", ms);
  int flag_h = 0;
  CHECK_HIP(hipMemcpy(&flag_h, flag, sizeof flag_h, hipMemcpyDeviceToHost));
  CHECK(flag_h == 30, "busy_wait flag %d", flag_h);
  /* Two events with nothing between them: a small, non-negative time. */
  CHECK_HIP(hipEventRecord(start, s));
  CHECK_HIP(hipEventRecord(stop, s));
  CHECK_HIP(hipEventSynchronize(stop));
  CHECK_HIP(hipEventElapsedTime(&ms, start, stop));
  CHECK(ms >= 0.0f, "elapsed %f ms between two events", ms);

  /* Stream-ordered allocation. */
  int* a = NULL;
  CHECK_HIP(hipMallocAsync((void**)&a, n * sizeof(int), s));
  CHECK(a != NULL);
  CHECK_HIP(hipMemcpyAsync(a, d, n * sizeof(int), hipMemcpyDeviceToDevice, s));
  hipLaunchKernelGGL(add_scalar, dim3((n + 255) / 256), dim3(256), 0, s, a, 100, n);
  CHECK_HIP(hipMemcpyAsync(h, a, n * sizeof(int), hipMemcpyDeviceToHost, s));
  CHECK_HIP(hipFreeAsync(a, s));
  CHECK_HIP(hipStreamSynchronize(s));
  check_values(h, n, 105, "hipMallocAsync buffer");
  /* HIP 5.2 defect: destroying a stream after hipFreeAsync loops forever unless the pool is
   * trimmed first (docs/limitations.md). */
  hipMemPool_t pool;
  CHECK_HIP(hipDeviceGetDefaultMemPool(&pool, 0));
  CHECK_HIP(hipMemPoolTrimTo(pool, 0));

  /* Graph capture: two kernels and a copy back, launched twice. */
  hipStream_t cs;
  CHECK_HIP(hipStreamCreate(&cs));
  hipGraph_t graph;
  hipGraphExec_t exec;
  CHECK_HIP(hipStreamBeginCapture(cs, hipStreamCaptureModeGlobal));
  hipLaunchKernelGGL(add_scalar, dim3((n + 255) / 256), dim3(256), 0, cs, d, 1, n);
  hipLaunchKernelGGL(add_scalar, dim3((n + 255) / 256), dim3(256), 0, cs, d, 2, n);
  CHECK_HIP(hipMemcpyAsync(h, d, n * sizeof(int), hipMemcpyDeviceToHost, cs));
  CHECK_HIP(hipStreamEndCapture(cs, &graph));
  size_t nodes = 0;
  CHECK_HIP(hipGraphGetNodes(graph, NULL, &nodes));
  CHECK(nodes == 3, "captured graph has %zu nodes", nodes);
  CHECK_HIP(hipGraphInstantiate(&exec, graph, NULL, NULL, 0));
  uint64_t before = vhsa_dispatches();
  CHECK_HIP(hipGraphLaunch(exec, cs));
  CHECK_HIP(hipStreamSynchronize(cs));
  check_values(h, n, 8, "graph launch 1");
  CHECK_HIP(hipGraphLaunch(exec, cs));
  CHECK_HIP(hipStreamSynchronize(cs));
  check_values(h, n, 11, "graph launch 2");
  CHECK(vhsa_dispatches() - before >= 4, "graph kernels ran %llu times", (unsigned long long)(vhsa_dispatches() - before));
  CHECK_HIP(hipGraphExecDestroy(exec));
  CHECK_HIP(hipGraphDestroy(graph));

  CHECK_HIP(hipStreamDestroy(cs));
  CHECK_HIP(hipStreamDestroy(s));
  CHECK_HIP(hipEventDestroy(start));
  CHECK_HIP(hipEventDestroy(stop));
  CHECK_HIP(hipFree(flag));
  CHECK_HIP(hipFree(d));
  free(h);
  printf("dispatches: %llu\n", (unsigned long long)vhsa_dispatches());
  printf("PASS\n");
  return 0;
}
