// In-place kernels on host memory from HIP: each mode transforms a buffer in place once,
// x[i] = 3 * x[i] + 1, and checks the result itself. Prints "PASS" on success.
//
//   host_memory_hip hostmalloc   hipHostMalloc (default flags), through hipHostGetDevicePointer
//   host_memory_hip coherent     hipHostMalloc (mapped | coherent)
//   host_memory_hip noncoherent  hipHostMalloc (mapped | non-coherent)
//   host_memory_hip register     malloc + hipHostRegister (mapped), through hipHostGetDevicePointer;
//                                unregistered after the check
//   host_memory_hip struct       the output pointer inside a struct passed by value
//   host_memory_hip finedevice   hipExtMallocWithFlags(hipDeviceMallocFinegrained); prints
//                                "NO FINE-GRAINED DEVICE MEMORY" when the device has none
#include <hip/hip_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1024

#define CHECK_HIP(expr)                                                                          \
  do {                                                                                           \
    hipError_t e_ = (expr);                                                                      \
    if (e_ != hipSuccess) {                                                                      \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr, hipGetErrorString(e_)); \
      exit(1);                                                                                   \
    }                                                                                            \
  } while (0)

struct Output {
  int n;
  unsigned* out;
  unsigned long long tag;
};

__global__ void in_place(unsigned* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 3 * x[i] + 1;
}

__global__ void through_struct(Output o) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < o.n) o.out[i] = 3 * o.out[i] + 1;
}

static int check(const unsigned* x) {
  for (unsigned i = 0; i < N; i++) {
    if (x[i] != 3 * i + 1) {
      fprintf(stderr, "x[%u] = %u, expected %u\n", i, x[i], 3 * i + 1);
      return 1;
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: host_memory_hip <mode>\n");
    return 2;
  }
  const char* mode = argv[1];
  unsigned* host = NULL;
  unsigned* dev = NULL;
  if (strcmp(mode, "register") == 0) {
    host = (unsigned*)aligned_alloc(4096, N * 4);
    CHECK_HIP(hipHostRegister(host, N * 4, hipHostRegisterMapped));
  } else if (strcmp(mode, "finedevice") == 0) {
    if (hipExtMallocWithFlags((void**)&dev, N * 4, hipDeviceMallocFinegrained) != hipSuccess) {
      printf("NO FINE-GRAINED DEVICE MEMORY\n");
      return 0;
    }
    host = dev;
  } else {
    unsigned flags = hipHostMallocDefault;
    if (strcmp(mode, "coherent") == 0) flags = hipHostMallocMapped | hipHostMallocCoherent;
    if (strcmp(mode, "noncoherent") == 0) flags = hipHostMallocMapped | hipHostMallocNonCoherent;
    CHECK_HIP(hipHostMalloc((void**)&host, N * 4, flags));
  }
  for (unsigned i = 0; i < N; i++) host[i] = i;
  if (!dev) CHECK_HIP(hipHostGetDevicePointer((void**)&dev, host, 0));
  if (strcmp(mode, "struct") == 0) {
    Output o = {N, dev, 42};
    hipLaunchKernelGGL(through_struct, dim3(N / 256), dim3(256), 0, 0, o);
  } else {
    hipLaunchKernelGGL(in_place, dim3(N / 256), dim3(256), 0, 0, dev, N);
  }
  CHECK_HIP(hipGetLastError());
  CHECK_HIP(hipDeviceSynchronize());
  if (check(host)) return 1;
  if (strcmp(mode, "register") == 0) {
    // HIP keeps a record under the host address and one under the device address: both go.
    CHECK_HIP(hipHostUnregister(host));
    free(host);
  }
  printf("PASS\n");
  return 0;
}
