// Kernels written against the HIP headers and built by Debian's hipcc (device libraries,
// HIP's own builtins for indices, shuffles and atomics).
#include <hip/hip_runtime.h>

extern "C" __global__ void hip_math(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    y[4 * i + 0] = sinf(v);
    y[4 * i + 1] = expf(v * 0.25f);
    y[4 * i + 2] = logf(fabsf(v) + 1.0f);
    y[4 * i + 3] = powf(fabsf(v) + 1.0f, 0.75f);
  }
}

extern "C" __global__ void hip_fp64(const double *x, double *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    double v = x[i];
    y[3 * i + 0] = 1.0 / v;
    y[3 * i + 1] = sqrt(fabs(v));
    y[3 * i + 2] = exp(v * 0.1);
  }
}

extern "C" __global__ void hip_reduce(const int *x, int *sum, int n) {
  __shared__ int part[256];
  int t = threadIdx.x;
  int i = blockIdx.x * blockDim.x + t;
  part[t] = i < n ? x[i] : 0;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) part[t] += part[t + s];
    __syncthreads();
  }
  if (t == 0) atomicAdd(sum, part[0]);
}

extern "C" __global__ void hip_shuffle(const int *x, int *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = x[i];
  for (int off = 32; off > 0; off >>= 1) v += __shfl_down(v, off);
  if ((threadIdx.x & 63) == 0) y[i / 64] = v;
}
