/* Kernels (emulated), events and elapsed times, hipMallocAsync/hipFreeAsync, graph
 * capture and launch. */
#include "hip_test.h"
#include <time.h>

extern "C" __global__ void add_scalar(int* p, int v, size_t n) {
  size_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += v;
}

/* Spins for `ms` milliseconds of the device's 100 MHz real-time clock, then writes `ms`. */
/* Spins for `ticks` of the device's real-time clock and stores how many ticks it really spun. */
extern "C" __global__ void busy_wait(uint64_t* spun, uint64_t ticks) {
  if (threadIdx.x == 0) {
    uint64_t t0 = __builtin_amdgcn_s_memrealtime(), t = t0;
    while (t - t0 < ticks) t = __builtin_amdgcn_s_memrealtime();
    *spun = t - t0;
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
  uint64_t* spun;
  CHECK_HIP(hipMalloc(&spun, sizeof *spun));
  CHECK_HIP(hipEventRecord(start, s));
  hipLaunchKernelGGL(busy_wait, dim3(1), dim3(64), 0, s, spun, (uint64_t)3000000);
  CHECK_HIP(hipEventRecord(stop, s));
  CHECK_HIP(hipEventSynchronize(stop));
  CHECK(hipEventQuery(stop) == hipSuccess);
  float ms = -1;
  CHECK_HIP(hipEventElapsedTime(&ms, start, stop));
  uint64_t spun_h = 0;
  CHECK_HIP(hipMemcpy(&spun_h, spun, sizeof spun_h, hipMemcpyDeviceToHost));
  CHECK(spun_h >= 3000000, "busy_wait spun %llu ticks", (unsigned long long)spun_h);
  /* The events enclose the kernel: their interval is at least what the kernel itself measured
     on the real-time clock (100 MHz on the emulator, docs/emulator.md). A relation between two
     clocks, not a duration the machine has to meet. */
  double kernel_ms = (double)spun_h / 100000.0;
  CHECK(ms + 0.01 >= kernel_ms, "events enclose %f ms, the kernel measured %f ms itself", ms, kernel_ms);
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
  uint64_t before = gpu_dispatches();
  CHECK_HIP(hipGraphLaunch(exec, cs));
  CHECK_HIP(hipStreamSynchronize(cs));
  check_values(h, n, 8, "graph launch 1");
  CHECK_HIP(hipGraphLaunch(exec, cs));
  CHECK_HIP(hipStreamSynchronize(cs));
  check_values(h, n, 11, "graph launch 2");
  CHECK(gpu_dispatches() - before >= 4, "graph kernels ran %llu times", (unsigned long long)(gpu_dispatches() - before));
  CHECK_HIP(hipGraphExecDestroy(exec));
  CHECK_HIP(hipGraphDestroy(graph));

  CHECK_HIP(hipStreamDestroy(cs));
  CHECK_HIP(hipStreamDestroy(s));
  CHECK_HIP(hipEventDestroy(start));
  CHECK_HIP(hipEventDestroy(stop));
  CHECK_HIP(hipFree(spun));
  CHECK_HIP(hipFree(d));
  free(h);
  printf("dispatches: %llu\n", (unsigned long long)gpu_dispatches());
  printf("PASS\n");
  return 0;
}
