/* A HIP program that exits while other threads still launch kernels: each thread launches on
 * its own stream, alternately into device memory and into hipHostMalloc memory, and waits for
 * its stream; the main thread lets them run for <usec> microseconds, then calls exit(0), whose
 * HIP teardown shuts the runtime down under them.
 *
 *   exit_race <threads> <usec>
 *
 * Prints "APP exiting after <n> launches" just before it exits. */
#include <hip/hip_runtime.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <unistd.h>

#define N 4096

__global__ void bump(int* x) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) x[i] += 1;
}

static std::atomic<int> launches{0};

static void launch_forever(int index) {
  hipStream_t stream;
  int* device = nullptr;
  int* host = nullptr;
  if (hipStreamCreate(&stream) != hipSuccess || hipMalloc(&device, N * sizeof(int)) != hipSuccess ||
      hipHostMalloc(&host, N * sizeof(int)) != hipSuccess) {
    std::fprintf(stderr, "APP FAIL: thread %d could not set up\n", index);
    std::exit(1);
  }
  for (int round = 0;; round++) {
    hipLaunchKernelGGL(bump, dim3(N / 256), dim3(256), 0, stream, round % 2 ? device : host);
    hipStreamSynchronize(stream);
    launches++;
  }
}

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 4;
  int usec = argc > 2 ? std::atoi(argv[2]) : 1000;
  for (int t = 0; t < threads; t++) std::thread(launch_forever, t).detach();
  while (launches.load() < threads) usleep(100);
  usleep(usec);
  std::printf("APP exiting after %d launches\n", launches.load());
  std::fflush(stdout);
  std::exit(0);
}
